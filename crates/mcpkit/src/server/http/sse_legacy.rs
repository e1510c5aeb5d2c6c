//! The deprecated HTTP+SSE transport of 2024-11-05 (spec: `2024-11-05/basic/transports`), for
//! old clients: GET on the SSE path opens a session whose first event, `endpoint`, names the
//! URL to POST messages to; every server message is a `message` event on that stream.

use crate::sync::lock;
use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use mcpkit_types::jsonrpc::{self, FrameError};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio_util::sync::CancellationToken;

use super::admission::{Admission, Client, Permit};
use super::config::HttpConfig;
use super::inspector::Inspector;
use super::reply::{extensions_of, read_capped, BodyError};
use super::security::{self, Refusal};
use super::table::new_session_id;
use crate::engine::Peer;
use crate::server::Server;
use crate::transport::channel::{self, ChannelReader, Inbound, InboundSender};
use crate::transport::inspect::inspect;
use crate::transport::{Frame, FrameWriter, Transport, VerifiedCaller};

struct LegacyState {
    shutdown: CancellationToken,
    server: Server,
    config: HttpConfig,
    messages_path: String,
    sessions: Mutex<HashMap<String, LegacySession>>,
    inspector: Inspector,
    /// The session counts, shared with the Streamable HTTP endpoint.
    admission: Arc<Admission>,
}

struct LegacySession {
    inbound: InboundSender,
    peer: Peer,
    /// The verified caller that opened it: only it may post messages to it.
    owner: Option<VerifiedCaller>,
    /// Its place in the session counts, given back when the session ends.
    _permit: Permit,
}

/// What the legacy endpoints are made of.
pub(super) struct LegacyEndpoint<'a> {
    pub(super) server: Server,
    pub(super) config: HttpConfig,
    /// Counts their sessions, against the same caps as Streamable HTTP sessions.
    pub(super) admission: Arc<Admission>,
    /// GET here opens a stream.
    pub(super) sse_path: &'a str,
    /// POST here (`?sessionId=…`) delivers a message.
    pub(super) messages_path: &'a str,
    /// Ends every stream.
    pub(super) shutdown: CancellationToken,
    pub(super) inspector: Inspector,
}

/// The legacy endpoints: GET `sse_path` opens a stream, POST `messages_path?sessionId=…`
/// delivers a message; every stream ends when `shutdown` fires.
pub(super) fn router(endpoint: LegacyEndpoint<'_>) -> Router {
    let LegacyEndpoint {
        server,
        config,
        admission,
        sse_path,
        messages_path,
        shutdown,
        inspector,
    } = endpoint;
    let state = Arc::new(LegacyState {
        shutdown,
        server,
        config,
        messages_path: messages_path.to_owned(),
        sessions: Mutex::new(HashMap::new()),
        inspector,
        admission,
    });
    Router::new()
        .route(sse_path, axum::routing::get(open))
        .route(messages_path, axum::routing::post(message))
        .with_state(state)
}

fn refuse(state: &LegacyState, request: &Request) -> Option<Response> {
    match security::check(
        request.headers(),
        &state.config.allowed_hosts,
        &state.config.allowed_origins,
    ) {
        Ok(()) => None,
        Err(Refusal::Host) => Some((StatusCode::MISDIRECTED_REQUEST, "Host not allowed").into_response()),
        Err(Refusal::Origin) => Some((StatusCode::FORBIDDEN, "Origin not allowed").into_response()),
    }
}

