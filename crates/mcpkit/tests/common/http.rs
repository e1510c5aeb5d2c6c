//! The one HTTP harness of mcpkit's tests.
//!
//! - [`Served`]: an [`HttpServer`] served on 127.0.0.1 (for what needs a real socket:
//!   concurrency, graceful shutdown, real clients), or on a Unix domain socket.
//! - [`Mcp`]: raw requests to one endpoint, either over that socket (reqwest) or straight into
//!   its router with `tower::ServiceExt::oneshot` (no socket); both give a [`Reply`].
//! - [`Over`]: the harness option that runs one test body through the router, over TCP or over
//!   a Unix domain socket ([`Over::endpoint`]).
//! - [`SseReader`]: whole SSE events from a reply, comments skipped.
//! - [`ManualClock`]: a session clock the test moves by hand.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mcpkit::server::http::{Clock, HttpConfig, HttpServer};
use mcpkit::server::{Args, RequestContext, ToolDef};
use mcpkit::Server;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::within;

/// The handshake-era revision the raw requests speak.
pub const VERSION: &str = "2025-11-25";

/// An endpoint served on 127.0.0.1 (or a Unix domain socket); stopped (aborted) when dropped.
pub struct Served {
    /// The TCP address (unspecified, port 0, on a Unix domain socket).
    pub addr: SocketAddr,
    /// The Streamable HTTP endpoint, `http://ADDR/mcp` (`unix:/PATH` on a Unix socket).
    pub url: String,
    /// Fires the graceful shutdown.
    pub stop: CancellationToken,
    pub task: JoinHandle<std::io::Result<()>>,
    /// On a Unix domain socket: the socket file, in a directory of its own removed on drop.
    pub socket: Option<std::path::PathBuf>,
}

/// Where a test's requests reach the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// Into its router, without a socket.
    Router,
    /// Over TCP on 127.0.0.1.
    Tcp,
    /// Over a Unix domain socket (`HttpServer::serve_unix`).
    Unix,
}

impl Over {
    /// `server` with `config` (Streamable HTTP at `/mcp`, HTTP+SSE at `/sse` + `/messages`), and
    /// requests to it over `self`; the second half keeps a served endpoint running.
    pub async fn endpoint(self, server: Server, config: HttpConfig) -> (Mcp, Option<Served>) {
        let http = HttpServer::new(server).config(config).sse_legacy(true);
        match self {
            Over::Router => (Mcp::router(http.router()), None),
            Over::Tcp => {
                let served = Served::start(http).await;
                (Mcp::new(&served.url), Some(served))
            }
            Over::Unix => {
                let served = Served::start_unix(http).await;
                (Mcp::new(&served.url), Some(served))
            }
        }
    }
}

/// A fresh directory for one test's socket files (mode 0700), removed by the test's [`Served`].
pub fn socket_dir() -> std::path::PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mcpkit-uds-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    dir
}

impl Served {
    /// Serve `http` (its stop token replaced by [`Served::stop`]) on a Unix domain socket in a
    /// fresh directory, bound by `bind_unix`.
    pub async fn start_unix(http: HttpServer) -> Served {
        let path = socket_dir().join("mcp.sock");
        let listener = mcpkit::server::http::bind_unix(&path).await.unwrap();
        let stop = CancellationToken::new();
        let task = tokio::spawn(http.shutdown(stop.clone()).serve_unix(listener));
        Served {
            addr: SocketAddr::from(([0, 0, 0, 0], 0)),
            url: format!("unix:{}", path.display()),
            stop,
            task,
            socket: Some(path),
        }
    }

    /// Serve `http` (its stop token replaced by [`Served::stop`]) on a free loopback port.
    pub async fn start(http: HttpServer) -> Served {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let task = tokio::spawn(http.shutdown(stop.clone()).serve(listener));
        Served {
            addr,
            url: format!("http://{addr}/mcp"),
            stop,
            task,
            socket: None,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(dir) = self.socket.as_ref().and_then(|s| s.parent()) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    offset_ms: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock {
            start: Instant::now(),
            offset_ms: AtomicU64::new(0),
        })
    }

