//! The Streamable HTTP server (spec: `basic/transports` "Streamable HTTP").
//!
//! One endpoint. POST carries one message: a request is answered with `application/json`, or
//! with an SSE stream when its handler sends anything (progress, logs, server→client requests)
//! before its result; notifications and responses get 202. GET opens the session's standalone
//! SSE stream; DELETE ends the session. Every SSE stream starts with a priming event and keeps
//! a bounded replay log, so a client resumes with `Last-Event-ID` and loses nothing.
//!
//! Secure by default: `Host` and `Origin` must be loopback names, bodies are capped, session
//! ids come from the OS's CSPRNG, and [`serve`] binds where told (use 127.0.0.1).

use crate::sync::lock;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use mcpkit_types::jsonrpc::{self, FrameError, MessageRef, OutgoingError};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion, RequestId};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::event_store::{EventStore, MemoryEventStore};
use super::modern;
use super::security::{self, Refusal, LOCALHOST_NAMES};
use super::session::{Backend, Event, HttpSession};
pub use super::session::{SessionReader, SessionTransport, SessionWriter};
use super::{LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER};
use crate::engine::{self, IncomingRequest, Peer, Role};
use crate::server::{Preset, Server};
use crate::transport::Extensions;

/// Limits and policies of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Host names (without port) accepted in `Host`; `"*"` accepts any. Default: loopback names.
    pub allowed_hosts: Vec<String>,
    /// Host names accepted in `Origin` when a browser sends one; `"*"` accepts any.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body (default 4 MiB); larger gets 413.
    pub max_body_bytes: usize,
    /// Sessions idle this long are ended (default 30 minutes).
    pub session_idle_timeout: Duration,
    /// At most this many live sessions (default 10,000); more get 503.
    pub max_sessions: usize,
    /// No sessions: each POST is served on its own, without `Mcp-Session-Id` (for plain load
    /// balancers). Server→client requests and GET streams are then unavailable.
    pub stateless: bool,
    /// Answer every request with an SSE stream, even when the handler sends nothing first.
    pub always_sse: bool,
    /// Offer the standalone GET stream (default yes; no gives 405).
    pub enable_get_stream: bool,
    /// The `retry` hint in priming events (default 1 s).
    pub sse_retry: Duration,
    /// How long a request may stay silent before its reply switches from plain JSON to an SSE
    /// stream (default 1 s): a slow handler's client gets headers early.
    pub json_wait: Duration,
    /// Where SSE events are kept for `Last-Event-ID` replay (default: a bounded
    /// [`MemoryEventStore`]).
    pub event_store: Arc<dyn EventStore>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        let local: Vec<String> = LOCALHOST_NAMES.iter().map(|s| (*s).to_owned()).collect();
        HttpConfig {
            allowed_hosts: local.clone(),
            allowed_origins: local,
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            stateless: false,
            always_sse: false,
            enable_get_stream: true,
            sse_retry: Duration::from_secs(1),
            json_wait: Duration::from_secs(1),
            event_store: Arc::new(MemoryEventStore::default()),
        }
    }
}

/// Serves the sessions of an endpoint built with [`router_with_factory`], in place of a
/// [`Server`]: a gateway or proxy that forwards each session's frames elsewhere.
///
/// For every new session (an `initialize` POST) the endpoint calls [`SessionFactory::start`]
/// with the session's [`SessionTransport`]: reading it yields the frames the client POSTs (the
/// `initialize` request first); each frame written with a [`crate::transport::Route`] goes
/// where that route says (`Reply(id)` answers the POST of request `id` and ends its stream,
/// `Related(id)` goes on that stream first, `Standalone` on the GET stream, `Finished(id)`
/// releases a request that will get no reply). The endpoint cancels the returned token when
/// the session ends (DELETE, idle expiry, shutdown); the backend should then stop. The
/// endpoint keeps doing everything else: Host/Origin checks, session ids, SSE, resumption.
pub trait SessionFactory: Send + Sync + 'static {
    /// Start serving the session `id` over `transport`; return its stop token.
    fn start(&self, id: &str, transport: SessionTransport) -> CancellationToken;
}

struct HttpState {
    server: Backend,
    config: HttpConfig,
    sessions: Mutex<HashMap<Arc<str>, Arc<HttpSession>>>,
    shutdown: CancellationToken,
    /// Serves stateless-era POSTs directly (no engine per request); only a [`Server`] backend
    /// speaks 2026-07-28.
    modern: Option<ModernBackend>,
}

