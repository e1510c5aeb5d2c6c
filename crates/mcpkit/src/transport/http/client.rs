//! The Streamable HTTP client (spec: `basic/transports` "Streamable HTTP"), falling back to the
//! deprecated HTTP+SSE transport of 2024-11-05 (spec: "Backwards Compatibility").
//!
//! ```no_run
//! # async fn demo() -> mcpkit::Result<()> {
//! use mcpkit::transport::http::client::HttpClientTransport;
//! use mcpkit::Client;
//!
//! let transport = HttpClientTransport::new("http://127.0.0.1:8080/mcp")?;
//! let client = Client::builder().connect(transport).await?;
//! let tools = client.list_all_tools().await?;
//! # let _ = tools;
//! client.close().await
//! # }
//! ```
//!
//! How the transport behaves:
//! - Every outgoing message is its own POST (`Content-Type: application/json`, `Accept:
//!   application/json, text/event-stream`), sent concurrently: the writer never waits for a
//!   reply, except for the two handshake messages (`initialize`, `notifications/initialized`),
//!   whose replies carry the session id and the negotiated version every later message needs.
//! - Every POST after `initialize` carries `Mcp-Session-Id` (when the server gave one) and
//!   `MCP-Protocol-Version` (the version in the `initialize` result).
//! - A reply is `202` (nothing to read), one JSON message, or an SSE stream of messages ending
//!   with the response. A stream that ends before its response is resumed with a GET carrying
//!   `Last-Event-ID`, after the server's `retry` delay (1 s when it gave none).
//! - After `notifications/initialized` a GET opens the server's standalone stream (`405`: the
//!   server has none); it is resumed with `Last-Event-ID` when it drops.
//! - A `404` for a message that carried a session id means the session expired: the transport
//!   replays the recorded `initialize` and `notifications/initialized` to start a new session
//!   (the replayed `initialize`'s response is not passed on) and retries the message once.
//! - An HTTP error for a request becomes that request's JSON-RPC error (the server's JSON-RPC
//!   error body when it sent one, else -32603 naming the status), so no caller waits forever.
//! - Closing sends `DELETE` with the session id (a `405` is fine) and ends every stream.
//! - When the `initialize` POST gets `400`, `404` or `405`, the transport GETs the URL; if that
//!   opens an SSE stream whose first event is `endpoint`, it speaks the 2024-11-05 HTTP+SSE
//!   transport from then on: messages are POSTed to the endpoint, and every server message
//!   arrives as a `message` event on the stream. [`HttpClientTransport::legacy`] skips the probe.
//!
//! The reader reports an `io::Error` only when the connection cannot go on: the server could
//! not be reached for `initialize`, a new session could not be started, or the HTTP+SSE stream
//! ended.

mod auth;
mod legacy;
mod modern;

pub use auth::{AuthChallenge, AuthFuture, HttpAuth, MAX_AUTH_RETRIES};

use crate::sync::lock;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mcpkit_types::jsonrpc::{self, MessageRef, OutgoingError};
use mcpkit_types::schema::CancelledParams;
use mcpkit_types::{ErrorObject, RequestId};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use serde::Deserialize;
use sse_stream::{Sse, SseByteStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER};
use crate::transport::{Frame, FrameReader, FrameWriter, Transport, DEFAULT_MAX_FRAME};

/// `Accept` of every POST (spec: the client MUST list both).
const ACCEPT_POST: &str = "application/json, text/event-stream";
/// `Accept` of every GET.
const ACCEPT_SSE: &str = "text/event-stream";
/// The reconnection delay when the server sent no `retry` field.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How much of an error body is read.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// How long sending `notifications/initialized` waits for the standalone stream to open.
const STANDALONE_OPEN_WAIT: Duration = Duration::from_secs(5);
/// How long `close` waits for the server to acknowledge `DELETE`.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds an [`HttpClientTransport`]: extra headers, timeouts, a shared `reqwest::Client`.
#[derive(Debug, Clone)]
pub struct HttpClientBuilder {
    url: String,
    force_legacy: bool,
    headers: HeaderMap,
    header_error: Option<String>,
    client: Option<reqwest::Client>,
    connect_timeout: Option<Duration>,
    max_frame: usize,
    standalone_stream: bool,
    max_reconnects: u32,
    auth: auth::AuthSlot,
}

impl HttpClientBuilder {
    fn new(url: String) -> Self {
        HttpClientBuilder {
            url,
            force_legacy: false,
            headers: HeaderMap::new(),
            header_error: None,
            client: None,
            connect_timeout: Some(Duration::from_secs(10)),
            max_frame: DEFAULT_MAX_FRAME,
            standalone_stream: true,
            max_reconnects: 5,
            auth: auth::AuthSlot::default(),
        }
    }

    /// Authorize requests with `provider`: its header goes on every HTTP request, and it is
    /// asked to (re)authorize when the server answers `401` or `403` (see [`HttpAuth`]). The
    /// OAuth 2.1 client of the `auth` module is one such provider.
    pub fn auth(mut self, provider: std::sync::Arc<dyn HttpAuth>) -> Self {
        self.auth = auth::AuthSlot(Some(provider));
        self
    }

