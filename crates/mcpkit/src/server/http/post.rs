//! POST on the Streamable HTTP endpoint: one message per body. A request is answered with
//! `application/json`, or with an SSE stream when its handler sends anything (progress, logs,
//! server→client requests) before its result; notifications and responses get 202.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpkit_types::headers::SESSION_ID;
use mcpkit_types::jsonrpc::{self, FrameError, MessageRef};
use mcpkit_types::method::{Initialize, Method};
use mcpkit_types::{ErrorCode, ProtocolVersion, RequestId};

use super::admission::Client;
use super::cluster;
use super::reply::{accepts, header_str, read_capped, rpc_error, PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};
use super::routes::Event;
use super::session::{CloseOnDrop, HttpSession};
use super::sse::sse_stream;
use super::state::HttpState;
use super::state::{BUS, SESSION_STORE};
use super::stateless;
use super::table::new_session_id;
use crate::server::backend::{SessionRecord, SessionUpdate};
use crate::server::Preset;
use crate::transport::Extensions;

pub(super) async fn post(
    state: &HttpState,
    headers: &HeaderMap,
    body: Body,
    extensions: Extensions,
    client: &Client,
) -> Response {
    if !accepts(headers, &["application/json", "text/event-stream"]) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Accept must list application/json and text/event-stream",
            None,
        );
    }
    let json = header_str(headers, header::CONTENT_TYPE).is_some_and(|c| {
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
    let bytes = match read_capped(headers, body, limit).await {
        Ok(b) => b,
        Err(e) => return e.reply(limit),
    };
    let frame = &bytes[..];
    state.tap.incoming(frame);
    #[cfg(feature = "otel")]
    let extensions = trace_headers(headers, extensions);
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
    if stateless::is_stateless_era(headers, headers.contains_key(SESSION_ID_HEADER)) {
        if let Some(backend) = &state.stateless {
            let MessageRef::Request(request) = message else {
                // No client-to-server notification is defined on this wire; accept and ignore.
                return StatusCode::ACCEPTED.into_response();
            };
            return stateless::post(state, backend, headers, request, extensions).await;
        }
    }
    let (request_id, is_initialize) = match &message {
        MessageRef::Request(r) => (Some(r.id.clone()), r.method == Initialize::NAME),
        _ => (None, false),
    };
    let version = match protocol_version(headers, request_id.as_ref()) {
        Ok(v) => v,
        Err(r) => return r,
    };

    if state.config.sessionless {
        return sessionless(state, frame, message, request_id, version, is_initialize, extensions).await;
    }
    if is_initialize {
        return initialize(state, headers, frame, message, request_id, extensions, client).await;
    }
    let session = match state.session_for(headers, client, request_id.as_ref()).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let response = match request_id {
        Some(rid) => answer(state, &session, rid, frame, message, extensions, None).await,
        None => {
            // With shared backends, a response another instance awaits goes there.
            if !cluster::forward_client_message(&session, frame, &message) {
                session.deliver(frame, message, extensions);
            }
            StatusCode::ACCEPTED.into_response()
        }
    };
    session.flush().await;
    response
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

/// `initialize` opens a session: a new id, a new engine, the reply carrying `Mcp-Session-Id`.
/// The session belongs to `client`'s verified caller, and counts against its cap.
async fn initialize(
    state: &HttpState,
    headers: &HeaderMap,
    frame: &[u8],
    message: MessageRef<'_>,
    request_id: Option<RequestId>,
    extensions: Extensions,
    client: &Client,
) -> Response {
    if headers.contains_key(SESSION_ID) {
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
    let start = || HttpSession::start(id, state, None, client.caller.clone());
    let session = match state.sessions.insert_with(client, start) {
        Ok(s) => s,
        Err(refused) => {
            return rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                refused.message(),
                request_id.as_ref(),
            )
        }
    };
    if let Err(refused) = share(state, &session, client, request_id.as_ref()).await {
        state.sessions.remove(&session);
        return refused;
    }
    tracing::debug!("MCP session {} started", session.id);
    let Some(rid) = request_id else {
        return StatusCode::ACCEPTED.into_response();
    };
    let mut response = answer(state, &session, rid, frame, message, extensions, None).await;
    if response.status().is_success() {
        record_negotiation(state, &session).await;
    }
    if let Ok(v) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_ID, v);
    }
    if !response.status().is_success() {
        state.sessions.remove(&session);
    }
    response
}