/// The endpoint as an axum `Router` serving `path` (e.g. `"/mcp"`); merge it into your app or
/// serve it as it is. When called inside a tokio runtime it also starts the idle-session reaper.
pub fn router(server: Server, config: HttpConfig, path: &str) -> Router {
    router_with_shutdown(server, config, path, CancellationToken::new())
}

/// [`router`] whose SSE streams all end when `shutdown` fires (for graceful shutdown: axum
/// waits for open responses, and a stream would otherwise never end).
pub fn router_with_shutdown(server: Server, config: HttpConfig, path: &str, shutdown: CancellationToken) -> Router {
    router_for(Backend::Server(server), config, path, shutdown)
}

/// [`router_with_shutdown`] whose sessions are served by `factory` instead of a [`Server`].
/// `config.stateless` is ignored: a forwarded session needs its `initialize`.
pub fn router_with_factory(
    factory: Arc<dyn SessionFactory>,
    mut config: HttpConfig,
    path: &str,
    shutdown: CancellationToken,
) -> Router {
    config.stateless = false;
    router_for(Backend::Factory(factory), config, path, shutdown)
}

/// The server behind stateless-era requests, and its handler table for them.
struct ModernBackend {
    server: Server,
    service: Arc<dyn Role>,
}

fn router_for(server: Backend, config: HttpConfig, path: &str, shutdown: CancellationToken) -> Router {
    let modern = match &server {
        Backend::Server(s) => Some(ModernBackend {
            server: s.clone(),
            service: s.modern_service(),
        }),
        Backend::Factory(_) => None,
    };
    let state = Arc::new(HttpState {
        modern,
        server,
        config,
        sessions: Mutex::new(HashMap::new()),
        shutdown,
    });
    if tokio::runtime::Handle::try_current().is_ok() && !state.config.stateless {
        tokio::spawn(reap(Arc::downgrade(&state)));
    }
    Router::new().route(path, axum::routing::any(handle)).with_state(state)
}

/// Serve `server` on `addr` — Streamable HTTP at `/mcp`, the legacy HTTP+SSE transport at
/// `/sse` + `/messages` — until `shutdown` resolves, with `TCP_NODELAY` on every
/// connection. Open streams end cleanly at shutdown.
pub async fn serve(
    server: Server,
    addr: SocketAddr,
    config: HttpConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    serve_listener(server, listener, config, shutdown).await
}

