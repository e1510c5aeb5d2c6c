//! What the HTTP tests on one real Redis share: starting an instance of a deployment, waiting
//! for the instances to start, the handshake-era and 2026-07-28 requests, and reading replies
//! and SSE streams.
#![allow(dead_code)]

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::{RedisProcess, RespValue};
use mcpkit_test_support::sse::{SseEvent, SseParser};
use mcpkit_test_support::within;
use serde_json::{json, Value};

/// The handshake-era protocol version the tests speak.
pub(crate) const HANDSHAKE: &str = "2025-11-25";
/// The 2026-07-28 (stateless-era) protocol version.
pub(crate) const STATELESS: &str = "2026-07-28";

/// `http` as instance `id` of the deployment named `deployment` (its key prefix) on `redis`,
/// serving on a free port of 127.0.0.1: its URL.
pub(crate) async fn start_instance(redis: &RedisProcess, deployment: &str, id: &str, http: HttpServer) -> String {
    let backends = RedisBackends::connect(&redis.url(), deployment, id).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(http.scale_out(backends).serve(listener));
    format!("http://{addr}/mcp")
}

/// Wait until `n` instances of `deployment` listen on its broadcast channel (what each
/// subscribes at start).
pub(crate) async fn wait_until_started(redis: &RedisProcess, deployment: &str, n: i64) {
    let channel = format!("{deployment}:bus:all");
    let want = RespValue::Array(vec![RespValue::Bulk(Some(channel.clone())), RespValue::Integer(n)]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while redis.command(&["PUBSUB", "NUMSUB", &channel]).unwrap() != want {
        assert!(std::time::Instant::now() < deadline, "the instances did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// An `initialize` request with id `id`, in the handshake era.
pub(crate) fn initialize_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
}

/// The `notifications/initialized` that completes a handshake.
pub(crate) fn initialized_notification() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// A POST of JSON to `url` that accepts a JSON or an SSE reply.
fn json_post(http: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

/// A handshake-era POST of `body` in `session`, or without one (an `initialize`).
pub(crate) fn handshake_post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut b = json_post(http, url).body(body.to_string());
    if let Some(s) = session {
        b = b.header("mcp-session-id", s).header("mcp-protocol-version", HANDSHAKE);
    }
    b
}

/// A handshake-era POST of `body` in `session`, or an `initialize` without one: the response.
pub(crate) async fn post_handshake(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> reqwest::Response {
    within("an HTTP response", handshake_post(http, url, session, &body).send())
        .await
        .unwrap()
}

/// The `_meta` a 2026-07-28 request carries in its params instead of a handshake.
pub(crate) fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    })
}

/// A 2026-07-28 POST of `frame` (calling `method`, on the item `name` if it has one).
pub(crate) fn stateless_post(
    http: &reqwest::Client,
    url: &str,
    method: &str,
    name: Option<&str>,
    frame: &Value,
) -> reqwest::RequestBuilder {
    let mut b = json_post(http, url)
        .header("mcp-protocol-version", STATELESS)
        .header("mcp-method", method);
    if let Some(n) = name {
        b = b.header("mcp-name", n);
    }
    b.body(frame.to_string())
}

/// A handshake-era GET stream of `session` (resuming after `last_event_id` if given).
pub(crate) async fn open_get_stream(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let mut b = http
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", HANDSHAKE);
    if let Some(last) = last_event_id {
        b = b.header("last-event-id", last);
    }
    within("the GET stream", b.send()).await.unwrap()
}

/// A handshake-era DELETE of `session`: the response.
pub(crate) async fn delete_session(http: &reqwest::Client, url: &str, session: &str) -> reqwest::Response {
    within(
        "a DELETE",
        http.delete(url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", HANDSHAKE)
            .send(),
    )
    .await
    .unwrap()
}

/// The `Mcp-Session-Id` a response names, if any.
pub(crate) fn session_id_of(r: &reqwest::Response) -> Option<String> {
    r.headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned())
}

/// The JSON-RPC reply of a POST (plain JSON, or the last message of an SSE reply).
pub(crate) async fn reply(r: reqwest::Response) -> Value {
    let text = within("a body", r.text()).await.unwrap();
    mcpkit_test_support::sse::reply_of(&text)
}

/// Reads SSE events off a response, chunk by chunk (the shared parser of mcpkit-test-support).
pub(crate) struct SseReader {
    response: reqwest::Response,
    parser: SseParser,
}

impl SseReader {
    /// A reader of `response`'s body.
    pub(crate) fn new(response: reqwest::Response) -> Self {
        SseReader {
            response,
            parser: SseParser::default(),
        }
    }

    /// The next event, or `None` once the stream ends (each chunk waited for within the step
    /// timeout).
    pub(crate) async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.parser.next_event() {
                return Some(event);
            }
            let chunk = within("an SSE chunk", self.response.chunk()).await.ok()??;
            self.parser.push(&chunk);
        }
    }

    /// The methods of the JSON-RPC messages that arrive within `wait` (the stream must stay
    /// open).
    pub(crate) async fn methods_within(&mut self, wait: Duration) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut methods = Vec::new();
        loop {
            while let Some(event) = self.parser.next_event() {
                methods.extend(event.method());
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.parser.push(&chunk),
                Ok(_) => panic!("the GET stream ended"),
                Err(_) => return methods,
            }
        }
    }
}