    pub fn advance(&self, by: Duration) {
        self.offset_ms.fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + Duration::from_millis(self.offset_ms.load(Ordering::SeqCst))
    }
}

// ---------------------------------------------------------------------------------------------
// The endpoint the HTTP behaviour tests (`tests/http_*.rs`) pin.

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// echo; progress (three steps, 5 ms apart); ten (ten steps, 30 ms apart); slow (answers after
/// 400 ms, silently); close_then_answer.
pub fn test_server() -> Server {
    Server::builder()
        .name("http-behaviour", "1.0.0")
        .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.text }))
        .tool(ToolDef::new("progress", |cx: RequestContext| async move {
            for i in 1..=3 {
                cx.progress(f64::from(i), Some(3.0), None);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            "progressed"
        }))
        .tool(ToolDef::new("ten", |cx: RequestContext| async move {
            for i in 1..=10 {
                cx.progress(f64::from(i), Some(10.0), None);
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

/// The default configuration with a short SSE `retry` (50 ms).
pub fn config() -> HttpConfig {
    HttpConfig {
        sse_retry: Duration::from_millis(50),
        ..HttpConfig::default()
    }
}

/// `server` on a socket: Streamable HTTP at `/mcp`, HTTP+SSE at `/sse` + `/messages`.
pub async fn start(server: Server, config: HttpConfig) -> Served {
    Served::start(HttpServer::new(server).config(config).sse_legacy(true)).await
}

/// The same endpoint driven through its router, without a socket.
pub fn in_process(server: Server, config: HttpConfig) -> Mcp {
    Mcp::router(HttpServer::new(server).config(config).sse_legacy(true).router())
}

// ---------------------------------------------------------------------------------------------
// Raw requests.

/// Where requests go.
#[derive(Clone)]
enum Target {
    /// Over a socket, to `base` (`http://ADDR`).
    Socket { http: reqwest::Client, base: String },
    /// Into the router, without a socket; `authority` is the default `Host`.
    Router { router: Router, authority: String },
}

/// Raw requests to one endpoint.
pub struct Mcp {
    target: Target,
    /// The endpoint's path (`/mcp`).
    path: String,
}

pub fn request(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

pub fn initialize_body(id: i64) -> String {
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

pub fn echo_body(id: i64, text: &str) -> String {
    request(id, "tools/call", json!({"name": "echo", "arguments": {"text": text}}))
}

pub fn progress_body(id: i64, tool: &str, token: &str) -> String {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": {"progressToken": token}}),
    )
}

pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A request body.
pub enum ReqBody {
    Bytes(Bytes),
    /// Sent chunked, without `Content-Length`.
    Chunks(Vec<Bytes>),
}

impl From<String> for ReqBody {
    fn from(s: String) -> ReqBody {
        ReqBody::Bytes(Bytes::from(s))
    }
}

impl From<&'static str> for ReqBody {
    fn from(s: &'static str) -> ReqBody {
        ReqBody::Bytes(Bytes::from_static(s.as_bytes()))
    }
}

/// One request being built.
pub struct Req {
    target: Target,
    method: Method,
    path: String,
    host: Option<String>,
    headers: Vec<(String, String)>,
    body: Option<ReqBody>,
    /// The peer address the router sees (`ConnectInfo`); a socket has its own.
    peer: Option<SocketAddr>,
}

impl Req {
    /// Add a header (`Host` replaces the default one, as with reqwest).
    pub fn header(mut self, name: &str, value: impl AsRef<str>) -> Req {
        if name.eq_ignore_ascii_case("host") {
            self.host = Some(value.as_ref().to_owned());
        } else {
            self.headers.push((name.to_owned(), value.as_ref().to_owned()));
        }
        self
    }

    pub fn body(mut self, body: impl Into<ReqBody>) -> Req {
        self.body = Some(body.into());
        self
    }

    /// Into the router: as if sent from `addr` (axum's `ConnectInfo`, as `HttpServer::serve`
    /// provides it). Ignored over a socket.
    pub fn sent_from(mut self, addr: &str) -> Req {
        self.peer = Some(addr.parse().expect("an IP:port"));
        self
    }
}

impl Mcp {
    /// Requests over a socket to `url` (`http://ADDR/PATH`, or `unix:/SOCKET` for `/mcp` on a
    /// Unix domain socket, addressed to `localhost`).
    pub fn new(url: &str) -> Mcp {
        if let Some(socket) = url.strip_prefix("unix:") {
            return Mcp {
                target: Target::Socket {
                    http: reqwest::Client::builder().unix_socket(socket).build().unwrap(),
                    base: "http://localhost".to_owned(),
                },
                path: "/mcp".to_owned(),
            };
        }
        let (base, path) = url
            .find("://")
            .and_then(|i| url[i + 3..].find('/').map(|j| url.split_at(i + 3 + j)))
            .expect("an http URL with a path");
        Mcp {
            target: Target::Socket {
                http: reqwest::Client::new(),
                base: base.to_owned(),
            },
            path: path.to_owned(),
        }
    }

    /// Requests into `router` at `/mcp`, without a socket (as if sent to `127.0.0.1:8000`).
    pub fn router(router: Router) -> Mcp {
        Mcp {
            target: Target::Router {
                router,
                authority: "127.0.0.1:8000".to_owned(),
            },
            path: "/mcp".to_owned(),
        }
    }

    /// The port requests are addressed to (80 for `http://localhost` on a Unix socket).
    pub fn port(&self) -> u16 {
        let authority = match &self.target {
            Target::Socket { base, .. } => base.rsplit("//").next().unwrap_or_default(),
            Target::Router { authority, .. } => authority,
        };
        authority.rsplit_once(':').map_or(80, |(_, port)| port.parse().unwrap())
    }

    /// A bare request to `path` (no default headers).
    pub fn raw(&self, method: Method, path: &str) -> Req {
        Req {
            target: self.target.clone(),
            method,
            path: path.to_owned(),
            host: None,
            headers: Vec::new(),
            body: None,
            peer: None,
        }
    }

    /// A POST as a well-behaved client sends it (with the session's headers when given one).
    pub fn post(&self, session: Option<&str>, body: impl Into<ReqBody>) -> Req {
        self.post_with(session, body, &[])
    }

    /// [`Mcp::post`] with some headers replaced (`Some`) or left out (`None`).
    pub fn post_with(
        &self,
        session: Option<&str>,
        body: impl Into<ReqBody>,
        overrides: &[(&str, Option<&str>)],
    ) -> Req {
        let mut headers = vec![
            ("content-type", Some("application/json")),
            ("accept", Some("application/json, text/event-stream")),
        ];
        if let Some(s) = session {
            headers.push(("mcp-session-id", Some(s)));
            headers.push(("mcp-protocol-version", Some(VERSION)));
        }
        with_headers(self.raw(Method::POST, &self.path), headers, overrides).body(body)
    }

    pub fn get(&self, session: &str) -> Req {
        self.get_with(session, &[])
    }

    pub fn get_with(&self, session: &str, overrides: &[(&str, Option<&str>)]) -> Req {
        let headers = vec![
            ("accept", Some("text/event-stream")),
            ("mcp-session-id", Some(session)),
            ("mcp-protocol-version", Some(VERSION)),
        ];
        with_headers(self.raw(Method::GET, &self.path), headers, overrides)
    }

    pub fn delete(&self, session: &str) -> Req {
        self.raw(Method::DELETE, &self.path)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", VERSION)
    }

    /// initialize + notifications/initialized; the session id.
    pub async fn open_session(&self) -> String {
        let r = send(self.post(None, initialize_body(0))).await;
        assert_eq!(r.status(), StatusCode::OK);
        let session = header(&r, "mcp-session-id").expect("an Mcp-Session-Id");
        let body = json_body(r).await;
        assert_eq!(body["result"]["protocolVersion"], VERSION, "{body}");
        let r = send(self.post(Some(&session), INITIALIZED)).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        session
    }

    /// An `initialize` from `peer` (through the router: the `ConnectInfo` address): the session
    /// id, or the refusal's status and body.
    pub async fn initialize_from(&self, peer: &str) -> Result<String, (StatusCode, Value)> {
        let r = send(self.post(None, initialize_body(7)).sent_from(peer)).await;
        match header(&r, "mcp-session-id") {
            Some(session) if r.status() == StatusCode::OK => Ok(session),
            _ => Err((r.status(), json_body(r).await)),
        }
    }

    /// A request answered with plain JSON: the status and the body.
    pub async fn call(&self, session: Option<&str>, body: String) -> (StatusCode, Value) {
        let r = send(self.post(session, body)).await;
        let status = r.status();
        (status, json_body(r).await)
    }

    /// A ping on `session` must get 200 and an empty result.
    pub async fn assert_serves(&self, session: &str, after: &str) {
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
    mut req: Req,
    mut headers: Vec<(&'a str, Option<&'a str>)>,
    overrides: &[(&'a str, Option<&'a str>)],
) -> Req {
    for (name, value) in overrides {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name, *value));
    }
    for (name, value) in headers {
        if let Some(v) = value {
            req = req.header(name, v);
        }
    }
    req
}

type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;

/// A response: status and headers at once, the body as it comes.
pub struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: ByteStream,
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The whole body.
    pub async fn bytes(mut self) -> Result<Bytes, String> {
        let mut all = Vec::new();
        while let Some(chunk) = self.body.next().await {
            all.extend_from_slice(&chunk?);
        }
        Ok(Bytes::from(all))
    }
}

/// Send `req` and wait for the response head.
pub async fn send(req: Req) -> Reply {
    within("an HTTP response", send_untimed(req)).await
}

async fn send_untimed(req: Req) -> Reply {
    match req.target {
        Target::Socket { http, base } => {
            let mut b = http.request(req.method, format!("{base}{}", req.path));
            if let Some(host) = &req.host {
                b = b.header("host", host);
            }
            for (name, value) in &req.headers {
                b = b.header(name, value);
            }
            b = match req.body {
                None => b,
                Some(ReqBody::Bytes(bytes)) => b.body(bytes),
                Some(ReqBody::Chunks(chunks)) => b.body(reqwest::Body::wrap_stream(futures_util::stream::iter(
                    chunks.into_iter().map(Ok::<_, std::io::Error>),
                ))),
            };
            let r = b.send().await.expect("HTTP request");
            Reply {
                status: r.status(),
                headers: r.headers().clone(),
                body: Box::pin(r.bytes_stream().map(|c| c.map_err(|e| e.to_string()))),
            }
        }
        Target::Router { router, authority } => {
            let mut b = axum::http::Request::builder()
                .method(req.method)
                .uri(req.path.as_str())
                .header("host", req.host.unwrap_or(authority));
            for (name, value) in &req.headers {
                b = b.header(name.as_str(), value.as_str());
            }
            let body = match req.body {
                None => axum::body::Body::empty(),
                Some(ReqBody::Bytes(bytes)) => {
                    // As a client sends it: with its length.
                    b = b.header("content-length", bytes.len());
                    axum::body::Body::from(bytes)
                }
                Some(ReqBody::Chunks(chunks)) => axum::body::Body::from_stream(futures_util::stream::iter(
                    chunks.into_iter().map(Ok::<_, std::io::Error>),
                )),
            };
            if let Some(peer) = req.peer {
                b = b.extension(axum::extract::ConnectInfo(peer));
            }
            let r = router.oneshot(b.body(body).unwrap()).await.unwrap();
            let (parts, body) = r.into_parts();
            Reply {
                status: parts.status,
                headers: parts.headers,
                body: Box::pin(body.into_data_stream().map(|c| c.map_err(|e| e.to_string()))),
            }
        }
    }
}

pub fn header(r: &Reply, name: &str) -> Option<String> {
    r.headers()
        .get(name)
        .map(|v| v.to_str().expect("a visible-ASCII header").to_owned())
}

pub fn content_type(r: &Reply) -> String {
    header(r, "content-type").unwrap_or_default()
}

pub async fn json_body(r: Reply) -> Value {
    let ct = content_type(&r);
    let bytes = within("a response body", r.bytes()).await.unwrap();
    assert!(
        ct.starts_with("application/json"),
        "content-type {ct:?}, body {bytes:?}"
    );
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"))
}

/// The text of a `tools/call` result.
pub fn result_text(v: &Value) -> &str {
    v["result"]["content"][0]["text"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------------------------
// SSE: the shared parser (mcpkit-test-support's sse) over a response body.

pub use mcpkit_test_support::sse::SseEvent;
use mcpkit_test_support::sse::SseParser;

pub struct SseReader {
    stream: ByteStream,
    parser: SseParser,
    /// Set when the body ended with an error rather than cleanly.
    pub error: Option<String>,
}

impl SseReader {
    pub fn new(r: Reply) -> SseReader {
        assert_eq!(content_type(&r), "text/event-stream");
        SseReader {
            stream: r.body,
            parser: SseParser::default(),
            error: None,
        }
    }

    /// The next event, or `None` when the stream ends.
    pub async fn next(&mut self) -> Option<SseEvent> {
        within("an SSE event", self.next_untimed()).await
    }

    pub async fn next_untimed(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(e) = self.parser.next_event() {
                return Some(e);
            }
            match self.stream.next().await {
                Some(Ok(chunk)) => self.parser.push(&chunk),
                Some(Err(e)) => {
                    self.error = Some(e);
                    return None;
                }
                None => return None,
            }
        }
    }

    /// Every remaining event until the stream ends.
    pub async fn rest(&mut self) -> Vec<SseEvent> {
        let mut all = Vec::new();
        while let Some(e) = self.next().await {
            all.push(e);
        }
        all
    }
}

/// A priming event: an id, the configured `retry`, and an empty `data:` line.
pub fn assert_priming(e: &SseEvent, retry_ms: Option<u64>) {
    assert!(e.id.as_deref().is_some_and(|id| !id.is_empty()), "no id: {e:?}");
    assert_eq!(e.retry, retry_ms, "{e:?}");
    assert_eq!(e.data.as_deref(), Some(""), "{e:?}");
}

/// The `progress` value of a progress notification under `token`.
pub fn progress_of(v: &Value, token: &str) -> f64 {
    assert_eq!(v["method"], "notifications/progress", "{v}");
    assert_eq!(v["params"]["progressToken"], token, "{v}");
    v["params"]["progress"].as_f64().expect("a progress number")
}

// ---------------------------------------------------------------------------------------------
// Raw sockets: for what a well-behaved client cannot send (broken bodies, half-closes).

/// A response read off a raw socket: the status, the headers (lower-case names) and the body
/// (chunked transfer coding removed).
#[derive(Debug)]
pub struct RawReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }
}

/// Write `bytes` to `addr` exactly as given, close the write half (the client sends nothing
/// more), then read the whole response until the server closes the connection.
pub async fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> RawReply {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    within("a raw HTTP exchange", async {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(bytes).await.unwrap();
        tcp.shutdown().await.unwrap();
        let mut all = Vec::new();
        // A reset after the response counts as its end.
        let _ = tcp.read_to_end(&mut all).await;
        parse_raw_reply(&all)
    })
    .await
}

/// Read from `tcp` until the server closes the connection (a reset counts as the close); what
/// it wrote before closing: `None` for nothing, else its response. Fails the test if the server
/// keeps the connection open for [`super::STEP_TIMEOUT`].
pub async fn read_until_closed<S: tokio::io::AsyncRead + Unpin>(tcp: &mut S) -> Option<RawReply> {
    use tokio::io::AsyncReadExt;
    let mut all = Vec::new();
    within("the server to close the connection", async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    (!all.is_empty()).then(|| parse_raw_reply(&all))
}

fn parse_raw_reply(all: &[u8]) -> RawReply {
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head in {:?}", String::from_utf8_lossy(all)));
    let head = String::from_utf8_lossy(&all[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut rest = &all[end + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        let mut body = Vec::new();
        while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..eol]).trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
            rest = &rest[eol + 2 + size + 2..];
        }
        body
    } else {
        rest.to_vec()
    };
    RawReply { status, headers, body }
}