    /// Send this header with every HTTP request (for example an API key; it is marked
    /// sensitive). An invalid name or value is reported by [`HttpClientBuilder::build`].
    pub fn header(mut self, name: impl AsRef<str>, value: impl AsRef<str>) -> Self {
        let (name, value) = (name.as_ref(), value.as_ref());
        match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            (Ok(n), Ok(mut v)) => {
                // Extra headers often carry credentials: keep them out of Debug output.
                v.set_sensitive(true);
                self.headers.insert(n, v);
            }
            _ => {
                self.header_error
                    .get_or_insert_with(|| format!("invalid HTTP header {name:?}"));
            }
        }
        self
    }

    /// Send `Authorization: Bearer <token>` with every HTTP request (marked sensitive, so it is
    /// never logged).
    pub fn bearer_auth(mut self, token: impl AsRef<str>) -> Self {
        match HeaderValue::from_str(&format!("Bearer {}", token.as_ref())) {
            Ok(mut v) => {
                v.set_sensitive(true);
                self.headers.insert(header::AUTHORIZATION, v);
            }
            Err(_) => {
                self.header_error
                    .get_or_insert_with(|| "invalid bearer token (not a valid header value)".to_owned());
            }
        }
        self
    }

    /// Use this `reqwest::Client` (share its connection pool, TLS roots, proxy settings). The
    /// connect timeout of [`HttpClientBuilder::connect_timeout`] then does not apply.
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Give up connecting to the server after this long (default 10 s; `None`: never). Replies
    /// themselves have no time limit here: long tool calls are bounded by the caller's request
    /// timeout instead.
    pub fn connect_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The largest message accepted from the server (default 16 MiB). A larger response fails
    /// its request; a larger server request or notification is reported to the engine as
    /// oversized.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// Whether to open the standalone GET stream after initialization (default yes). Without it
    /// the server can reach the client only while answering one of its requests.
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
        self
    }

    /// How many reconnections in a row without receiving anything new are tried before a
    /// dropped SSE stream is given up (default 5).
    pub fn max_reconnects(mut self, attempts: u32) -> Self {
        self.max_reconnects = attempts;
        self
    }

    /// Speak the 2024-11-05 HTTP+SSE transport directly: the URL is the SSE endpoint.
    pub fn force_legacy(mut self, legacy: bool) -> Self {
        self.force_legacy = legacy;
        self
    }

    /// Build the transport. Fails on an invalid URL or header, or when the HTTP client cannot be
    /// created (for example, no TLS roots).
    pub fn build(self) -> io::Result<HttpClientTransport> {
        if let Some(e) = self.header_error {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, e));
        }
        let url = Url::parse(&self.url).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid MCP URL {:?}: {e}", self.url),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the MCP URL must be http or https, not {:?}", url.scheme()),
            ));
        }
        let http = match self.client {
            Some(c) => c,
            None => {
                let mut b = reqwest::Client::builder().user_agent(concat!("mcpkit/", env!("CARGO_PKG_VERSION")));
                if let Some(t) = self.connect_timeout {
                    b = b.connect_timeout(t);
                }
                b.build().map_err(io::Error::other)?
            }
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(Mutex::new(State {
            mode: if self.force_legacy {
                Mode::LegacyPending
            } else {
                Mode::Streamable
            },
            ..State::default()
        }));
        let inner = Arc::new(Inner {
            http,
            url,
            headers: self.headers,
            max_frame: self.max_frame,
            standalone_stream: self.standalone_stream,
            max_reconnects: self.max_reconnects,
            auth: self.auth.0,
            tx,
            state,
            reinit: tokio::sync::Mutex::new(()),
            shutdown: CancellationToken::new(),
        });
        Ok(HttpClientTransport { inner, rx })
    }
}

/// A client transport for an MCP server at an HTTP URL: Streamable HTTP, or the legacy
/// HTTP+SSE transport when the server speaks only that. See the [module docs](self).
pub struct HttpClientTransport {
    inner: Arc<Inner>,
    rx: mpsc::UnboundedReceiver<io::Result<Frame>>,
}

impl std::fmt::Debug for HttpClientTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientTransport")
            .field("url", &self.inner.url.as_str())
            .finish_non_exhaustive()
    }
}

impl HttpClientTransport {
    /// A transport for the MCP endpoint at `url`, with default settings.
    pub fn new(url: impl Into<String>) -> io::Result<Self> {
        Self::builder(url).build()
    }

    /// A transport that speaks the 2024-11-05 HTTP+SSE transport to the SSE endpoint at
    /// `sse_url`, without trying Streamable HTTP first.
    pub fn legacy(sse_url: impl Into<String>) -> io::Result<Self> {
        Self::builder(sse_url).force_legacy(true).build()
    }

    /// Configure a transport for the MCP endpoint at `url`.
    pub fn builder(url: impl Into<String>) -> HttpClientBuilder {
        HttpClientBuilder::new(url.into())
    }

    /// A handle that reports the session id, negotiated version and transport in use, and
    /// stays valid after the transport is handed to a client.
    pub fn info(&self) -> HttpClientInfo {
        HttpClientInfo {
            state: self.inner.state.clone(),
            inner: Arc::downgrade(&self.inner),
        }
    }
}

/// What an [`HttpClientTransport`] has learned about its connection. Cheap to clone.
#[derive(Clone)]
pub struct HttpClientInfo {
    state: Arc<Mutex<State>>,
    /// The transport itself, for as long as it lives (the info must not keep it open).
    inner: std::sync::Weak<Inner>,
}

impl std::fmt::Debug for HttpClientInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientInfo")
            .field("session_id", &self.session_id())
            .field("protocol_version", &self.protocol_version())
            .field("legacy", &self.is_legacy())
            .finish()
    }
}

