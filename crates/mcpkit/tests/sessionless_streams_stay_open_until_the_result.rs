//! Sessionless mode (`HttpConfig::sessionless`): a request answered with an SSE stream keeps
//! that stream open until its result — notifications sent first (progress, logs), a handler
//! slower than `json_wait`, or a handler asking to close its stream never lose the result, since
//! there is no session to resume on. A client that goes away ends the request. Over a real
//! socket: the stream's lifetime is the point.
#![cfg(all(
    feature = "http-server",
    feature = "http-client",
    feature = "client",
    feature = "server"
))]

use crate::common;

use std::time::Duration;

use common::http::*;
use common::within;
use mcpkit::client::CallOptions;
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::schema::LoggingLevel;
use mcpkit::{Client, Server};
use reqwest::StatusCode;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

/// Sent by `forever` when its handler is dropped (cancelled).
struct OnDrop(Option<oneshot::Sender<()>>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// report (progress, a log message, a pause, progress, then its result); slow (silent, then
/// answers after 300 ms); close_then_answer (asks to end its stream, then answers); forever
/// (never answers; tells `dropped` when it is cancelled).
fn server(dropped: mpsc::UnboundedSender<oneshot::Receiver<()>>) -> Server {
    Server::builder()
        .name("sessionless", "1.0.0")
        .tool(ToolDef::new("report", |cx: RequestContext| async move {
            cx.progress(1.0, Some(2.0), Some("half"));
            cx.log(LoggingLevel::Info, Some("report"), "working").unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            cx.progress(2.0, Some(2.0), Some("all"));
            "reported"
        }))
        .tool(ToolDef::new("slow", || async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            "slow done"
        }))
        .tool(ToolDef::new("close_then_answer", |cx: RequestContext| async move {
            cx.close_response_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            "answered after closing"
        }))
        .tool(ToolDef::new("forever", move || {
            let (tx, rx) = oneshot::channel();
            let _ = dropped.send(rx);
            async move {
                let _guard = OnDrop(Some(tx));
                std::future::pending::<()>().await;
                "never"
            }
        }))
        .build()
}

fn sessionless() -> HttpConfig {
    HttpConfig {
        sessionless: true,
        // A silent handler switches to SSE soon, so `slow` is answered on a stream.
        json_wait: Duration::from_millis(50),
        ..config()
    }
}

async fn serve() -> (Served, mpsc::UnboundedReceiver<oneshot::Receiver<()>>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let served = Served::start(HttpServer::new(server(tx)).config(sessionless())).await;
    (served, rx)
}

fn call_body(id: i64, tool: &str) -> String {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"progressToken": "t"}}),
    )
}

/// A raw sessionless POST of `tool`: its SSE stream, read to the end.
async fn stream_of(mcp: &Mcp, id: i64, tool: &str) -> Vec<SseEvent> {
    let r = send(
        mcp.post(None, call_body(id, tool))
            .header("mcp-protocol-version", VERSION),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "mcp-session-id").is_none());
    let mut events = SseReader::new(r);
    let all = events.rest().await;
    assert!(events.error.is_none(), "{tool}: the stream broke: {:?}", events.error);
    all
}

#[tokio::test]
async fn notifications_then_the_result_on_one_stream() {
    let (served, _) = serve().await;
    let mcp = Mcp::new(&served.url);
    let events = stream_of(&mcp, 1, "report").await;
    let data: Vec<_> = events.iter().filter(|e| e.data.as_deref() != Some("")).collect();
    assert_eq!(data.len(), 4, "progress, log, progress, result: {events:?}");
    assert_eq!(progress_of(&data[0].json(), "t"), 1.0);
    let log = data[1].json();
    assert_eq!(log["method"], "notifications/message", "{log}");
    assert_eq!(log["params"]["data"], "working", "{log}");
    assert_eq!(progress_of(&data[2].json(), "t"), 2.0);
    let result = data[3].json();
    assert_eq!(result["id"], 1, "{result}");
    assert_eq!(result_text(&result), "reported", "{result}");
}

#[tokio::test]
async fn a_handler_slower_than_json_wait_is_answered_on_its_stream() {
    let (served, _) = serve().await;
    let mcp = Mcp::new(&served.url);
    let events = stream_of(&mcp, 2, "slow").await;
    let last = events.last().expect("events").json();
    assert_eq!(last["id"], 2, "{last}");
    assert_eq!(result_text(&last), "slow done", "{last}");
}

#[tokio::test]
async fn a_request_to_close_the_stream_is_ignored_without_a_session() {
    // There is no session to resume on: closing the stream would lose the result. So the POST
    // is answered as if the handler had not asked (plain JSON or a stream, by timing).
    let (served, _) = serve().await;
    let mcp = Mcp::new(&served.url);
    let r = send(
        mcp.post(None, call_body(3, "close_then_answer"))
            .header("mcp-protocol-version", VERSION),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    let last = if content_type(&r) == "text/event-stream" {
        let mut events = SseReader::new(r);
        let all = events.rest().await;
        assert!(events.error.is_none(), "the stream broke: {:?}", events.error);
        all.last().expect("events").json()
    } else {
        json_body(r).await
    };
    assert_eq!(last["id"], 3, "{last}");
    assert_eq!(result_text(&last), "answered after closing", "{last}");
}

#[tokio::test]
async fn a_client_that_goes_away_ends_its_request() {
    let (served, mut dropped) = serve().await;
    let mcp = Mcp::new(&served.url);
    let r = send(
        mcp.post(None, call_body(4, "forever"))
            .header("mcp-protocol-version", VERSION),
    )
    .await;
    let mut events = SseReader::new(r);
    // The priming event: the handler runs and the stream is open.
    let prime = events.next().await.expect("a priming event");
    assert_eq!(prime.data.as_deref(), Some(""), "{prime:?}");
    let cancelled = within("the handler started", dropped.recv())
        .await
        .expect("forever ran");
    drop(events);
    within("the handler was cancelled", cancelled).await.unwrap();
}

#[tokio::test]
async fn the_mcpkit_client_gets_the_result_and_its_progress() {
    let (served, _) = serve().await;
    let transport = HttpClientTransport::new(&served.url).unwrap();
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let r = within("report", client.call_tool_with("report", (), options))
        .await
        .unwrap();
    assert_eq!(r.content.first().and_then(|c| c.as_text()), Some("reported"));
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push(p.progress);
    }
    assert_eq!(got, [1.0, 2.0]);
    let r = within("slow", client.call_tool("slow", ())).await.unwrap();
    assert_eq!(r.content.first().and_then(|c| c.as_text()), Some("slow done"));
}