/// [`serve`] on a listener you bound yourself (e.g. on port 0, to learn the port first).
pub async fn serve_listener(
    server: Server,
    listener: tokio::net::TcpListener,
    config: HttpConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let stop = CancellationToken::new();
    let legacy = super::legacy_server::legacy_router_with_shutdown(
        server.clone(),
        config.clone(),
        "/sse",
        "/messages",
        stop.clone(),
    );
    let app = router_with_shutdown(server, config, "/mcp", stop.clone()).merge(legacy);
    let listener = listener.tap_io(|tcp| {
        // Without it a reply written in two parts waits ~40 ms for a delayed ACK.
        let _ = tcp.set_nodelay(true);
    });
    let shutdown = async move {
        shutdown.await;
        stop.cancel(); // end every open stream so the graceful shutdown can complete
    };
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn reap(state: Weak<HttpState>) {
    loop {
        let Some(period) = state
            .upgrade()
            .map(|s| (s.config.session_idle_timeout / 4).max(Duration::from_millis(50)))
        else {
            return;
        };
        tokio::time::sleep(period.min(Duration::from_secs(30))).await;
        let Some(state) = state.upgrade() else { return };
        expire_idle(&state);
    }
}

fn expire_idle(state: &HttpState) {
    let limit = state.config.session_idle_timeout;
    let expired: Vec<Arc<HttpSession>> = {
        let mut sessions = lock(&state.sessions);
        let ids: Vec<Arc<str>> = sessions
            .iter()
            .filter(|(_, s)| s.idle() > limit)
            .map(|(k, _)| k.clone())
            .collect();
        ids.iter().filter_map(|id| sessions.remove(id)).collect()
    };
    for s in expired {
        tracing::debug!("session {} expired", s.id);
        s.close();
    }
}

async fn handle(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    match security::check(
        &parts.headers,
        &state.config.allowed_hosts,
        &state.config.allowed_origins,
    ) {
        Ok(()) => {}
        Err(Refusal::Host) => {
            return rpc_error(
                StatusCode::MISDIRECTED_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Host not allowed",
                None,
            )
        }
        Err(Refusal::Origin) => {
            return rpc_error(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Origin not allowed",
                None,
            )
        }
    }
    match parts.method {
        Method::POST => post(&state, &parts.headers, body, extensions_of(&parts)).await,
        Method::GET => get(&state, &parts.headers),
        Method::DELETE => delete(&state, &parts.headers),
        _ => method_not_allowed(&state),
    }
}

/// What the engine may learn about a request beyond its body: the caller's verified identity
/// when an authorization layer put one on it. Never a header, so never the bearer token.
pub(super) fn extensions_of(parts: &axum::http::request::Parts) -> Extensions {
    #[allow(unused_mut)]
    let mut extensions = Extensions::new();
    #[cfg(feature = "auth")]
    if let Some(info) = parts.extensions.get::<crate::auth::resource::AuthInfo>() {
        extensions.insert(info.clone());
    }
    #[cfg(not(feature = "auth"))]
    let _ = parts;
    extensions
}

fn method_not_allowed(state: &HttpState) -> Response {
    let allow = if state.config.stateless {
        "POST"
    } else {
        "GET, POST, DELETE"
    };
    let mut r = rpc_error(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::INVALID_REQUEST,
        "Method not allowed",
        None,
    );
    r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// A JSON-RPC error as an HTTP response (the id only when the request's id was read).
fn rpc_error(status: StatusCode, code: ErrorCode, message: &str, id: Option<&RequestId>) -> Response {
    let error = ErrorObject::new(code, message);
    let body = serde_json::to_vec(&OutgoingError::new(id, &error)).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn accepts(headers: &HeaderMap, mime: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .map(|m| m.split(';').next().unwrap_or("").trim())
                .any(|m| m == mime || m == "*/*")
        })
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Spec: a missing `MCP-Protocol-Version` means 2025-03-26; an unsupported one is a 400.
// A `Response` error is what every caller returns at once; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
fn protocol_version(headers: &HeaderMap, id: Option<&RequestId>) -> Result<ProtocolVersion, Response> {
    match header_str(headers, PROTOCOL_VERSION_HEADER) {
        None => Ok(ProtocolVersion::V2025_03_26),
        Some(v) => match v.trim().parse::<ProtocolVersion>() {
            Ok(v) if v.era() == mcpkit_types::Era::Handshake => Ok(v),
            _ => Err(rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                &format!("Unsupported MCP-Protocol-Version: {v}"),
                id,
            )),
        },
    }
}

#[allow(clippy::result_large_err)]
fn session_of(state: &HttpState, headers: &HeaderMap) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "Missing Mcp-Session-Id",
            None,
        ));
    };
    match lock(&state.sessions).get(id) {
        Some(s) => {
            s.touch();
            Ok(s.clone())
        }
        None => Err(rpc_error(
            StatusCode::NOT_FOUND,
            ErrorCode::INVALID_REQUEST,
            "Session not found",
            None,
        )),
    }
}

/// 128 bits from the OS's CSPRNG, as 32 hex digits (visible ASCII, as the spec requires).
fn new_session_id() -> Option<Arc<str>> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into())
}