impl HttpClientInfo {
    /// The current `Mcp-Session-Id`, once the server assigned one (it changes when an expired
    /// session is replaced).
    pub fn session_id(&self) -> Option<String> {
        lock(&self.state).session_id.as_deref().map(str::to_owned)
    }

    /// The protocol version from the server's `initialize` result, once it arrived.
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.state).protocol_version.as_deref().map(str::to_owned)
    }

    /// Whether the connection uses the 2024-11-05 HTTP+SSE transport.
    pub fn is_legacy(&self) -> bool {
        !matches!(lock(&self.state).mode, Mode::Streamable)
    }

    /// The MCP endpoint the transport POSTs to.
    pub fn url(&self) -> Option<Url> {
        self.inner.upgrade().map(|inner| inner.url.clone())
    }

    /// The headers the transport would send, as of now, with a POST of the JSON-RPC message
    /// `frame` on Streamable HTTP: `Content-Type`, `Accept`, the builder's extra headers, the
    /// auth provider's credentials, and either the session's `Mcp-Session-Id` and
    /// `MCP-Protocol-Version` or, for a 2026-07-28 request (one whose `_meta` names a
    /// stateless-era revision), the headers that mirror its body: `MCP-Protocol-Version`,
    /// `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` of the tool parameters annotated with
    /// `x-mcp-header` (as learned from the `tools/list` results that passed through).
    ///
    /// For callers that send requests of an established connection themselves (a load
    /// generator that keeps its own HTTP connections, say). `Host` and `Content-Length` are not
    /// included. `None` once the transport is gone, or when the connection speaks the legacy
    /// HTTP+SSE transport (whose POSTs go to the endpoint the server announced).
    pub fn post_headers(&self, frame: &[u8]) -> Option<HeaderMap> {
        let inner = self.inner.upgrade()?;
        let (kind, session, version) = {
            let s = lock(&self.state);
            if !matches!(s.mode, Mode::Streamable) {
                return None;
            }
            (
                Kind::of(frame, &s.tool_headers),
                s.session_id.clone(),
                s.protocol_version.clone(),
            )
        };
        let mut out = inner.headers.clone();
        out.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        out.insert(header::ACCEPT, HeaderValue::from_static(ACCEPT_POST));
        if let Some(auth) = &inner.auth {
            for (name, value) in auth.headers(&reqwest::Method::POST, &inner.url) {
                out.insert(name, value);
            }
        }
        match kind {
            Kind::Modern { headers, .. } => {
                for (name, value) in headers {
                    out.insert(name, value);
                }
            }
            _ => {
                let value = |v: &str| HeaderValue::from_str(v).ok();
                if let Some(s) = session.as_deref().and_then(value) {
                    out.insert(SESSION_HEADER, s);
                }
                if let Some(v) = version.as_deref().and_then(value) {
                    out.insert(PROTOCOL_VERSION_HEADER, v);
                }
            }
        }
        Some(out)
    }
}

/// The reading half: every message the server sent, on any stream.
#[derive(Debug)]
pub struct HttpClientReader {
    rx: mpsc::UnboundedReceiver<io::Result<Frame>>,
}

/// The writing half: one HTTP POST per message.
pub struct HttpClientWriter {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HttpClientWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClientWriter")
            .field("url", &self.inner.url.as_str())
            .finish_non_exhaustive()
    }
}

impl Transport for HttpClientTransport {
    type Reader = HttpClientReader;
    type Writer = HttpClientWriter;
    fn split(self) -> (HttpClientReader, HttpClientWriter) {
        (HttpClientReader { rx: self.rx }, HttpClientWriter { inner: self.inner })
    }
}

impl FrameReader for HttpClientReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        match self.rx.recv().await {
            Some(Ok(frame)) => Ok(Some(frame)),
            Some(Err(e)) => Err(e),
            None => Ok(None),
        }
    }
}

impl FrameWriter for HttpClientWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        if self.inner.shutdown.is_cancelled() {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the HTTP transport is closed",
            ));
        }
        let kind = {
            let state = lock(&self.inner.state);
            Kind::of(frame, &state.tool_headers)
        };
        self.inner.clone().send(Bytes::copy_from_slice(frame), kind).await;
        Ok(())
    }
    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        self.inner.close().await;
        Ok(())
    }
}

impl Drop for HttpClientWriter {
    fn drop(&mut self) {
        // Without a writer nothing more is sent: stop every stream and pending POST.
        self.inner.shutdown.cancel();
    }
}

/// What an outgoing message is, as far as the transport cares.
#[derive(Debug)]
enum Kind {
    Request {
        id: RequestId,
        initialize: bool,
    },
    /// A 2026-07-28 request: no session, and these mirrored headers.
    Modern {
        id: RequestId,
        tools_list: bool,
        headers: Vec<(HeaderName, HeaderValue)>,
    },
    Initialized,
    Cancelled(Option<RequestId>),
    Other,
}

impl Kind {
    fn of(frame: &[u8], tools: &HashMap<String, Vec<mcpkit_types::headers::HeaderParam>>) -> Kind {
        match jsonrpc::parse(frame) {
            Ok(MessageRef::Request(r)) => match modern::headers_for(&r.method, r.params, tools) {
                Some(headers) => Kind::Modern {
                    tools_list: r.method == "tools/list",
                    id: r.id,
                    headers,
                },
                None => Kind::Request {
                    initialize: r.method == "initialize",
                    id: r.id,
                },
            },
            Ok(MessageRef::Notification(n)) => match &*n.method {
                "notifications/initialized" => Kind::Initialized,
                "notifications/cancelled" => Kind::Cancelled(
                    n.params
                        .and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok())
                        .and_then(|p| p.request_id),
                ),
                _ => Kind::Other,
            },
            _ => Kind::Other,
        }
    }
}

