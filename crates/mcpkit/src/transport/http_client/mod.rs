//! The Streamable HTTP client (spec: `basic/transports` "Streamable HTTP"), falling back to the
//! deprecated HTTP+SSE transport of 2024-11-05 (spec: "Backwards Compatibility").
//!
//! ```no_run
//! # async fn demo() -> mcpkit::Result<()> {
//! use mcpkit::transport::http_client::HttpClientTransport;
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
//! - After `notifications/initialized` a GET opens the server's standalone stream; it is resumed
//!   with `Last-Event-ID` when it drops. `404` or `405` means the server has none (a server that
//!   routes only POST), never that the session expired.
//! - A `404` for a POST that carried a session id means the session expired: the transport
//!   replays the recorded `initialize` and `notifications/initialized` to start a new session
//!   (the replayed `initialize`'s response is not passed on) and retries the message once.
//!   Messages sent meanwhile wait for the new session and carry its id.
//! - An HTTP error for a request becomes that request's JSON-RPC error (the server's JSON-RPC
//!   error body when it sent one, else -32603 naming the status), so no caller waits forever.
//! - Closing first lets notifications already sent finish their POSTs (a
//!   `notifications/cancelled` just before closing still arrives), then sends `DELETE` with the
//!   session id (a `405` is fine) and ends every stream.
//! - When the `initialize` POST gets `400`, `404` or `405`, the transport GETs the URL; if that
//!   opens an SSE stream whose first event is `endpoint`, it speaks the 2024-11-05 HTTP+SSE
//!   transport from then on: messages are POSTed to the endpoint, and every server message
//!   arrives as a `message` event on the stream. [`HttpClientTransport::sse_legacy`] skips the probe.
//!
//! The reader reports an `io::Error` only when the connection cannot go on: the server could
//! not be reached for `initialize`, a new session could not be started, or the HTTP+SSE stream
//! ended.

mod auth;
mod builder;
mod classify;
mod headers;
mod post;
mod session;
mod sse;
mod sse_legacy;

pub use auth::{AuthChallenge, AuthFuture, HttpAuth, MAX_AUTH_RETRIES};
pub use builder::HttpClientBuilder;
#[cfg(feature = "auth")]
pub(crate) use post::read_response;
#[cfg(fuzzing)]
pub use sse::sse_frames_for_fuzzing;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcpkit_types::headers::{HeaderParam, PROTOCOL_VERSION, SESSION_ID};
use mcpkit_types::jsonrpc::{self, MessageRef, OutgoingError};
use mcpkit_types::{ErrorObject, RequestId};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::Url;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::sync::lock;
use crate::transport::channel::{ChannelReader, Inbound, InboundSender};
use crate::transport::{Extensions, Frame, FrameReader, FrameWriter, Transport};
use classify::Kind;

/// `Accept` of every POST (spec: the client MUST list both).
const ACCEPT_POST: &str = "application/json, text/event-stream";
/// How long sending `notifications/initialized` waits for the standalone stream to open.
const STANDALONE_OPEN_WAIT: Duration = Duration::from_secs(5);

/// A client transport for an MCP server at an HTTP URL: Streamable HTTP, or the legacy
/// HTTP+SSE transport when the server speaks only that. See the [module docs](self).
pub struct HttpClientTransport {
    inner: Arc<Inner>,
    rx: ChannelReader,
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
    pub fn sse_legacy(sse_url: impl Into<String>) -> io::Result<Self> {
        Self::builder(sse_url).sse_legacy(true).build()
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
            .field("sse_legacy", &self.is_sse_legacy())
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
    pub fn is_sse_legacy(&self) -> bool {
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
            Kind::Stateless { headers, .. } => {
                for (name, value) in headers {
                    out.insert(name, value);
                }
            }
            _ => {
                let value = |v: &str| HeaderValue::from_str(v).ok();
                if let Some(s) = session.as_deref().and_then(value) {
                    out.insert(SESSION_ID, s);
                }
                if let Some(v) = version.as_deref().and_then(value) {
                    out.insert(PROTOCOL_VERSION, v);
                }
            }
        }
        Some(out)
    }
}