async fn post(state: &Arc<HttpState>, headers: &HeaderMap, body: Body, extensions: Extensions) -> Response {
    if !(accepts(headers, "application/json") && accepts(headers, "text/event-stream")) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Accept must list application/json and text/event-stream",
            None,
        );
    }
    let json = header_str(headers, header::CONTENT_TYPE.as_str()).is_some_and(|c| {
        c.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::INVALID_REQUEST,
            "Content-Type must be application/json",
            None,
        );
    }
    let limit = state.config.max_body_bytes;
    let declared = header_str(headers, header::CONTENT_LENGTH.as_str()).and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return too_large(limit);
    }
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => return too_large(limit),
    };
    let frame = &bytes[..];
    let message = match jsonrpc::parse(frame) {
        Ok(m) => m,
        Err(FrameError::Parse(e)) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::PARSE_ERROR,
                &format!("Parse error: {e}"),
                None,
            )
        }
        Err(FrameError::Invalid { id, reason }) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                &format!("Invalid request: {reason}"),
                id.as_ref(),
            )
        }
        Err(FrameError::Ignore(_)) => return StatusCode::ACCEPTED.into_response(),
    };
    if modern::is_modern(headers, headers.contains_key(SESSION_HEADER)) {
        if let Some(backend) = &state.modern {
            let MessageRef::Request(request) = message else {
                // No client-to-server notification is defined on this wire; accept and ignore.
                return StatusCode::ACCEPTED.into_response();
            };
            return modern_post(state, backend, headers, request, extensions).await;
        }
    }
    let (request_id, is_initialize) = match &message {
        MessageRef::Request(r) => (Some(r.id.clone()), r.method == "initialize"),
        _ => (None, false),
    };
    let version = match protocol_version(headers, request_id.as_ref()) {
        Ok(v) => v,
        Err(r) => return r,
    };

    if state.config.stateless {
        return stateless(state, frame, message, request_id, version, is_initialize, extensions).await;
    }
    if is_initialize {
        if headers.contains_key(SESSION_HEADER) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "initialize must not carry Mcp-Session-Id",
                request_id.as_ref(),
            );
        }
        let Some(id) = new_session_id() else {
            return rpc_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
                "no randomness for a session id",
                None,
            );
        };
        let session = {
            let mut sessions = lock(&state.sessions);
            if sessions.len() >= state.config.max_sessions {
                drop(sessions);
                expire_idle(state);
                sessions = lock(&state.sessions);
            }
            if sessions.len() >= state.config.max_sessions {
                return rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::INTERNAL_ERROR,
                    "Too many sessions",
                    request_id.as_ref(),
                );
            }
            let s = HttpSession::start(id.clone(), &state.server, state.config.event_store.clone(), None);
            sessions.insert(id.clone(), s.clone());
            s
        };
        let Some(rid) = request_id else {
            return StatusCode::ACCEPTED.into_response();
        };
        let mut response = answer(state, &session, rid, frame, message, extensions).await;
        if let Ok(v) = HeaderValue::from_str(&session.id) {
            response.headers_mut().insert(SESSION_HEADER, v);
        }
        if !response.status().is_success() {
            lock(&state.sessions).remove(&session.id);
            session.close();
        }
        return response;
    }
    let session = match session_of(state, headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    match request_id {
        Some(rid) => answer(state, &session, rid, frame, message, extensions).await,
        None => {
            session.deliver(frame, message, extensions);
            StatusCode::ACCEPTED.into_response()
        }
    }
}

fn too_large(limit: usize) -> Response {
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::INVALID_REQUEST,
        &format!("Request body exceeds {limit} bytes"),
        None,
    )
}

/// Serve one request on a throwaway, pre-negotiated session (stateless mode).
async fn stateless(
    state: &Arc<HttpState>,
    frame: &[u8],
    message: MessageRef<'_>,
    request_id: Option<RequestId>,
    version: ProtocolVersion,
    is_initialize: bool,
    extensions: Extensions,
) -> Response {
    let preset = (!is_initialize).then(|| Preset {
        version,
        capabilities: Default::default(),
        client_info: mcpkit_types::schema::Implementation::new("stateless-client", "0"),
    });
    // A throwaway id of its own, so concurrent stateless requests never share stored events.
    let Some(id) = new_session_id() else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR,
            "no randomness",
            None,
        );
    };
    let session = HttpSession::start(id, &state.server, state.config.event_store.clone(), preset);
    let response = match request_id {
        Some(rid) => answer(state, &session, rid, frame, message, extensions).await,
        None => StatusCode::ACCEPTED.into_response(),
    };
    session.close();
    response
}

