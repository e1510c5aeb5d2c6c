//! A request is answered with plain JSON when its reply is the first thing its handler sends,
//! with an SSE stream when the handler sends anything first (or when `always_sse` says so).
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::http::*;
use mcpkit::server::http::HttpConfig;
use reqwest::StatusCode;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// JSON versus SSE replies.

#[tokio::test]
async fn quick_replies_are_json_and_chatty_ones_are_sse() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;

    let r = send(mcp.post(Some(&s), echo_body(1, "quick"))).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(content_type(&r), "application/json");
    let body = json_body(r).await;
    assert_eq!(body["id"], 1);
    assert_eq!(result_text(&body), "quick");

    let r = send(mcp.post(Some(&s), progress_body(2, "progress", "p2"))).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "cache-control").as_deref(), Some("no-cache"));
    let mut sse = SseReader::new(r);
    let events = sse.rest().await;
    assert!(sse.error.is_none(), "{:?}", sse.error);
    assert_eq!(events.len(), 5, "priming, 3 progress, result: {events:?}");
    assert_priming(&events[0], Some(50));
    let progress: Vec<f64> = events[1..4].iter().map(|e| progress_of(&e.json(), "p2")).collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    let result = events[4].json();
    assert_eq!(result["id"], 2);
    assert_eq!(result_text(&result), "progressed");
    // Every event has its own id; only the first carries retry.
    let mut ids: Vec<&str> = events.iter().map(|e| e.id.as_deref().expect("an id")).collect();
    assert!(events[1..].iter().all(|e| e.retry.is_none()), "{events:?}");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 5, "event ids repeat: {events:?}");

    // A silent handler slower than json_wait gets SSE too (headers early).
    let running2 = start(
        test_server(),
        HttpConfig {
            json_wait: Duration::from_millis(100),
            ..config()
        },
    )
    .await;
    let mcp2 = Mcp::new(&running2.url);
    let s2 = mcp2.open_session().await;
    let r = send(mcp2.post(
        Some(&s2),
        request(3, "tools/call", json!({"name": "slow", "arguments": {}})),
    ))
    .await;
    let events = SseReader::new(r).rest().await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_priming(&events[0], Some(50));
    assert_eq!(result_text(&events[1].json()), "slow done");
    // Once a stream, the reply is recorded like any event: resuming after the priming event
    // replays it, with its id.
    let prime = events[0].id.clone().expect("priming id");
    let r = send(mcp2.get(&s2).header("last-event-id", &prime)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let replayed = SseReader::new(r).rest().await;
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(replayed[0].id, events[1].id);
    assert_eq!(result_text(&replayed[0].json()), "slow done");
}

#[tokio::test]
async fn a_reply_after_its_stream_was_closed_is_kept_for_the_resume() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let r = send(mcp.post(
        Some(&s),
        request(4, "tools/call", json!({"name": "close_then_answer", "arguments": {}})),
    ))
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    // The stream ends after its priming event; the reply waits for the resume.
    let events = SseReader::new(r).rest().await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_priming(&events[0], Some(50));
    let prime = events[0].id.clone().expect("priming id");
    let r = send(mcp.get(&s).header("last-event-id", &prime)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let replayed = SseReader::new(r).rest().await;
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert!(replayed[0].id.is_some(), "{replayed:?}");
    assert_eq!(replayed[0].json()["id"], 4);
    assert_eq!(result_text(&replayed[0].json()), "answered after closing");
}

#[tokio::test]
async fn always_sse_makes_every_reply_a_stream() {
    let running = start(
        test_server(),
        HttpConfig {
            always_sse: true,
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    // initialize itself is answered on a stream.
    let r = send(mcp.post(None, initialize_body(0))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let s = header(&r, "mcp-session-id").expect("session id");
    let events = SseReader::new(r).rest().await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1].json()["result"]["protocolVersion"], VERSION);
    assert_eq!(
        send(mcp.post(Some(&s), INITIALIZED)).await.status(),
        StatusCode::ACCEPTED
    );

    let r = send(mcp.post(Some(&s), echo_body(1, "streamed"))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = SseReader::new(r);
    let events = sse.rest().await;
    assert_eq!(events.len(), 2, "priming, result: {events:?}");
    assert_priming(&events[0], Some(50));
    assert_eq!(events[1].json()["id"], 1);
    assert_eq!(result_text(&events[1].json()), "streamed");
}
