//! Bounded buffers (`HttpConfig::stream_buffer`): an SSE stream whose client stops reading
//! holds at most that many events; then the stream is closed instead of growing the server's
//! memory. A request's stream and the GET stream are resumed from the event log with
//! `Last-Event-ID`, losing nothing; a legacy `/sse` stream (not resumable) ends. Through the
//! router (`oneshot`): a body nobody polls is a client that does not read, with no socket
//! buffer in between.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::http::*;
use common::within;
use mcpkit::server::http::HttpConfig;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::Server;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Events a tool sends: ten times the buffer.
const SENT: usize = 40;
const BUFFER: usize = 4;

/// flood (SENT progress notifications on its own stream, then its result); announce (SENT
/// standalone notifications, for the GET stream). Each tells `done` when it has sent them.
fn server(done: mpsc::UnboundedSender<()>) -> Server {
    let done2 = done.clone();
    Server::builder()
        .name("bounded", "1.0.0")
        .tool(ToolDef::new("flood", move |cx: RequestContext| {
            let done = done.clone();
            async move {
                for i in 1..=SENT {
                    cx.progress(i as f64, None, None);
                }
                let _ = done.send(());
                "flooded"
            }
        }))
        .tool(ToolDef::new("announce", move |cx: RequestContext| {
            let done = done2.clone();
            async move {
                for i in 1..=SENT {
                    let _ = cx.peer().notify_raw("notifications/announce", Some(&json!({"n": i})));
                }
                let _ = done.send(());
                "announced"
            }
        }))
        .build()
}

fn endpoint() -> (Mcp, mpsc::UnboundedReceiver<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let config = HttpConfig {
        stream_buffer: BUFFER,
        ..config()
    };
    (in_process(server(tx), config), rx)
}

fn flood_body(id: i64) -> String {
    request(
        id,
        "tools/call",
        json!({"name": "flood", "arguments": {}, "_meta": {"progressToken": "t"}}),
    )
}

/// The JSON of the events that carry data.
fn data_of(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
        .map(SseEvent::json)
        .collect()
}

/// Wait until the tool has sent everything, and a moment for its reply to be routed.
async fn sent_all(done: &mut mpsc::UnboundedReceiver<()>) {
    within("the tool sent its events", done.recv()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn a_request_stream_is_closed_at_its_buffer_and_resumed_from_the_log() {
    let (mcp, mut done) = endpoint();
    let session = mcp.open_session().await;
    let r = send(mcp.post(Some(&session), flood_body(1))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = SseReader::new(r);
    sent_all(&mut done).await;

    // Read only now: the stream ended after what its buffer held, without the result.
    let first = stream.rest().await;
    let first_data = data_of(&first);
    assert!(
        first_data.len() < SENT,
        "{} events were buffered for a client that did not read (buffer {BUFFER})",
        first_data.len()
    );
    assert!(first_data.iter().all(|v| v.get("id").is_none()), "{first_data:?}");

    // Resumed from the last event seen: the rest, then the result; nothing lost or repeated.
    let last = first.last().and_then(|e| e.id.clone()).expect("an event id");
    let r = send(mcp.get(&session).header("last-event-id", &last)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let rest = data_of(&SseReader::new(r).rest().await);
    let all: Vec<Value> = first_data.into_iter().chain(rest).collect();
    let progress: Vec<f64> = all[..all.len() - 1].iter().map(|v| progress_of(v, "t")).collect();
    let expected: Vec<f64> = (1..=SENT).map(|i| i as f64).collect();
    assert_eq!(progress, expected);
    let result = all.last().unwrap();
    assert_eq!(result["id"], 1, "{result}");
    assert_eq!(result_text(result), "flooded", "{result}");
}

#[tokio::test]
async fn the_get_stream_is_closed_at_its_buffer_and_resumed_from_the_log() {
    let (mcp, mut done) = endpoint();
    let session = mcp.open_session().await;
    let r = send(mcp.get(&session)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut get = SseReader::new(r);
    let (status, body) = mcp
        .call(
            Some(&session),
            request(2, "tools/call", json!({"name": "announce", "arguments": {}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    sent_all(&mut done).await;

    let first = get.rest().await;
    let first_data = data_of(&first);
    assert!(
        first_data.len() < SENT,
        "{} events were buffered for a client that did not read (buffer {BUFFER})",
        first_data.len()
    );

    let last = first.last().and_then(|e| e.id.clone()).expect("an event id");
    let r = send(mcp.get(&session).header("last-event-id", &last)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut resumed = SseReader::new(r);
    let mut all = first_data;
    while all.len() < SENT {
        let e = resumed.next().await.expect("the rest of the announcements");
        all.extend(data_of(&[e]));
    }
    let numbers: Vec<u64> = all.iter().map(|v| v["params"]["n"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=SENT as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_legacy_stream_is_closed_at_its_buffer() {
    let (mcp, mut done) = endpoint();
    let r = send(mcp.raw(Method::GET, "/sse").header("accept", "text/event-stream")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = SseReader::new(r);
    let endpoint = sse.next().await.expect("the endpoint event");
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    let messages = endpoint.data.expect("the messages URL");
    let post = |body: String| {
        mcp.raw(Method::POST, &messages)
            .header("content-type", "application/json")
            .body(body)
    };
    for body in [initialize_body(0), INITIALIZED.to_owned(), flood_body(1)] {
        assert_eq!(send(post(body)).await.status(), StatusCode::ACCEPTED);
    }
    sent_all(&mut done).await;

    // The stream ends (nothing can resume it) after what its buffer held.
    let events = data_of(&sse.rest().await);
    assert!(
        events.len() < SENT,
        "{} events were buffered for a client that did not read (buffer {BUFFER})",
        events.len()
    );
    assert!(events.iter().all(|v| v["id"] != 1), "{events:?}");
}