/// Serve one stateless-era request (spec: 2026-07-28): no session; the mirrored headers are
/// checked against the body; errors carry their HTTP status; the request lives as long as its
/// response stream (closing the stream cancels it).
async fn modern_post(
    state: &Arc<HttpState>,
    backend: &ModernBackend,
    headers: &HeaderMap,
    request: jsonrpc::RequestRef<'_>,
    extensions: Extensions,
) -> Response {
    if let Err(e) = modern::check_headers(headers, &request.method, request.params, &backend.server) {
        let body = serde_json::to_vec(&OutgoingError::new(Some(&request.id), &e)).unwrap_or_default();
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
    }
    let cancel = CancellationToken::new();
    let request = IncomingRequest {
        id: request.id,
        method: request.method.into_owned(),
        params: request.params.map(ToOwned::to_owned),
        cancel: cancel.clone(),
        extensions,
    };
    let (peer, mut sent) = Peer::detached(backend.server.peer_options());
    let service = backend.service.clone();
    let mut reply = Box::pin(async move { engine::serve_one(&*service, peer, request).await });
    // Plain JSON when the reply comes first and soon; otherwise an SSE stream (not resumable in
    // 2026-07-28, so no event ids) that carries the request's notifications, then its reply.
    let first = if state.config.always_sse {
        None
    } else {
        tokio::select! {
            biased;
            note = sent.recv() => note,
            reply = &mut reply => {
                let Some((frame, error)) = reply else {
                    return StatusCode::ACCEPTED.into_response();
                };
                let status = modern::status_of(error);
                return (status, [(header::CONTENT_TYPE, "application/json")], frame).into_response();
            }
            _ = tokio::time::sleep(state.config.json_wait) => None,
        }
    };
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    let event = |frame: Vec<u8>| Event {
        id: String::new(),
        data: Bytes::from(frame),
        is_reply: false,
    };
    if let Some((frame, _)) = first.filter(|(f, _)| !f.is_empty()) {
        let _ = tx.send(event(frame));
    }
    let stop = cancel.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                _ = stop.cancelled() => break,
                note = sent.recv() => match note {
                    Some((frame, _)) if !frame.is_empty() => {
                        if tx.send(event(frame)).is_err() {
                            break;
                        }
                    }
                    Some(_) => {}
                    // Every sender is gone: only the reply can still come.
                    None => {
                        if let Some((frame, _)) = (&mut reply).await {
                            let _ = tx.send(event(frame));
                        }
                        break;
                    }
                },
                r = &mut reply => {
                    while let Ok((frame, _)) = sent.try_recv() {
                        if !frame.is_empty() {
                            let _ = tx.send(event(frame));
                        }
                    }
                    if let Some((frame, _)) = r {
                        let _ = tx.send(event(frame));
                    }
                    break;
                }
            }
        }
    });
    sse_stream(
        Vec::new(),
        Some(rx),
        None,
        true,
        &state.shutdown,
        false,
        Some(CancelOnDrop(cancel)),
    )
}

/// Cancels a stateless-era request when its response stream ends or the client goes away
/// (spec: 2026-07-28 `basic/transports/streamable-http` "Cancellation").
struct CancelOnDrop(CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Forward a request to the engine and answer it: plain JSON when its reply is the first thing
/// the handler sends, otherwise an SSE stream carrying everything up to the reply.
async fn answer(
    state: &HttpState,
    session: &Arc<HttpSession>,
    id: RequestId,
    frame: &[u8],
    message: MessageRef<'_>,
    extensions: Extensions,
) -> Response {
    let Some((mut rx, stream)) = session.open_request(id.clone()) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            ErrorCode::INVALID_REQUEST,
            "request id already in flight",
            Some(&id),
        );
    };
    // Always SSE: primed before the handler runs, so even its reply is recorded.
    let primed = state.config.always_sse.then(|| session.prime(stream));
    if !session.deliver(frame, message, extensions) {
        return rpc_error(StatusCode::NOT_FOUND, ErrorCode::INVALID_REQUEST, "Session ended", None);
    }
    if let Some(prime) = primed {
        return sse(
            vec![prime],
            Some(rx),
            Some(state.config.sse_retry),
            false,
            &state.shutdown,
        );
    }
    let json = |ev: Event| ([(header::CONTENT_TYPE, "application/json")], ev.data).into_response();
    // Plain JSON when the reply comes first and soon; otherwise SSE, so a slow handler's
    // client gets headers (and a resumable stream) without waiting for the result.
    let mut first = None;
    let waited = match rx.try_recv() {
        // Most handlers answer while the frame is delivered: no timer for them.
        Ok(ev) => Ok(Some(ev)),
        Err(_) => tokio::time::timeout(state.config.json_wait, rx.recv()).await,
    };
    match waited {
        // Not recorded (the stream was never primed): nothing to forget.
        Ok(Some(ev)) if ev.is_reply && ev.id.is_empty() => return json(ev),
        Ok(ev) => first = ev,
        Err(_) => {}
    }
    let prime = session.prime(stream);
    if first.is_none() {
        // A reply that came between the wait and priming went out unrecorded: still plain JSON.
        match rx.try_recv() {
            Ok(ev) if ev.is_reply && ev.id.is_empty() => {
                session.forget_stream(stream);
                return json(ev);
            }
            Ok(ev) => first = Some(ev),
            Err(_) => {}
        }
    }
    let mut head = vec![prime];
    head.extend(first);
    sse(head, Some(rx), Some(state.config.sse_retry), false, &state.shutdown)
}