async fn open(State(state): State<Arc<LegacyState>>, request: Request) -> Response {
    if let Some(r) = refuse(&state, &request) {
        return r;
    }
    let client = Client::of(request.extensions(), request.headers(), &state.config);
    let permit = match state.admission.admit(&client) {
        Ok(p) => p,
        Err(refused) => return (StatusCode::SERVICE_UNAVAILABLE, refused.message()).into_response(),
    };
    let Some(id) = new_session_id() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let id = id.to_string();
    let (in_tx, in_rx) = channel::channel();
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(state.config.stream_buffer.max(1));
    let transport = LegacyTransport { rx: in_rx, tx: out_tx };
    let connection = match state.inspector.observer() {
        Some(observe) => state.server.start(inspect(transport, move |d, o| observe(d, o))),
        None => state.server.start(transport),
    };
    lock(&state.sessions).insert(
        id.clone(),
        LegacySession {
            inbound: in_tx,
            peer: connection.peer().clone(),
            owner: client.caller,
            _permit: permit,
        },
    );
    tracing::debug!("legacy HTTP+SSE session {id} opened");
    let endpoint = Bytes::from(format!(
        "event: endpoint\ndata: {}?sessionId={id}\n\n",
        state.messages_path
    ));
    let guard = SessionGuard {
        state: state.clone(),
        id,
    };
    let stop = state.shutdown.clone();
    let events = stream::unfold((out_rx, guard), move |(mut rx, guard)| {
        let stop = stop.clone();
        async move {
            let frame = tokio::select! {
                f = rx.recv() => f?,
                _ = stop.cancelled() => return None,
            };
            let mut out = Vec::with_capacity(frame.len() + 24);
            out.extend_from_slice(b"event: message\ndata: ");
            out.extend_from_slice(&frame);
            out.extend_from_slice(b"\n\n");
            Some((Bytes::from(out), (rx, guard)))
        }
    });
    let body = Body::from_stream(stream::iter([endpoint]).chain(events).map(Ok::<_, Infallible>));
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Ends the session when its SSE stream is dropped (the client went away).
struct SessionGuard {
    state: Arc<LegacyState>,
    id: String,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if let Some(s) = lock(&self.state.sessions).remove(&self.id) {
            s.peer.close();
            tracing::debug!("legacy HTTP+SSE session {} closed", self.id);
        }
    }
}

/// The `sessionId` query parameter (ids are hex, so no percent-decoding is needed).
fn session_param(request: &Request) -> Option<String> {
    request
        .uri()
        .query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix("sessionId="))
        .map(str::to_owned)
}

async fn message(State(state): State<Arc<LegacyState>>, request: Request) -> Response {
    if let Some(r) = refuse(&state, &request) {
        return r;
    }
    let Some(session_id) = session_param(&request) else {
        return (StatusCode::BAD_REQUEST, "Missing sessionId").into_response();
    };
    let client = Client::of(request.extensions(), request.headers(), &state.config);
    let inbound = lock(&state.sessions)
        .get(&session_id)
        .filter(|s| client.owns(s.owner.as_ref()))
        .map(|s| s.inbound.clone());
    // Another caller's session does not exist for this one.
    let Some(inbound) = inbound else {
        return (StatusCode::NOT_FOUND, "Session not found").into_response();
    };
    let (parts, body) = request.into_parts();
    let extensions = extensions_of(&parts);
    let body = match read_capped(&parts.headers, body, state.config.max_body_bytes).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
        Err(BodyError::Broken(why)) => {
            return (StatusCode::BAD_REQUEST, format!("Malformed request body: {why}")).into_response()
        }
        Err(e @ BodyError::TimedOut(_)) => return e.reply(state.config.max_body_bytes),
    };
    // Malformed frames are still delivered: the engine answers them on the stream with the
    // right JSON-RPC error. Only unparseable JSON also gets a 400 here.
    let bad_json = matches!(jsonrpc::parse(&body), Err(FrameError::Parse(_)));
    if inbound
        .send(Inbound::Frame(Frame::Message(body.to_vec()), extensions))
        .is_err()
    {
        return (StatusCode::NOT_FOUND, "Session ended").into_response();
    }
    if bad_json {
        (StatusCode::BAD_REQUEST, "Invalid JSON").into_response()
    } else {
        StatusCode::ACCEPTED.into_response()
    }
}

struct LegacyTransport {
    rx: ChannelReader,
    tx: mpsc::Sender<Vec<u8>>,
}

/// Writes the session's frames to its SSE stream; `None` once the stream is closed.
struct LegacyWriter(Option<mpsc::Sender<Vec<u8>>>);

impl Transport for LegacyTransport {
    type Reader = ChannelReader;
    type Writer = LegacyWriter;
    fn split(self) -> (ChannelReader, LegacyWriter) {
        (self.rx, LegacyWriter(Some(self.tx)))
    }
}

impl FrameWriter for LegacyWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        let closed = || io::Error::new(io::ErrorKind::BrokenPipe, "SSE stream closed");
        let tx = self.0.as_ref().ok_or_else(closed)?;
        match tx.try_send(frame.to_vec()) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                // The client stopped reading a whole buffer ago: end its stream (and with it
                // the session, which nothing can resume) instead of buffering without limit.
                self.0 = None;
                tracing::debug!("legacy SSE stream closed: its client is not reading");
                Err(closed())
            }
            Err(TrySendError::Closed(_)) => Err(closed()),
        }
    }
    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}