/// Reading half of an [`HttpClientTransport`]: every message the server sent, on any stream
/// (POST responses, the standalone GET stream, resumed streams), in the order they arrived.
#[derive(Debug)]
pub struct HttpClientReader(ChannelReader);

impl FrameReader for HttpClientReader {
    fn read_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send {
        self.0.read_frame()
    }
    fn take_extensions(&mut self) -> Extensions {
        self.0.take_extensions()
    }
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
    /// Every message the server sent, on any stream.
    type Reader = HttpClientReader;
    type Writer = HttpClientWriter;
    fn network_transport(&self) -> Option<&'static str> {
        Some("tcp")
    }
    fn split(self) -> (HttpClientReader, HttpClientWriter) {
        (HttpClientReader(self.rx), HttpClientWriter { inner: self.inner })
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
    tool_headers: HashMap<String, Vec<HeaderParam>>,
    /// 2026-07-28: `tools/list` requests in flight, whose results teach `tool_headers`.
    tool_lists: HashSet<RequestId>,
}

struct Inner {
    http: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    max_frame: usize,
    standalone_stream: bool,
    max_reconnects: u32,
    /// Supplies `Authorization` and re-authorizes on 401/403.
    auth: Option<Arc<dyn HttpAuth>>,
    /// Frames for the reader; an error ends the connection.
    tx: InboundSender,
    state: Arc<Mutex<State>>,
    /// Write-locked while a new session is being started (so concurrent 404s start only one),
    /// read-locked while a POST takes the session id it carries: no message leaves without an
    /// id, or with the expired one, while the new session is on its way.
    session_gate: tokio::sync::RwLock<()>,
    shutdown: CancellationToken,
    /// The POSTs of notifications and responses still on their way: closing waits for them
    /// (within a bound), so a `notifications/cancelled` sent just before closing still arrives.
    notes: TaskTracker,
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

    /// POST a notification or response, tracked so that closing waits for it.
    fn spawn_note(self: &Arc<Self>, frame: Bytes) {
        let this = self.clone();
        self.notes.spawn(async move {
            let stop = this.shutdown.clone();
            tokio::select! {
                biased;
                _ = stop.cancelled() => {}
                _ = this.post(frame, None) => {}
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
                Some(id) => self.fail_request(Some(id), &super::discarded::too_large(n, self.max_frame)),
                None => {
                    let _ = self.tx.send(Inbound::Frame(Frame::Oversized(n), Default::default()));
                }
            }
            return;
        }
        self.learn_tool_headers(&frame);
        let _ = self.tx.send(Inbound::message(frame));
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
                    headers::learn_tools(result, &mut s.tool_headers);
                }
            }
        }
    }

    /// Pass an error response for `id` to the reader, so its caller fails instead of waiting.
    fn reply_error(&self, id: &RequestId, error: &ErrorObject) {
        match serde_json::to_vec(&OutgoingError::new(Some(id), error)) {
            Ok(frame) => {
                let _ = self.tx.send(Inbound::message(frame));
            }
            Err(e) => tracing::error!("could not serialize an error response: {e}"),
        }
    }

    /// Fail request `id` with -32603 and `message`, marked as made here
    /// ([`Error::is_transport_failure`](crate::Error::is_transport_failure)); for a
    /// notification or response, log it.
    fn fail_request(&self, id: Option<&RequestId>, message: &str) {
        match id {
            Some(id) => self.reply_error(id, &crate::error::transport_failure(message)),
            None => tracing::debug!("sending a message to the MCP server failed: {message}"),
        }
    }

    /// The connection cannot go on: the reader reports `e`.
    fn fatal(&self, e: io::Error) {
        tracing::debug!("HTTP transport failed: {e}");
        let _ = self.tx.send(Inbound::Failed(e));
    }
}