/// One event in SSE wire form. The priming event (no data) still gets an empty `data:` line:
/// common SSE parsers drop events without one. Without `with_id` (2026-07-28 streams are not
/// resumable) the event has no id.
fn encode(e: &Event, retry: Option<Duration>, with_id: bool) -> Bytes {
    let mut out = Vec::with_capacity(e.data.len() + e.id.len() + 24);
    if with_id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(e.id.as_bytes());
        out.push(b'\n');
    }
    if let Some(r) = retry {
        out.extend_from_slice(format!("retry: {}\n", r.as_millis()).as_bytes());
    }
    out.extend_from_slice(b"data: ");
    // serde_json never writes a raw newline inside a frame, so one data line suffices.
    out.extend_from_slice(&e.data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// An SSE response: `head` first (the first event carries `retry`), then whatever `live`
/// delivers until it closes. Streams that may idle get a comment every 15 s.
fn sse(
    head: Vec<Event>,
    live: Option<mpsc::UnboundedReceiver<Event>>,
    retry: Option<Duration>,
    keep_alive: bool,
    stop: &CancellationToken,
) -> Response {
    sse_stream(head, live, retry, keep_alive, stop, true, None)
}

/// [`sse`] with the choice of event ids, and a guard dropped when the stream ends or the
/// client goes away.
fn sse_stream(
    head: Vec<Event>,
    live: Option<mpsc::UnboundedReceiver<Event>>,
    retry: Option<Duration>,
    keep_alive: bool,
    stop: &CancellationToken,
    with_ids: bool,
    guard: Option<CancelOnDrop>,
) -> Response {
    let stop = stop.clone();
    let head: Vec<Bytes> = head
        .iter()
        .enumerate()
        .map(|(i, e)| encode(e, if i == 0 { retry } else { None }, with_ids))
        .collect();
    let tail = stream::unfold((live, guard), move |(live, guard)| {
        let stop = stop.clone();
        async move {
            let mut rx = live?;
            tokio::select! {
                _ = stop.cancelled() => None,
                e = rx.recv() => e.map(|e| (encode(&e, None, with_ids), (Some(rx), guard))),
                _ = tokio::time::sleep(Duration::from_secs(15)), if keep_alive => {
                    Some((Bytes::from_static(b": keep-alive\n\n"), (Some(rx), guard)))
                }
            }
        }
    });
    let body = Body::from_stream(stream::iter(head).chain(tail).map(Ok::<_, Infallible>));
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        body,
    )
        .into_response()
}

fn get(state: &Arc<HttpState>, headers: &HeaderMap) -> Response {
    // Spec: 2026-07-28 has no GET stream.
    let modern = modern::is_modern(headers, headers.contains_key(SESSION_HEADER));
    if modern || state.config.stateless || !state.config.enable_get_stream {
        return method_not_allowed(state);
    }
    if !accepts(headers, "text/event-stream") {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Accept must list text/event-stream",
            None,
        );
    }
    let session = match session_of(state, headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Some(last) = header_str(headers, LAST_EVENT_ID_HEADER) {
        if let Some(resumed) = session.resume(last) {
            return sse(resumed.missed, resumed.live, None, true, &state.shutdown);
        }
    }
    match session.open_standalone() {
        Some((rx, prime)) => sse(
            vec![prime],
            Some(rx),
            Some(state.config.sse_retry),
            true,
            &state.shutdown,
        ),
        None => rpc_error(
            StatusCode::CONFLICT,
            ErrorCode::INVALID_REQUEST,
            "A GET stream is already open",
            None,
        ),
    }
}

fn delete(state: &Arc<HttpState>, headers: &HeaderMap) -> Response {
    if state.config.stateless || modern::is_modern(headers, headers.contains_key(SESSION_HEADER)) {
        return method_not_allowed(state);
    }
    let session = match session_of(state, headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    lock(&state.sessions).remove(&session.id);
    session.close();
    StatusCode::OK.into_response()
}
