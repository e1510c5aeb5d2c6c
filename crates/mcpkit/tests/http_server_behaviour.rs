//! The Streamable HTTP server seen from the wire: raw HTTP requests (reqwest) against
//! `HttpServer::serve` on 127.0.0.1, pinning exact statuses, headers and JSON-RPC error bodies —
//! session lifecycle and expiry, bad POST input, Host/Origin checks, JSON versus SSE replies,
//! loss- and duplicate-free resumption with `Last-Event-ID`, the standalone GET stream, many
//! concurrent sessions, the session limit, stateless mode, graceful shutdown and the legacy
//! HTTP+SSE endpoints.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use common::http::Served;
use common::{assert_error, within};
use futures_util::{Stream, StreamExt};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{Args, RequestContext, ToolDef};
use mcpkit::Server;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};

const VERSION: &str = "2025-11-25";

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// echo; progress (three steps, 5 ms apart); ten (ten steps, 30 ms apart); slow (answers after
/// 400 ms, silently).
fn test_server() -> Server {
    Server::builder()
        .name("http-behaviour", "1.0.0")
        .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.text }))
        .tool(ToolDef::new("progress", |cx: RequestContext| async move {
            for i in 1..=3 {
                cx.progress(f64::from(i), Some(3.0), None).unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            "progressed"
        }))
        .tool(ToolDef::new("ten", |cx: RequestContext| async move {
            for i in 1..=10 {
                cx.progress(f64::from(i), Some(10.0), None).unwrap();
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
            "ten done"
        }))
        .tool(ToolDef::new("slow", || async {
            tokio::time::sleep(Duration::from_millis(400)).await;
            "slow done"
        }))
        // Ends its response stream and answers at once, before the POST's reply has started.
        .tool(ToolDef::new("close_then_answer", |cx: RequestContext| async move {
            cx.close_response_stream();
            "answered after closing"
        }))
        .build()
}

fn config() -> HttpConfig {
    HttpConfig {
        sse_retry: Duration::from_millis(50),
        ..HttpConfig::default()
    }
}

async fn start(server: Server, config: HttpConfig) -> Served {
    Served::start(HttpServer::new(server).config(config).sse_legacy(true)).await
}

/// Raw requests to one server.
struct Mcp {
    http: reqwest::Client,
    url: String,
}

fn request(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn initialize_body(id: i64) -> String {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw-http-test", "version": "0"}
        }),
    )
}

fn echo_body(id: i64, text: &str) -> String {
    request(id, "tools/call", json!({"name": "echo", "arguments": {"text": text}}))
}

/// A `tools/call` of `tool` asking for progress under `token`.
fn progress_body(id: i64, tool: &str, token: &str) -> String {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"progressToken": token}}),
    )
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