/// Which transport the connection speaks.
#[derive(Debug, Clone, Default)]
enum Mode {
    #[default]
    Streamable,
    /// HTTP+SSE was asked for; the SSE stream opens with the first message.
    LegacyPending,
    /// HTTP+SSE, POSTing to this endpoint.
    Legacy(Url),
}

#[derive(Debug, Default)]
struct State {
    mode: Mode,
    session_id: Option<Arc<str>>,
    protocol_version: Option<Arc<str>>,
    /// The `initialize` request as sent, replayed to start a new session.
    initialize: Option<(RequestId, Bytes)>,
    /// `notifications/initialized` as sent, replayed after it.
    initialized: Option<Bytes>,
    /// The id of an `initialize` whose result has not been seen yet.
    awaiting_init: Option<RequestId>,
    /// Stops the current standalone GET stream.
    standalone: Option<CancellationToken>,
    /// Stops the POST (and its response stream) of each request in flight.
    requests: HashMap<RequestId, CancellationToken>,
    /// 2026-07-28: tool parameters to mirror into `Mcp-Param-*` headers, by tool.
    tool_headers: HashMap<String, Vec<mcpkit_types::headers::HeaderParam>>,
    /// 2026-07-28: `tools/list` requests in flight, whose results teach `tool_headers`.
    tool_lists: std::collections::HashSet<RequestId>,
}

/// Whether a reply's messages go to the reader, or (a replayed `initialize`) the response is
/// kept back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    Forward,
    SuppressResponse,
}

/// Where an SSE stream stands: the id to resume from and the delay before reconnecting.
#[derive(Debug)]
struct Cursor {
    last_id: Option<String>,
    retry: Duration,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            last_id: None,
            retry: DEFAULT_RETRY,
        }
    }
}

/// How reading one SSE connection ended.
#[derive(Debug, Default)]
struct Pumped {
    /// The awaited response arrived: its outcome.
    answer: Option<Result<(), ErrorObject>>,
    /// Something new (an event id or a message) arrived on this connection.
    progressed: bool,
}

/// The awaited response's outcome, or why it never came.
type Answer = Result<Result<(), ErrorObject>, String>;

/// An error body's JSON-RPC error, whatever its id.
#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

/// The version in an `initialize` result.
#[derive(Deserialize)]
struct InitializeVersion {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
}

pub(super) struct Inner {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    max_frame: usize,
    standalone_stream: bool,
    max_reconnects: u32,
    /// Supplies `Authorization` and re-authorizes on 401/403.
    auth: Option<Arc<dyn HttpAuth>>,
    /// Frames for the reader; an error ends the connection.
    tx: mpsc::UnboundedSender<io::Result<Frame>>,
    state: Arc<Mutex<State>>,
    /// Held while a new session is being started, so concurrent 404s start only one.
    reinit: tokio::sync::Mutex<()>,
    shutdown: CancellationToken,
}

fn media_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

fn is_sse(response: &reqwest::Response) -> bool {
    media_type(response) == "text/event-stream"
}

/// Events without a type, or of type `message`, carry messages.
fn is_message_event(event: Option<&str>) -> bool {
    matches!(event, None | Some("" | "message"))
}

/// Read at most `limit` bytes of a body.
async fn read_capped(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if out.len() + chunk.len() > limit {
                    return Err(format!("the reply exceeds the {limit}-byte limit"));
                }
                out.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(out),
            Err(e) => return Err(format!("reading the reply failed: {e}")),
        }
    }
}

/// The error for an HTTP failure status, from a JSON-RPC error body when there is one.
fn error_from_body(status: StatusCode, body: &[u8]) -> ErrorObject {
    if let Ok(b) = serde_json::from_slice::<ErrorBody>(body) {
        return b.error;
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        ErrorObject::internal(format!("the MCP server answered HTTP {status}"))
    } else {
        let snippet: String = text.chars().take(200).collect();
        ErrorObject::internal(format!("the MCP server answered HTTP {status}: {snippet}"))
    }
}

fn other(message: impl Into<String>) -> io::Error {
    io::Error::other(message.into())
}

impl Inner {
    /// Run `fut` until it ends or `token` fires.
    fn spawn(&self, token: CancellationToken, fut: impl Future<Output = ()> + Send + 'static) {
        tokio::spawn(async move {
            tokio::select! {
                biased;
                _ = token.cancelled() => {}
                _ = fut => {}
            }
        });
    }

    fn session_id(&self) -> Option<Arc<str>> {
        lock(&self.state).session_id.clone()
    }

    /// Pass a message to the reader.
    fn forward(&self, frame: Vec<u8>, answers: Option<&RequestId>) {
        if frame.len() > self.max_frame {
            let n = frame.len();
            match answers {
                Some(id) => self.fail_request(
                    Some(id),
                    &format!(
                        "the response ({n} bytes) exceeds the {}-byte message limit",
                        self.max_frame
                    ),
                ),
                None => {
                    let _ = self.tx.send(Ok(Frame::Oversized(n)));
                }
            }
            return;
        }
        self.learn_tool_headers(&frame);
        let _ = self.tx.send(Ok(Frame::Message(frame)));
    }

