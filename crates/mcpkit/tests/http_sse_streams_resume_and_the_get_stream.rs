//! SSE streams resume with `Last-Event-ID` without loss or duplication (and only the stream
//! the id names); the standalone GET stream, one per session, and turned off by config.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::assert_error;
use common::http::*;
use mcpkit::server::http::HttpConfig;
use mcpkit::server::ToolDef;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Resumption.

#[tokio::test]
async fn a_dropped_response_stream_resumes_without_loss_or_duplication() {
    a_dropped_response_stream_resumes_without_loss_or_duplication_over(Over::Tcp).await;
}

#[tokio::test]
async fn a_dropped_response_stream_resumes_without_loss_or_duplication_over_a_unix_socket() {
    a_dropped_response_stream_resumes_without_loss_or_duplication_over(Over::Unix).await;
}

async fn a_dropped_response_stream_resumes_without_loss_or_duplication_over(over: Over) {
    let (mcp, _served) = over.endpoint(test_server(), config()).await;
    let s = mcp.open_session().await;

    for keep in [2usize, 3] {
        let token = format!("t{keep}");
        let id = 10 + i64::try_from(keep).unwrap();
        let r = send(mcp.post(Some(&s), progress_body(id, "ten", &token))).await;
        let mut sse = SseReader::new(r);
        let prime = sse.next().await.expect("priming event");
        assert_priming(&prime, Some(50));
        let mut seen = Vec::new();
        let mut last = prime.id.clone().unwrap();
        for _ in 0..keep {
            let e = sse.next().await.expect("a progress event");
            seen.push(progress_of(&e.json(), &token));
            last = e.id.clone().expect("an event id");
        }
        drop(sse);

        let r = send(mcp.get(&s).header("last-event-id", &last)).await;
        assert_eq!(r.status(), StatusCode::OK);
        let mut resumed = SseReader::new(r);
        let rest = resumed.rest().await;
        assert!(resumed.error.is_none(), "{:?}", resumed.error);
        let (result, progress) = rest.split_last().expect("at least the result");
        for e in progress {
            seen.push(progress_of(&e.json(), &token));
        }
        let want: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(seen, want, "kept {keep}, resumed after {last}: {rest:?}");
        let result = result.json();
        assert_eq!(result["id"], id);
        assert_eq!(result_text(&result), "ten done");
        // A resumed stream carries no new priming event, and every event keeps its id.
        assert!(rest.iter().all(|e| e.id.is_some() && e.data.as_deref() != Some("")));
    }
}

#[tokio::test]
async fn a_last_event_id_of_another_stream_replays_nothing_of_this_one() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;

    // Stream B: answered completely.
    let r = send(mcp.post(Some(&s), progress_body(1, "progress", "b"))).await;
    let b_events = SseReader::new(r).rest().await;
    assert_eq!(b_events.len(), 5);
    let b_last = b_events[4].id.clone().unwrap();
    let b_prime = b_events[0].id.clone().unwrap();

    // Stream A: dropped after its first progress event.
    let r = send(mcp.post(Some(&s), progress_body(2, "ten", "a"))).await;
    let mut a = SseReader::new(r);
    a.next().await.expect("A's priming event");
    let a1 = a.next().await.expect("A's first progress");
    assert_eq!(progress_of(&a1.json(), "a"), 1.0);
    let a_last = a1.id.clone().unwrap();
    drop(a);

    // Resuming B after its last event: nothing (B is finished), and nothing of A.
    let r = send(mcp.get(&s).header("last-event-id", &b_last)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let got = SseReader::new(r).rest().await;
    assert!(got.is_empty(), "replayed after B's last event: {got:?}");

    // Resuming B after its priming event: B's own events again, still nothing of A.
    let r = send(mcp.get(&s).header("last-event-id", &b_prime)).await;
    let got = SseReader::new(r).rest().await;
    let frames: Vec<Value> = got.iter().map(SseEvent::json).collect();
    assert_eq!(frames.len(), 4, "{frames:?}");
    for f in &frames[..3] {
        progress_of(f, "b");
    }
    assert_eq!(frames[3]["id"], 1);

    // A itself still resumes completely.
    let r = send(mcp.get(&s).header("last-event-id", &a_last)).await;
    let rest = SseReader::new(r).rest().await;
    let (result, progress) = rest.split_last().unwrap();
    let seen: Vec<f64> = progress.iter().map(|e| progress_of(&e.json(), "a")).collect();
    assert_eq!(seen, (2..=10).map(f64::from).collect::<Vec<_>>());
    assert_eq!(result.json()["id"], 2);
}

// ---------------------------------------------------------------------------------------------
// The standalone GET stream.

#[tokio::test]
async fn the_get_stream() {
    the_get_stream_over(Over::Tcp).await;
}

#[tokio::test]
async fn the_get_stream_over_a_unix_socket() {
    the_get_stream_over(Over::Unix).await;
}

async fn the_get_stream_over(over: Over) {
    let server = test_server();
    let (mcp, _served) = over.endpoint(server.clone(), config()).await;
    let s = mcp.open_session().await;
    // The ping is answered after notifications/initialized has been handled.
    mcp.assert_serves(&s, "initialized").await;

    let r = send(mcp.get(&s)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = SseReader::new(r);
    let prime = stream.next().await.expect("priming event");
    assert_priming(&prime, Some(50));

    // A second one while the first is open: 409.
    let r = send(mcp.get(&s)).await;
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_error(&json_body(r).await, -32600, &Value::Null);

    // Without text/event-stream in Accept: 406.
    let r = send(mcp.get_with(&s, &[("accept", Some("application/json"))])).await;
    assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE);
    assert_error(&json_body(r).await, -32600, &Value::Null);

    // Without a session: 400; unknown session: 404.
    let r = send(mcp.raw(Method::GET, "/mcp").header("accept", "text/event-stream")).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = send(mcp.get("0123456789abcdef0123456789abcdef")).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    // Run-time changes arrive on it.
    server.add_tool(ToolDef::new("added", || async { "new" }));
    let e = stream.next().await.expect("tools/list_changed");
    assert!(e.id.is_some());
    assert_eq!(
        e.json(),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );

    // Once the client drops it, a new GET is accepted again.
    drop(stream);
    let mut reopened = None;
    for _ in 0..40 {
        let r = send(mcp.get(&s)).await;
        if r.status() == StatusCode::OK {
            reopened = Some(r);
            break;
        }
        assert_eq!(r.status(), StatusCode::CONFLICT);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let r = reopened.expect("a new GET after dropping the old one");
    let mut stream = SseReader::new(r);
    assert_priming(&stream.next().await.unwrap(), Some(50));
}

#[tokio::test]
async fn get_stream_can_be_disabled() {
    let running = start(
        test_server(),
        HttpConfig {
            enable_get_stream: false,
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let r = send(mcp.get(&s)).await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&r, "allow").as_deref(), Some("GET, POST, DELETE"));
    assert_error(&json_body(r).await, -32600, &Value::Null);
    mcp.assert_serves(&s, "405").await;
    // Other methods: 405 as well.
    let r = send(mcp.raw(Method::PUT, "/mcp").header("mcp-session-id", &s)).await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
}