impl Mcp {
    fn new(url: &str) -> Mcp {
        Mcp {
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    /// A POST as a well-behaved client sends it (with the session's headers when given one).
    fn post(&self, session: Option<&str>, body: impl Into<reqwest::Body>) -> reqwest::RequestBuilder {
        self.post_with(session, body, &[])
    }

    /// [`Mcp::post`] with some headers replaced (`Some`) or left out (`None`). (reqwest's
    /// `header` appends, so a later call cannot replace a default.)
    fn post_with(
        &self,
        session: Option<&str>,
        body: impl Into<reqwest::Body>,
        overrides: &[(&str, Option<&str>)],
    ) -> reqwest::RequestBuilder {
        let mut headers = vec![
            ("content-type", Some("application/json")),
            ("accept", Some("application/json, text/event-stream")),
        ];
        if let Some(s) = session {
            headers.push(("mcp-session-id", Some(s)));
            headers.push(("mcp-protocol-version", Some(VERSION)));
        }
        with_headers(self.http.post(&self.url), headers, overrides).body(body)
    }

    fn get(&self, session: &str) -> reqwest::RequestBuilder {
        self.get_with(session, &[])
    }

    fn get_with(&self, session: &str, overrides: &[(&str, Option<&str>)]) -> reqwest::RequestBuilder {
        let headers = vec![
            ("accept", Some("text/event-stream")),
            ("mcp-session-id", Some(session)),
            ("mcp-protocol-version", Some(VERSION)),
        ];
        with_headers(self.http.get(&self.url), headers, overrides)
    }

    fn delete(&self, session: &str) -> reqwest::RequestBuilder {
        self.http
            .delete(&self.url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION)
    }

    /// initialize + notifications/initialized; the session id.
    async fn open_session(&self) -> String {
        let r = send(self.post(None, initialize_body(0))).await;
        assert_eq!(r.status(), StatusCode::OK);
        let session = header(&r, "mcp-session-id").expect("an Mcp-Session-Id");
        let body = json_body(r).await;
        assert_eq!(body["result"]["protocolVersion"], VERSION, "{body}");
        let r = send(self.post(Some(&session), INITIALIZED)).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        session
    }

    /// A request answered with plain JSON: the status and the body.
    async fn call(&self, session: Option<&str>, body: String) -> (StatusCode, Value) {
        let r = send(self.post(session, body)).await;
        let status = r.status();
        (status, json_body(r).await)
    }

    /// A ping on `session` must get 200 and an empty result.
    async fn assert_serves(&self, session: &str, after: &str) {
        let (status, body) = self.call(Some(session), request(900, "ping", json!({}))).await;
        assert_eq!(status, StatusCode::OK, "after {after}: {body}");
        assert_eq!(
            body,
            json!({"jsonrpc": "2.0", "id": 900, "result": {}}),
            "after {after}"
        );
    }
}

fn with_headers<'a>(
    mut b: reqwest::RequestBuilder,
    mut headers: Vec<(&'a str, Option<&'a str>)>,
    overrides: &[(&'a str, Option<&'a str>)],
) -> reqwest::RequestBuilder {
    for (name, value) in overrides {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name, *value));
    }
    for (name, value) in headers {
        if let Some(v) = value {
            b = b.header(name, v);
        }
    }
    b
}

async fn send(b: reqwest::RequestBuilder) -> reqwest::Response {
    within("an HTTP response", b.send()).await.expect("HTTP request")
}

fn header(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().expect("a visible-ASCII header").to_owned())
}

fn content_type(r: &reqwest::Response) -> String {
    header(r, "content-type").unwrap_or_default()
}

async fn json_body(r: reqwest::Response) -> Value {
    let ct = content_type(&r);
    let bytes = within("a response body", r.bytes()).await.unwrap();
    assert!(
        ct.starts_with("application/json"),
        "content-type {ct:?}, body {bytes:?}"
    );
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"))
}