    /// A `tools/list` result of the stateless era teaches which parameters become headers.
    fn learn_tool_headers(&self, frame: &[u8]) {
        let mut s = lock(&self.state);
        if s.tool_lists.is_empty() {
            return;
        }
        if let Ok(MessageRef::Response(r)) = jsonrpc::parse(frame) {
            if s.tool_lists.remove(&r.id) {
                if let Ok(result) = r.outcome {
                    modern::learn_tools(result, &mut s.tool_headers);
                }
            }
        }
    }

    /// Pass an error response for `id` to the reader, so its caller fails instead of waiting.
    fn reply_error(&self, id: &RequestId, error: &ErrorObject) {
        match serde_json::to_vec(&OutgoingError::new(Some(id), error)) {
            Ok(frame) => {
                let _ = self.tx.send(Ok(Frame::Message(frame)));
            }
            Err(e) => tracing::error!("could not serialize an error response: {e}"),
        }
    }

    /// Fail request `id` with -32603 and `message`; for a notification or response, log it.
    fn fail_request(&self, id: Option<&RequestId>, message: &str) {
        match id {
            Some(id) => self.reply_error(id, &ErrorObject::internal(message)),
            None => tracing::debug!("sending a message to the MCP server failed: {message}"),
        }
    }

    /// The connection cannot go on: the reader reports `e`.
    fn fatal(&self, e: io::Error) {
        tracing::debug!("HTTP transport failed: {e}");
        let _ = self.tx.send(Err(e));
    }

    /// Whether `frame` answers `wanted` (and how); records the negotiated version when it
    /// answers the pending `initialize`.
    fn inspect(&self, frame: &[u8], wanted: Option<&RequestId>) -> Option<Result<(), ErrorObject>> {
        let init = lock(&self.state).awaiting_init.clone();
        if wanted.is_none() && init.is_none() {
            return None;
        }
        let Ok(MessageRef::Response(r)) = jsonrpc::parse(frame) else {
            return None;
        };
        if init.as_ref() == Some(&r.id) {
            if let Ok(raw) = &r.outcome {
                if let Ok(v) = serde_json::from_str::<InitializeVersion>(raw.get()) {
                    let mut s = lock(&self.state);
                    s.protocol_version = Some(v.protocol_version.into());
                    s.awaiting_init = None;
                }
            }
        }
        (wanted == Some(&r.id)).then(|| r.outcome.map(|_| ()))
    }

    /// Route one outgoing message.
    async fn send(self: Arc<Self>, frame: Bytes, kind: Kind) {
        let mode = lock(&self.state).mode.clone();
        let endpoint = match mode {
            Mode::Streamable => None,
            Mode::Legacy(endpoint) => Some(endpoint),
            Mode::LegacyPending => match self.connect_legacy().await {
                Ok(endpoint) => {
                    lock(&self.state).mode = Mode::Legacy(endpoint.clone());
                    Some(endpoint)
                }
                Err(e) => {
                    // Fail the request first so its caller learns why, then end the connection.
                    if let Kind::Request { id, .. } = &kind {
                        self.fail_request(Some(id), &e.to_string());
                    }
                    self.fatal(e);
                    return;
                }
            },
        };
        if let Some(endpoint) = endpoint {
            return self.send_legacy(endpoint, frame, kind).await;
        }
        match kind {
            Kind::Request { id, initialize: true } => self.initialize(id, frame).await,
            Kind::Initialized => {
                lock(&self.state).initialized = Some(frame.clone());
                self.post(frame, None).await;
                if self.standalone_stream {
                    // Hold the next message until the standalone stream is open (or refused), so
                    // a server request sent right after initialization has a stream to use.
                    let opened = self.start_standalone();
                    let _ = tokio::time::timeout(STANDALONE_OPEN_WAIT, opened).await;
                }
            }
            Kind::Modern {
                id,
                tools_list,
                headers,
            } => {
                let token = self.shutdown.child_token();
                {
                    let mut s = lock(&self.state);
                    s.requests.insert(id.clone(), token.clone());
                    if tools_list {
                        s.tool_lists.insert(id.clone());
                    }
                }
                let this = self.clone();
                self.spawn(token, async move {
                    this.post_modern(frame, id.clone(), headers).await;
                    let mut s = lock(&this.state);
                    s.requests.remove(&id);
                    s.tool_lists.remove(&id);
                });
            }
            Kind::Request { id, initialize: false } => {
                let token = self.shutdown.child_token();
                lock(&self.state).requests.insert(id.clone(), token.clone());
                let this = self.clone();
                self.spawn(token, async move {
                    this.post(frame, Some(id.clone())).await;
                    lock(&this.state).requests.remove(&id);
                });
            }
            Kind::Cancelled(id) => {
                // The caller gave up: stop reading that request's stream too.
                if let Some(token) = id.and_then(|id| lock(&self.state).requests.remove(&id)) {
                    token.cancel();
                }
                let this = self.clone();
                self.spawn(self.shutdown.clone(), async move { this.post(frame, None).await });
            }
            Kind::Other => {
                let this = self.clone();
                self.spawn(self.shutdown.clone(), async move { this.post(frame, None).await });
            }
        }
    }