/// With shared backends, a new session is a record for every instance (under the cluster-wide
/// caps, the client's share included) and this instance follows its bus address: a 503 naming
/// the cause when either fails.
async fn share(
    state: &HttpState,
    session: &Arc<HttpSession>,
    client: &Client,
    request_id: Option<&RequestId>,
) -> Result<(), Response> {
    let Some(shared) = &state.cluster else { return Ok(()) };
    let record = SessionRecord::new(session.id.to_string(), client.caller.as_ref().map(|c| c.binding()));
    let me = state.me.get().cloned().unwrap_or_default();
    match shared.create_session(record, client, &state.config).await {
        Ok(None) => {}
        Ok(Some(refusal)) => {
            return Err(rpc_error(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::INTERNAL_ERROR,
                refusal,
                request_id,
            ))
        }
        Err(e) => return Err(state.backend_unavailable(SESSION_STORE, &e, request_id)),
    }
    if let Err(e) = cluster::follow(me, session).await {
        let _ = shared.backends.sessions.delete(&session.id).await;
        return Err(state.backend_unavailable(BUS, &e, request_id));
    }
    Ok(())
}

/// What `initialize` settled goes into the session record before the client learns the id.
async fn record_negotiation(state: &HttpState, session: &HttpSession) {
    let (Some(shared), Some(n)) = (&state.cluster, session.negotiation()) else {
        return;
    };
    let change = SessionUpdate::Negotiated(Box::new(n));
    if let Err(e) = shared.backends.sessions.update(&session.id, change).await {
        tracing::warn!("session {}: {e}", session.id);
    }
}

/// Serve one request on a throwaway, pre-negotiated session (sessionless mode).
async fn sessionless(
    state: &HttpState,
    frame: &[u8],
    message: MessageRef<'_>,
    request_id: Option<RequestId>,
    version: ProtocolVersion,
    is_initialize: bool,
    mut extensions: Extensions,
) -> Response {
    extensions.insert(crate::server::session::SessionlessRequest);
    let preset = (!is_initialize).then(|| Preset {
        version,
        capabilities: Default::default(),
        client_info: mcpkit_types::schema::Implementation::new("stateless-client", "0"),
    });
    // A throwaway id of its own, so concurrent sessionless requests never share stored events.
    let Some(id) = new_session_id() else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::INTERNAL_ERROR,
            "no randomness",
            None,
        );
    };
    let session = HttpSession::start_sessionless(id, state, preset);
    // The session ends with its response: at once for JSON, with the stream for SSE (ending it
    // after the first event lost the result, as nothing can resume without a session).
    let until_done = CloseOnDrop(session.clone());
    match request_id {
        Some(rid) => answer(state, &session, rid, frame, message, extensions, Some(until_done)).await,
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// Forward a request to the engine and answer it: plain JSON when its reply is the first thing
/// the handler sends, otherwise an SSE stream carrying everything up to the reply. A
/// `session_guard` lives as long as the answer: dropped here for JSON, with the stream for SSE.
async fn answer(
    state: &HttpState,
    session: &Arc<HttpSession>,
    id: RequestId,
    frame: &[u8],
    message: MessageRef<'_>,
    extensions: Extensions,
    session_guard: Option<CloseOnDrop>,
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
    let retry = Some(state.config.sse_retry);
    if let Some(prime) = primed {
        return sse_stream(vec![prime], Some(rx), retry, false, state, true, session_guard);
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
    sse_stream(head, Some(rx), retry, false, state, true, session_guard)
}

/// The W3C trace headers of the POST, for the spans of the message it carries when its
/// `_meta` has none (only when there is a `traceparent`: other requests pay one lookup).
#[cfg(feature = "otel")]
fn trace_headers(headers: &HeaderMap, mut extensions: Extensions) -> Extensions {
    // A `HeaderName`: looked up by `&str`, the name is parsed on every POST (~375 instructions).
    const TRACEPARENT: axum::http::HeaderName = axum::http::HeaderName::from_static("traceparent");
    if let Some(traceparent) = header_str(headers, TRACEPARENT) {
        extensions.insert(crate::telemetry::TraceHeaders {
            traceparent: traceparent.to_owned(),
            tracestate: header_str(headers, "tracestate").map(str::to_owned),
            baggage: header_str(headers, "baggage").map(str::to_owned),
        });
    }
    extensions
}