/// The text of a `tools/call` result.
fn result_text(v: &Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------------------------
// A small SSE reader: whole events, comments skipped.

#[derive(Debug, Default, Clone)]
struct SseEvent {
    id: Option<String>,
    retry: Option<u64>,
    event: Option<String>,
    /// `Some("")` for an empty `data:` line.
    data: Option<String>,
}

impl SseEvent {
    fn json(&self) -> Value {
        let data = self.data.as_deref().expect("an event with data");
        serde_json::from_str(data).unwrap_or_else(|e| panic!("event data is not JSON ({e}): {data:?}"))
    }
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

struct SseReader {
    stream: ByteStream,
    buf: Vec<u8>,
    /// Set when the body ended with an error rather than cleanly.
    error: Option<String>,
}

impl SseReader {
    fn new(r: reqwest::Response) -> SseReader {
        assert_eq!(content_type(&r), "text/event-stream");
        SseReader {
            stream: Box::pin(r.bytes_stream()),
            buf: Vec::new(),
            error: None,
        }
    }

    /// The next event, or `None` when the stream ends.
    async fn next(&mut self) -> Option<SseEvent> {
        within("an SSE event", self.next_untimed()).await
    }

    async fn next_untimed(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..end + 2).collect();
                let text = String::from_utf8(block).expect("UTF-8 SSE");
                let mut e = SseEvent::default();
                let mut any = false;
                for line in text.lines() {
                    if line.is_empty() || line.starts_with(':') {
                        continue;
                    }
                    any = true;
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "id" => e.id = Some(value.to_owned()),
                        "retry" => e.retry = Some(value.parse().expect("numeric retry")),
                        "event" => e.event = Some(value.to_owned()),
                        "data" => match &mut e.data {
                            Some(d) => {
                                d.push('\n');
                                d.push_str(value);
                            }
                            None => e.data = Some(value.to_owned()),
                        },
                        other => panic!("unexpected SSE field {other:?}"),
                    }
                }
                if any {
                    return Some(e);
                }
                continue;
            }
            match self.stream.next().await {
                Some(Ok(chunk)) => self.buf.extend_from_slice(&chunk.to_vec().replace_crlf()),
                Some(Err(e)) => {
                    self.error = Some(e.to_string());
                    return None;
                }
                None => return None,
            }
        }
    }

    /// Every remaining event until the stream ends.
    async fn rest(&mut self) -> Vec<SseEvent> {
        let mut all = Vec::new();
        while let Some(e) = self.next().await {
            all.push(e);
        }
        all
    }
}

trait ReplaceCrlf {
    fn replace_crlf(self) -> Vec<u8>;
}

impl ReplaceCrlf for Vec<u8> {
    fn replace_crlf(self) -> Vec<u8> {
        if !self.contains(&b'\r') {
            return self;
        }
        String::from_utf8_lossy(&self)
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .into_bytes()
    }
}

/// A priming event: an id, the configured `retry`, and an empty `data:` line.
fn assert_priming(e: &SseEvent, retry_ms: Option<u64>) {
    assert!(e.id.as_deref().is_some_and(|id| !id.is_empty()), "no id: {e:?}");
    assert_eq!(e.retry, retry_ms, "{e:?}");
    assert_eq!(e.data.as_deref(), Some(""), "{e:?}");
}

/// The `progress` value of a progress notification under `token`.
fn progress_of(v: &Value, token: &str) -> f64 {
    assert_eq!(v["method"], "notifications/progress", "{v}");
    assert_eq!(v["params"]["progressToken"], token, "{v}");
    v["params"]["progress"].as_f64().expect("a progress number")
}

// ---------------------------------------------------------------------------------------------
// Session lifecycle.