    fn post_request(&self, frame: &Bytes, session: Option<&str>, with_version: bool) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, ACCEPT_POST)
            .body(frame.clone());
        if let Some(s) = session {
            req = req.header(SESSION_HEADER, s);
        }
        if with_version {
            if let Some(v) = lock(&self.state).protocol_version.clone() {
                req = req.header(PROTOCOL_VERSION_HEADER, &*v);
            }
        }
        req
    }

    /// A GET on the endpoint for an SSE stream (standalone, or resuming after `last_event_id`).
    async fn get_stream(&self, last_event_id: Option<&str>) -> Result<reqwest::Response, String> {
        auth::send(self.auth.as_ref(), &self.url, || self.get_request(last_event_id)).await
    }

    fn get_request(&self, last_event_id: Option<&str>) -> reqwest::RequestBuilder {
        let (session, version) = {
            let s = lock(&self.state);
            (s.session_id.clone(), s.protocol_version.clone())
        };
        let mut req = self
            .http
            .get(self.url.clone())
            .headers(self.headers.clone())
            .header(header::ACCEPT, ACCEPT_SSE);
        if let Some(s) = session {
            req = req.header(SESSION_HEADER, &*s);
        }
        if let Some(v) = version {
            req = req.header(PROTOCOL_VERSION_HEADER, &*v);
        }
        if let Some(id) = last_event_id {
            req = req.header(LAST_EVENT_ID_HEADER, id);
        }
        req
    }

    /// Send the request `build` makes, with the auth provider's header and its re-authorization
    /// on 401/403 (when there is a provider).
    async fn send_authorized(&self, build: impl Fn() -> reqwest::RequestBuilder) -> Result<reqwest::Response, String> {
        auth::send(self.auth.as_ref(), &self.url, build).await
    }

    fn remember_session(&self, response: &reqwest::Response) {
        if let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
            lock(&self.state).session_id = Some(id.into());
        }
    }

    /// POST `initialize`: learn the session id, fall back to HTTP+SSE on 400/404/405, and read
    /// the reply in the background (the negotiated version is taken from it on the way).
    async fn initialize(self: Arc<Self>, id: RequestId, frame: Bytes) {
        {
            let mut s = lock(&self.state);
            s.initialize = Some((id.clone(), frame.clone()));
            s.awaiting_init = Some(id.clone());
            s.session_id = None;
        }
        let response = match self.send_authorized(|| self.post_request(&frame, None, false)).await {
            Ok(r) => r,
            Err(e) => {
                let message = format!("could not reach the MCP server at {}: {e}", self.url);
                self.fail_request(Some(&id), &message);
                self.fatal(io::Error::new(io::ErrorKind::ConnectionRefused, message));
                return;
            }
        };
        let status = response.status();
        if matches!(status.as_u16(), 400 | 404 | 405) {
            let body = read_capped(response, ERROR_BODY_LIMIT).await.unwrap_or_default();
            match self.connect_legacy().await {
                Ok(endpoint) => {
                    tracing::debug!("{} speaks the HTTP+SSE transport; POSTing to {endpoint}", self.url);
                    lock(&self.state).mode = Mode::Legacy(endpoint.clone());
                    self.legacy_post(&endpoint, frame, Some(&id)).await;
                }
                Err(e) => {
                    tracing::debug!("no HTTP+SSE fallback at {}: {e}", self.url);
                    self.reply_error(&id, &error_from_body(status, &body));
                }
            }
            return;
        }
        if !status.is_success() {
            return self.http_error(response, Some(&id)).await;
        }
        self.remember_session(&response);
        let this = self.clone();
        self.spawn(self.shutdown.clone(), async move {
            if let Err(reason) = this.read_reply(response, &id, Delivery::Forward).await {
                this.fail_request(Some(&id), &reason);
            }
        });
    }

    /// POST one message and deliver its reply; a 404 on a session starts a new session and
    /// retries once.
    async fn post(self: &Arc<Self>, frame: Bytes, id: Option<RequestId>) {
        let mut retried = false;
        loop {
            let session = self.session_id();
            let response = match self
                .send_authorized(|| self.post_request(&frame, session.as_deref(), true))
                .await
            {
                Ok(r) => r,
                Err(e) => return self.fail_request(id.as_ref(), &e),
            };
            let status = response.status();
            if status == StatusCode::NOT_FOUND && !retried {
                if let Some(stale) = session {
                    retried = true;
                    match self.reinitialize(&stale).await {
                        Ok(()) => continue,
                        Err(e) => {
                            self.fail_request(id.as_ref(), &e.to_string());
                            return self.fatal(e);
                        }
                    }
                }
            }
            if !status.is_success() {
                return self.http_error(response, id.as_ref()).await;
            }
            if let Some(id) = id {
                if let Err(reason) = self.read_reply(response, &id, Delivery::Forward).await {
                    self.fail_request(Some(&id), &reason);
                }
            }
            return;
        }
    }

    /// POST one 2026-07-28 request: no session; its reply (or its JSON-RPC error, whatever the
    /// HTTP status) goes to the reader. Dropping the stream is the cancellation.
    async fn post_modern(self: &Arc<Self>, frame: Bytes, id: RequestId, headers: Vec<(HeaderName, HeaderValue)>) {
        // Through the auth provider like every other request: a stateless-era server asks for
        // authorization (401/403) the same way.
        let build = || {
            let mut req = self.post_request(&frame, None, false);
            for (name, value) in &headers {
                req = req.header(name.clone(), value.clone());
            }
            req
        };
        let response = match self.send_authorized(build).await {
            Ok(r) => r,
            Err(e) => {
                return self.fail_request(
                    Some(&id),
                    &format!("could not reach the MCP server at {}: {e}", self.url),
                )
            }
        };
        if !response.status().is_success() {
            return self.http_error(response, Some(&id)).await;
        }
        if let Err(reason) = self.read_reply(response, &id, Delivery::Forward).await {
            self.fail_request(Some(&id), &reason);
        }
    }

    /// An HTTP failure status: a request gets its JSON-RPC error.
    async fn http_error(&self, response: reqwest::Response, id: Option<&RequestId>) {
        let status = response.status();
        let body = read_capped(response, ERROR_BODY_LIMIT).await.unwrap_or_default();
        let error = error_from_body(status, &body);
        match id {
            Some(id) => self.reply_error(id, &error),
            None => tracing::debug!("the MCP server refused a message: HTTP {status}: {error}"),
        }
    }

    /// Read the successful reply to request `id`: nothing (202), one JSON message, or an SSE
    /// stream followed (and resumed) until the response.
    async fn read_reply(
        self: &Arc<Self>,
        response: reqwest::Response,
        id: &RequestId,
        delivery: Delivery,
    ) -> Result<(), String> {
        match self.read_answer(response, id, delivery).await? {
            Err(e) if delivery == Delivery::SuppressResponse => Err(e.to_string()),
            _ => Ok(()),
        }
    }

    async fn read_answer(self: &Arc<Self>, response: reqwest::Response, id: &RequestId, delivery: Delivery) -> Answer {
        if response.status() == StatusCode::ACCEPTED {
            // No body: the response will come some other way (the standalone stream).
            return Ok(Ok(()));
        }
        match media_type(&response).as_str() {
            "text/event-stream" => self.follow(response, id, delivery).await,
            "application/json" => {
                let body = read_capped(response, self.max_frame).await?;
                if let Some(answer) = self.inspect(&body, Some(id)) {
                    if delivery == Delivery::Forward {
                        self.forward(body, Some(id));
                    }
                    return Ok(answer);
                }
                if let Ok(b) = serde_json::from_slice::<ErrorBody>(&body) {
                    // An error without a usable id: it can only be this request's.
                    if delivery == Delivery::Forward {
                        self.reply_error(id, &b.error);
                    }
                    return Ok(Err(b.error));
                }
                if !body.is_empty() {
                    self.forward(body, None);
                }
                Err(format!("the server's JSON reply did not answer request {id}"))
            }
            other => Err(format!("the server replied with an unexpected Content-Type {other:?}")),
        }
    }

    /// Read a request's SSE stream until its response, resuming with `Last-Event-ID` when the
    /// connection ends first.
    async fn follow(self: &Arc<Self>, first: reqwest::Response, id: &RequestId, delivery: Delivery) -> Answer {
        let mut cursor = Cursor::default();
        let mut response = first;
        let mut failures = 0u32;
        loop {
            let pumped = self.pump(response, &mut cursor, Some(id), delivery).await;
            if let Some(answer) = pumped.answer {
                return Ok(answer);
            }
            if pumped.progressed {
                failures = 0;
            }
            let Some(last) = cursor.last_id.clone() else {
                return Err(format!(
                    "the server ended the response stream of request {id} before the response, with no event id to resume from"
                ));
            };
            response = loop {
                failures += 1;
                if failures > self.max_reconnects {
                    return Err(format!(
                        "the response stream of request {id} could not be resumed ({} attempts)",
                        self.max_reconnects
                    ));
                }
                tokio::time::sleep(cursor.retry).await;
                match self.get_stream(Some(&last)).await {
                    Ok(r) if r.status().is_success() && is_sse(&r) => break r,
                    Ok(r) if matches!(r.status(), StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED) => {
                        return Err(format!(
                            "the response stream of request {id} could not be resumed: HTTP {}",
                            r.status()
                        ));
                    }
                    Ok(r) => tracing::debug!("resuming the stream of request {id}: HTTP {}", r.status()),
                    Err(e) => tracing::debug!("resuming the stream of request {id}: {e}"),
                }
            };
        }
    }

    /// Read one SSE connection: forward its messages, track its cursor, stop at `wanted`'s
    /// response.
    async fn pump(
        &self,
        response: reqwest::Response,
        cursor: &mut Cursor,
        wanted: Option<&RequestId>,
        delivery: Delivery,
    ) -> Pumped {
        let mut events = Box::pin(SseByteStream::new(response.bytes_stream()));
        let mut out = Pumped::default();
        while let Some(item) = events.next().await {
            let event = match item {
                Ok(e) => e,
                Err(e) => {
                    tracing::debug!("SSE stream ended: {e}");
                    break;
                }
            };
            if let Some(id) = event.id {
                out.progressed = true;
                cursor.last_id = (!id.is_empty()).then_some(id);
            }
            if let Some(ms) = event.retry {
                cursor.retry = Duration::from_millis(ms);
            }
            let Some(data) = event.data else { continue };
            if !is_message_event(event.event.as_deref()) || data.trim().is_empty() {
                // Priming events carry no message.
                continue;
            }
            out.progressed = true;
            let frame = data.into_bytes();
            let answer = self.inspect(&frame, wanted);
            if answer.is_none() || delivery == Delivery::Forward {
                self.forward(frame, if answer.is_some() { wanted } else { None });
            }
            if answer.is_some() {
                out.answer = answer;
                break;
            }
        }
        out
    }

    /// (Re)open the standalone GET stream, replacing any previous one.
    /// The returned receiver resolves (or is dropped) once the first GET has been answered.
    fn start_standalone(self: &Arc<Self>) -> tokio::sync::oneshot::Receiver<()> {
        let token = self.shutdown.child_token();
        if let Some(old) = lock(&self.state).standalone.replace(token.clone()) {
            old.cancel();
        }
        let (opened_tx, opened) = tokio::sync::oneshot::channel();
        let this = self.clone();
        self.spawn(token, async move { this.standalone(opened_tx).await });
        opened
    }

    async fn standalone(self: &Arc<Self>, opened: tokio::sync::oneshot::Sender<()>) {
        let mut cursor = Cursor::default();
        let mut failures = 0u32;
        let mut opened = Some(opened);
        loop {
            let answer = self.get_stream(cursor.last_id.as_deref()).await;
            if let Some(tx) = opened.take() {
                let _ = tx.send(());
            }
            match answer {
                Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                    tracing::debug!("the MCP server offers no standalone SSE stream");
                    return;
                }
                Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                    // The session is gone: start a new one (which reopens this stream).
                    if let Some(stale) = self.session_id() {
                        let this = self.clone();
                        self.spawn(self.shutdown.clone(), async move {
                            if let Err(e) = this.reinitialize(&stale).await {
                                this.fatal(e);
                            }
                        });
                    }
                    return;
                }
                Ok(r) if r.status().is_success() && is_sse(&r) => {
                    let pumped = self.pump(r, &mut cursor, None, Delivery::Forward).await;
                    if pumped.progressed {
                        failures = 0;
                    } else {
                        failures += 1;
                    }
                }
                Ok(r) => {
                    tracing::debug!("standalone SSE stream: HTTP {}", r.status());
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!("standalone SSE stream: {e}");
                    failures += 1;
                }
            }
            if failures > self.max_reconnects {
                tracing::debug!("giving up the standalone SSE stream after {failures} attempts");
                return;
            }
            tokio::time::sleep(cursor.retry).await;
        }
    }

    /// The session `stale` expired: replay `initialize` and `notifications/initialized` to
    /// start a new one (spec: "Session Management" 4). Concurrent callers start only one.
    async fn reinitialize(self: &Arc<Self>, stale: &str) -> io::Result<()> {
        let _one_at_a_time = self.reinit.lock().await;
        let (init, initialized) = {
            let mut s = lock(&self.state);
            if s.session_id.as_deref() != Some(stale) {
                // Someone else already started a new session.
                return Ok(());
            }
            s.session_id = None;
            if let Some(t) = s.standalone.take() {
                t.cancel();
            }
            s.awaiting_init = s.initialize.as_ref().map(|(id, _)| id.clone());
            (s.initialize.clone(), s.initialized.clone())
        };
        let Some((id, frame)) = init else {
            return Err(other(
                "the MCP session expired, and no initialize request was recorded to start a new one",
            ));
        };
        tracing::debug!("MCP session {stale} expired; starting a new one");
        let response = self
            .send_authorized(|| self.post_request(&frame, None, false))
            .await
            .map_err(|e| other(format!("starting a new MCP session failed: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            return Err(other(format!("starting a new MCP session failed: HTTP {status}")));
        }
        self.remember_session(&response);
        self.read_reply(response, &id, Delivery::SuppressResponse)
            .await
            .map_err(|reason| other(format!("starting a new MCP session failed: {reason}")))?;
        if let Some(note) = initialized {
            let session = self.session_id();
            let response = self
                .send_authorized(|| self.post_request(&note, session.as_deref(), true))
                .await
                .map_err(|e| other(format!("starting a new MCP session failed: {e}")))?;
            if !response.status().is_success() {
                return Err(other(format!(
                    "starting a new MCP session failed: notifications/initialized got HTTP {}",
                    response.status()
                )));
            }
            if self.standalone_stream {
                drop(self.start_standalone());
            }
        }
        Ok(())
    }

    /// End the connection: stop every stream and POST, and DELETE the session.
    async fn close(&self) {
        if self.shutdown.is_cancelled() {
            return;
        }
        self.shutdown.cancel();
        let (mode, session, version) = {
            let s = lock(&self.state);
            (s.mode.clone(), s.session_id.clone(), s.protocol_version.clone())
        };
        let (Mode::Streamable, Some(session)) = (mode, session) else {
            return;
        };
        let mut req = self
            .http
            .delete(self.url.clone())
            .headers(self.headers.clone())
            .header(SESSION_HEADER, &*session);
        if let Some(v) = version {
            req = req.header(PROTOCOL_VERSION_HEADER, &*v);
        }
        if let Some(auth) = &self.auth {
            for (name, value) in auth.headers(&reqwest::Method::DELETE, &self.url) {
                req = req.header(name, value);
            }
        }
        match tokio::time::timeout(DELETE_TIMEOUT, req.send()).await {
            Ok(Ok(r)) if r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!("the MCP server does not let clients end sessions");
            }
            Ok(Ok(r)) => tracing::debug!("DELETE of the MCP session: HTTP {}", r.status()),
            Ok(Err(e)) => tracing::debug!("DELETE of the MCP session failed: {e}"),
            Err(_) => tracing::debug!("DELETE of the MCP session timed out"),
        }
    }
}

/// An SSE event stream, as the legacy reader consumes it.
trait SseEvents: Stream<Item = Result<Sse, sse_stream::Error>> + Send + Unpin + 'static {}
impl<T: Stream<Item = Result<Sse, sse_stream::Error>> + Send + Unpin + 'static> SseEvents for T {}
