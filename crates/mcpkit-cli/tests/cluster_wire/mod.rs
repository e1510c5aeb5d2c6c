//! Raw Streamable HTTP for the cluster tests, where a test must see exactly what crosses the
//! balancer: a handshake-era session opened by hand, its GET stream read event by event (ids
//! included, for `Last-Event-ID`), and a shared Redis with instances behind HAProxy.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use mcpkit::client::ConnectMode;
use mcpkit::types::ProtocolVersion;
use mcpkit_test_support::cluster::Cluster;
use mcpkit_test_support::redis::RedisProcess;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// The handshake-era revision the raw sessions speak.
pub const HANDSHAKE: &str = "2025-11-25";

/// A real Redis and three `mcpkit serve --http --redis` instances sharing it behind HAProxy.
pub fn redis_cluster() -> (RedisProcess, Cluster) {
    let redis = RedisProcess::start();
    let cluster = Cluster::builder(env!("CARGO_BIN_EXE_mcpkit"))
        .instances(3)
        .redis(redis.url())
        .start();
    (redis, cluster)
}

/// A 2026-07-28 `tools/call` of `tool` with `arguments`, POSTed to `url` with the headers a
/// conforming client sends.
pub async fn post_stateless_call(
    http: &reqwest::Client,
    url: &str,
    id: u64,
    tool: &str,
    arguments: Value,
) -> reqwest::Response {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" }
            }
        }
    });
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// A POST of `body` to `url` as a handshake-era client sends it.
pub async fn post(http: &reqwest::Client, url: &str, session: Option<&str>, body: &Value) -> reqwest::Response {
    let mut req = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", HANDSHAKE);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    req.body(body.to_string()).send().await.unwrap()
}

/// The `initialize` request of a handshake-era client.
pub fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {},
        "clientInfo": {"name": "cluster-test", "version": "0"}}})
}

/// Open a handshake-era session at `url` (initialize, then `notifications/initialized`); its id.
pub async fn open_session(http: &reqwest::Client, url: &str) -> String {
    let reply = post(http, url, None, &initialize_request()).await;
    assert_eq!(reply.status(), 200, "initialize");
    let session = reply.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = reply.bytes().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(http, url, Some(&session), &initialized).await;
    assert_eq!(reply.status(), 202, "notifications/initialized");
    session
}

pub use mcpkit_test_support::sse::SseEvent;
use mcpkit_test_support::sse::SseParser;

/// A session's GET stream, read in the background.
pub struct EventStream {
    events: mpsc::UnboundedReceiver<SseEvent>,
}

/// What waiting on a stream gave.
#[derive(Debug)]
pub enum Next {
    /// An event.
    Event(SseEvent),
    /// The stream ended (or broke).
    Ended,
    /// Nothing within the wait.
    Quiet,
}

impl EventStream {
    /// `GET url` for `session`, resuming after `last_event_id` when given. Panics unless the
    /// answer is a 200 event stream.
    pub async fn open(http: &reqwest::Client, url: &str, session: &str, last_event_id: Option<&str>) -> EventStream {
        let mut req = http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", HANDSHAKE)
            .header("mcp-session-id", session);
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id);
        }
        let reply = req.send().await.unwrap();
        assert_eq!(reply.status(), 200, "GET stream: {:?}", reply.headers());
        EventStream::read(reply)
    }

    /// `POST url` of `body` for `session`, its answer read as an event stream (a request whose
    /// handler sends something before its result).
    pub async fn post(http: &reqwest::Client, url: &str, session: &str, body: &Value) -> EventStream {
        let reply = post(http, url, Some(session), body).await;
        assert_eq!(reply.status(), 200, "POST: {:?}", reply.headers());
        let sse = reply.headers()["content-type"].to_str().unwrap_or_default();
        assert!(sse.starts_with("text/event-stream"), "an SSE answer: {sse}");
        EventStream::read(reply)
    }

    fn read(mut reply: reqwest::Response) -> EventStream {
        let (tx, events) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut parser = SseParser::default();
            while let Ok(Some(chunk)) = reply.chunk().await {
                parser.push(&chunk);
                // Events with a message only: priming events carry none.
                while let Some(event) = parser.next_event() {
                    if event.has_message() && tx.send(event).is_err() {
                        return;
                    }
                }
            }
        });
        EventStream { events }
    }

    /// The next event with data, waiting at most `wait`.
    pub async fn next(&mut self, wait: Duration) -> Next {
        match tokio::time::timeout(wait, self.events.recv()).await {
            Ok(Some(e)) => Next::Event(e),
            Ok(None) => Next::Ended,
            Err(_) => Next::Quiet,
        }
    }

    /// Every event that arrives until `quiet` passes without one (or the stream ends).
    pub async fn drain(&mut self, quiet: Duration) -> Vec<SseEvent> {
        let mut all = Vec::new();
        while let Next::Event(e) = self.next(quiet).await {
            all.push(e);
        }
        all
    }
}

/// An mcpkit client speaking 2026-07-28 to `url` (no session: every call stands alone).
pub async fn stateless_client(url: &str) -> mcpkit::Client {
    let transport = mcpkit::transport::http_client::HttpClientTransport::new(url).unwrap();
    mcpkit_test_support::within(
        "a 2026-07-28 connection",
        mcpkit::Client::builder()
            .mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28))
            .connect(transport),
    )
    .await
    .unwrap()
}

/// An mcpkit client on a handshake-era session at `url`.
pub async fn handshake_client(url: &str) -> mcpkit::Client {
    let transport = mcpkit::transport::http_client::HttpClientTransport::new(url).unwrap();
    mcpkit_test_support::within("a handshake-era session", mcpkit::Client::builder().connect(transport))
        .await
        .unwrap()
}