#[tokio::test]
async fn session_ids_missing_unknown_and_deleted_sessions() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);

    let mut ids = Vec::new();
    for _ in 0..3 {
        let r = send(mcp.post(None, initialize_body(1))).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(content_type(&r), "application/json");
        let id = header(&r, "mcp-session-id").expect("Mcp-Session-Id on the initialize reply");
        assert!(id.len() >= 32, "short session id {id:?}");
        assert!(
            id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "session id {id:?} is not visible ASCII"
        );
        let body = json_body(r).await;
        assert_eq!(body["id"], 1);
        assert_eq!(body["result"]["serverInfo"]["name"], "http-behaviour");
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "session ids repeat: {ids:?}");

    let session = mcp.open_session().await;
    mcp.assert_serves(&session, "initialize").await;

    // No Mcp-Session-Id: 400.
    let (status, body) = mcp.call(None, request(2, "tools/list", json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &Value::Null);

    // An id the server never issued: 404.
    let (status, body) = mcp
        .call(
            Some("0123456789abcdef0123456789abcdef"),
            request(3, "tools/list", json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, -32600, &Value::Null);

    // initialize must not carry a session id.
    let (status, body) = mcp.call(Some(&session), initialize_body(4)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &json!(4));
    mcp.assert_serves(&session, "a second initialize").await;

    // DELETE ends the session: 200, then 404 for everything.
    let r = send(mcp.delete(&session)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let (status, body) = mcp.call(Some(&session), request(5, "ping", json!({}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, -32600, &Value::Null);
    assert_eq!(send(mcp.delete(&session)).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(send(mcp.get(&session)).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn idle_sessions_expire_and_busy_ones_do_not() {
    let running = start(
        test_server(),
        HttpConfig {
            session_idle_timeout: Duration::from_millis(200),
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let idle = mcp.open_session().await;
    let busy = mcp.open_session().await;
    // `busy` sends something every 100 ms for 1 s; `idle` sends nothing.
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        mcp.assert_serves(&busy, "100 ms of idleness").await;
    }
    let (status, body) = mcp.call(Some(&idle), request(1, "ping", json!({}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_error(&body, -32600, &Value::Null);
}

/// A request that outlasts the idle timeout must not leave its session expired the moment it
/// is answered: idleness counts from the end of the last activity, not its start.
#[tokio::test]
async fn a_session_is_not_expired_right_after_a_long_request() {
    let running = start(
        test_server(),
        HttpConfig {
            session_idle_timeout: Duration::from_millis(200),
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let session = mcp.open_session().await;
    // `slow` takes 400 ms, twice the idle timeout (and under json_wait: a JSON reply).
    let (status, body) = mcp
        .call(
            Some(&session),
            request(1, "tools/call", json!({"name": "slow", "arguments": {}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(result_text(&body), "slow done");
    // 100 ms after the reply the session has been idle for 100 ms, half the timeout.
    tokio::time::sleep(Duration::from_millis(100)).await;
    mcp.assert_serves(&session, "a 400 ms request and 100 ms of idleness")
        .await;
}

/// Likewise a GET stream that stayed open, silent, for longer than the idle timeout: once it
/// closes, the session has been idle for no time at all.
#[tokio::test]
async fn a_session_is_not_expired_right_after_its_get_stream_closes() {
    let running = start(
        test_server(),
        HttpConfig {
            session_idle_timeout: Duration::from_millis(200),
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let session = mcp.open_session().await;
    let r = send(mcp.get(&session)).await;
    let mut stream = SseReader::new(r);
    assert_priming(&stream.next().await.unwrap(), Some(50));
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(stream);
    tokio::time::sleep(Duration::from_millis(100)).await;
    mcp.assert_serves(&session, "a silent 500 ms GET stream, closed 100 ms ago")
        .await;
}

// ---------------------------------------------------------------------------------------------
// Bad POST input.

#[tokio::test]
async fn bad_posts_get_exact_errors_and_the_session_survives() {
    let running = start(
        test_server(),
        HttpConfig {
            max_body_bytes: 1024,
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let s = s.as_str();

    // Malformed JSON: 400, -32700, id null.
    let (status, body) = mcp.call(Some(s), r#"{"jsonrpc":"2.0","id":1,"#.to_owned()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32700, &Value::Null);
    mcp.assert_serves(s, "malformed JSON").await;

    // A batch: 400, -32600, id null.
    let batch = format!("[{}]", request(2, "ping", json!({})));
    let (status, body) = mcp.call(Some(s), batch).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &Value::Null);
    mcp.assert_serves(s, "a batch").await;

    // Wrong Content-Type: 415; none at all: 415 too.
    for ct in [Some("text/plain"), Some("application/jsonx"), None] {
        let r = send(mcp.post_with(Some(s), request(3, "ping", json!({})), &[("content-type", ct)])).await;
        assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type: {ct:?}");
        assert_error(&json_body(r).await, -32600, &Value::Null);
    }
    // `application/json; charset=utf-8` is JSON.
    let r = send(mcp.post_with(
        Some(s),
        request(3, "ping", json!({})),
        &[("content-type", Some("Application/JSON; charset=utf-8"))],
    ))
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    mcp.assert_serves(s, "415").await;

    // Accept without both types: 406. (With no Accept at all reqwest sends `*/*`.)
    for accept in [Some("application/json"), Some("text/event-stream"), Some("text/html")] {
        let r = send(mcp.post_with(Some(s), request(4, "ping", json!({})), &[("accept", accept)])).await;
        assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE, "Accept: {accept:?}");
        assert_error(&json_body(r).await, -32600, &Value::Null);
    }
    // Both, in two headers or with parameters, or */*: fine.
    for accept in ["application/json;q=0.9, text/event-stream;q=1", "*/*"] {
        let r = send(mcp.post_with(Some(s), request(4, "ping", json!({})), &[("accept", Some(accept))])).await;
        assert_eq!(r.status(), StatusCode::OK, "Accept: {accept}");
    }
    mcp.assert_serves(s, "406").await;

    // A body over max_body_bytes: 413, with Content-Length and chunked.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8 * 1024)
    );
    let r = send(mcp.post(Some(s), big.clone())).await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    mcp.assert_serves(s, "413 with Content-Length").await;
    let chunks: Vec<Result<Bytes, std::io::Error>> = big
        .as_bytes()
        .chunks(512)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let r = send(mcp.post(Some(s), reqwest::Body::wrap_stream(futures_util::stream::iter(chunks)))).await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    mcp.assert_serves(s, "413 chunked").await;
    // Exactly at the limit is fine.
    let pad = 1024 - r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":""}}"#.len();
    let exact = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(pad)
    );
    assert_eq!(exact.len(), 1024);
    let (status, body) = mcp.call(Some(s), exact).await;
    assert_eq!(
        (status, &body),
        (StatusCode::OK, &json!({"jsonrpc":"2.0","id":6,"result":{}}))
    );

    // An unsupported MCP-Protocol-Version: 400 with the request's id.
    let r = send(mcp.post_with(
        Some(s),
        request(7, "ping", json!({})),
        &[("mcp-protocol-version", Some("1999-01-01"))],
    ))
    .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_error(&json_body(r).await, -32600, &json!(7));
    mcp.assert_serves(s, "an unsupported version").await;

    // A notification, and a response to nothing: 202 with an empty body.
    for frame in [
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        r#"{"jsonrpc":"2.0","id":"never-asked","result":{}}"#,
    ] {
        let r = send(mcp.post(Some(s), frame)).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED, "{frame}");
        let bytes = within("202 body", r.bytes()).await.unwrap();
        assert!(bytes.is_empty(), "202 with a body: {bytes:?}");
        mcp.assert_serves(s, frame).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Host and Origin (DNS rebinding).

#[tokio::test]
async fn host_and_origin_are_checked() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let port = running.addr.port();

    let r = send(mcp.post(None, initialize_body(1)).header("host", "evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    let r = send(
        mcp.post(None, initialize_body(1))
            .header("host", format!("evil.example.com:{port}")),
    )
    .await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);

    let r = send(
        mcp.post(None, initialize_body(1))
            .header("origin", "http://evil.example.com"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    let r = send(mcp.post(None, initialize_body(1)).header("origin", "null")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // GET and DELETE are checked too, before anything else.
    let session = mcp.open_session().await;
    let r = send(mcp.get(&session).header("host", "evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    let r = send(mcp.delete(&session).header("origin", "http://evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    mcp.assert_serves(&session, "refused DELETE").await;

    // The legacy endpoints too.
    let r = send(
        mcp.http
            .get(format!("http://{}/sse", running.addr))
            .header("host", "evil.example.com"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);

    let r = send(
        mcp.post(None, initialize_body(1))
            .header("origin", "http://localhost:5173"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
    ] {
        let r = send(mcp.post(None, initialize_body(1)).header("host", &host)).await;
        assert_eq!(r.status(), StatusCode::OK, "Host: {host}");
        assert!(header(&r, "mcp-session-id").is_some());
    }
}

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

// ---------------------------------------------------------------------------------------------
// Resumption.

#[tokio::test]
async fn a_dropped_response_stream_resumes_without_loss_or_duplication() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
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
    let server = test_server();
    let running = start(server.clone(), config()).await;
    let mcp = Mcp::new(&running.url);
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
    let r = send(mcp.http.get(&mcp.url).header(ACCEPT, "text/event-stream")).await;
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
    let r = send(mcp.http.put(&mcp.url).header("mcp-session-id", &s)).await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
}

// ---------------------------------------------------------------------------------------------
// Duplicate in-flight ids.

#[tokio::test]
async fn a_duplicate_in_flight_id_is_refused_with_that_id() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    // Request 7 is in flight once its stream's headers are here.
    let r = send(mcp.post(Some(&s), progress_body(7, "ten", "dup"))).await;
    let mut first = SseReader::new(r);
    first.next().await.expect("priming");

    let (status, body) = mcp.call(Some(&s), request(7, "ping", json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &json!(7));
    // The string "7" is a different id.
    let (status, body) = mcp
        .call(Some(&s), r#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#.to_owned())
        .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"jsonrpc":"2.0","id":"7","result":{}}))
    );

    // The first request is unharmed.
    let rest = first.rest().await;
    let last = rest.last().unwrap().json();
    assert_eq!(last["id"], 7);
    assert_eq!(result_text(&last), "ten done");
    assert_eq!(rest.len(), 11, "10 progress, result: {rest:?}");
    // Once answered, the id may be used again.
    let (status, body) = mcp.call(Some(&s), request(7, "ping", json!({}))).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"jsonrpc":"2.0","id":7,"result":{}}))
    );
}

// ---------------------------------------------------------------------------------------------
// Load and limits.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_sessions_of_five_concurrent_calls() {
    let running = start(test_server(), config()).await;
    let mcp = std::sync::Arc::new(Mcp::new(&running.url));
    let sessions = (0..100).map(|n| {
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let s = mcp.open_session().await;
            let calls = (0..5).map(|c| {
                let (mcp, s) = (mcp.clone(), s.clone());
                async move {
                    let text = format!("session {n} call {c}");
                    let (status, body) = mcp.call(Some(&s), echo_body(c, &text)).await;
                    assert_eq!(status, StatusCode::OK, "{body}");
                    assert_eq!(body["id"], c);
                    assert_eq!(result_text(&body), text);
                }
            });
            futures_util::future::join_all(calls).await.len()
        })
    });
    let answered: usize = within("500 calls", futures_util::future::join_all(sessions))
        .await
        .into_iter()
        .map(|r| r.expect("a session task"))
        .sum();
    assert_eq!(answered, 500);
}

#[tokio::test]
async fn max_sessions_refuses_the_next_initialize_with_503() {
    let running = start(
        test_server(),
        HttpConfig {
            max_sessions: 3,
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(mcp.open_session().await);
    }
    let r = send(mcp.post(None, initialize_body(4))).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(header(&r, "mcp-session-id").is_none());
    assert_error(&json_body(r).await, -32603, &json!(4));
    for s in &open {
        mcp.assert_serves(s, "a refused initialize").await;
    }
    // Ending one makes room.
    assert_eq!(send(mcp.delete(&open[0])).await.status(), StatusCode::OK);
    let fourth = mcp.open_session().await;
    mcp.assert_serves(&fourth, "initialize after DELETE").await;
}

// ---------------------------------------------------------------------------------------------
// Stateless mode.

#[tokio::test]
async fn stateless_mode_serves_each_post_alone() {
    let running = start(
        test_server(),
        HttpConfig {
            sessionless: true,
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);

    // No initialize, no session: tools/call is answered.
    let r = send(
        mcp.post(None, echo_body(1, "no session"))
            .header("mcp-protocol-version", VERSION),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "mcp-session-id").is_none());
    let body = json_body(r).await;
    assert_eq!(body["id"], 1);
    assert_eq!(result_text(&body), "no session");
    // Without the version header too (2025-03-26 is assumed).
    let (status, body) = mcp.call(None, request(2, "tools/list", json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"]["tools"].as_array().is_some_and(|t| t.len() == 5));

    // initialize is answered, but starts no session.
    let r = send(mcp.post(None, initialize_body(3))).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "mcp-session-id").is_none());
    assert_eq!(json_body(r).await["result"]["protocolVersion"], VERSION);

    // Notifications: 202.
    assert_eq!(send(mcp.post(None, INITIALIZED)).await.status(), StatusCode::ACCEPTED);

    for r in [
        send(mcp.http.get(&mcp.url).header(ACCEPT, "text/event-stream")).await,
        send(mcp.http.delete(&mcp.url)).await,
    ] {
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(header(&r, "allow").as_deref(), Some("POST"));
    }
}

// ---------------------------------------------------------------------------------------------
// Graceful shutdown.

#[tokio::test]
async fn shutdown_ends_open_streams_and_returns() {
    let mut running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let r = send(mcp.get(&s)).await;
    let mut stream = SseReader::new(r);
    assert_priming(&stream.next().await.unwrap(), Some(50));

    running.stop.cancel();
    let task = &mut running.task;
    let returned = tokio::time::timeout(Duration::from_secs(2), task).await;
    let ended = tokio::time::timeout(Duration::from_secs(1), stream.next_untimed()).await;
    assert!(
        returned.is_ok(),
        "HttpServer::serve did not return within 2 s of shutdown while a GET stream was open"
    );
    returned
        .unwrap()
        .expect("the server task")
        .expect("HttpServer::serve's result");
    assert!(matches!(ended, Ok(None)), "the GET stream did not end: {ended:?}");
}

// ---------------------------------------------------------------------------------------------
// The legacy HTTP+SSE endpoints that HttpServer::sse_legacy mounts.

async fn next_message(stream: &mut SseReader) -> Value {
    let e = stream.next().await.expect("a message event");
    assert_eq!(e.event.as_deref(), Some("message"), "{e:?}");
    e.json()
}

#[tokio::test]
async fn legacy_sse_endpoints() {
    let running = start(test_server(), config()).await;
    let http = reqwest::Client::new();
    let base = format!("http://{}", running.addr);
    let r = send(http.get(format!("{base}/sse")).header(ACCEPT, "text/event-stream")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = SseReader::new(r);
    let endpoint = stream.next().await.expect("the endpoint event");
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    let path = endpoint.data.expect("an endpoint URL");
    assert!(path.starts_with("/messages?sessionId="), "{path}");
    let messages = format!("{base}{path}");
    let post = |body: String| http.post(&messages).header(CONTENT_TYPE, "application/json").body(body);

    let init = request(
        0,
        "initialize",
        json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "legacy", "version": "0"}
        }),
    );
    let r = send(post(init)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let reply = next_message(&mut stream).await;
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(send(post(INITIALIZED.to_owned())).await.status(), StatusCode::ACCEPTED);
    let r = send(post(echo_body(1, "legacy echo"))).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let reply = next_message(&mut stream).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(result_text(&reply), "legacy echo");

    // Unparseable JSON: 400 here, and the -32700 error on the stream.
    let r = send(post("{nope".to_owned())).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_error(&next_message(&mut stream).await, -32700, &Value::Null);

    // Unknown and missing session ids.
    let r = send(
        http.post(format!("{base}/messages?sessionId=00000000000000000000000000000000"))
            .header(CONTENT_TYPE, "application/json")
            .body(request(2, "ping", json!({}))),
    )
    .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = send(
        http.post(format!("{base}/messages"))
            .header(CONTENT_TYPE, "application/json")
            .body(request(2, "ping", json!({}))),
    )
    .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    // The session still works.
    let r = send(post(request(3, "ping", json!({})))).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(
        next_message(&mut stream).await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
}
