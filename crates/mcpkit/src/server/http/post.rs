//! POST on the Streamable HTTP endpoint: one message per body. A request is answered with
//! `application/json`, or with an SSE stream when its handler sends anything (progress, logs,
//! server→client requests) before its result; notifications and responses get 202.

use std::sync::{Arc, LazyLock};

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpkit_types::ext::tasks;
use mcpkit_types::headers::SESSION_ID;
use mcpkit_types::jsonrpc::{self, FrameError, MessageRef};
use mcpkit_types::method::{Initialize, Method};
use mcpkit_types::{ProtocolVersion, RequestId};

use super::admission::Client;
use super::reply::{
    accepts, bad_request, header_str, internal_error, json_reply, not_acceptable, parse_error, read_capped,
    session_ended, unsupported_media_type, PROTOCOL_VERSION_HEADER,
};
use super::session::{CloseOnDrop, HttpSession};
use super::sse::SseReply;
use super::state::HttpState;
use super::stateless;
use super::streams::Event;
use super::table::new_session_id;
use crate::server::client_state::QuotaKey;
use crate::server::Preset;
use crate::transport::Extensions;

/// One POSTed message of the handshake era, as read.
struct Posted<'a> {
    frame: &'a [u8],
    message: MessageRef<'a>,
    /// Its id, when it is a request.
    request_id: Option<RequestId>,
    /// It is an `initialize` request.
    initialize: bool,
    extensions: Extensions,
}

/// A request for a session's engine.
struct Delivery<'a> {
    id: RequestId,
    frame: &'a [u8],
    message: MessageRef<'a>,
    extensions: Extensions,
}

impl<'a> Posted<'a> {
    /// The request to deliver; `None` for a notification or a response.
    fn delivery(self) -> Option<Delivery<'a>> {
        Some(Delivery {
            id: self.request_id?,
            frame: self.frame,
            message: self.message,
            extensions: self.extensions,
        })
    }
}

pub(super) async fn post(
    state: &HttpState,
    headers: &HeaderMap,
    body: Body,
    extensions: Extensions,
    client: &Client,
) -> Response {
    if !accepts(headers, &["application/json", "text/event-stream"]) {
        return not_acceptable("Accept must list application/json and text/event-stream");
    }
    let json = header_str(headers, header::CONTENT_TYPE).is_some_and(|c| {
        c.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return unsupported_media_type("Content-Type must be application/json");
    }
    let limit = state.config.max_body_bytes;
    let bytes = match read_capped(headers, body, limit).await {
        Ok(b) => b,
        Err(e) => return e.reply(limit),
    };
    let frame = &bytes[..];
    state.inspector.incoming(frame);
    #[cfg(feature = "otel")]
    let extensions = trace_headers(headers, extensions);
    let message = match jsonrpc::parse(frame) {
        Ok(m) => m,
        Err(FrameError::Parse(e)) => return parse_error(&format!("Parse error: {e}")),
        Err(FrameError::Invalid { id, reason }) => {
            return bad_request(&format!("Invalid request: {reason}"), id.as_ref())
        }
        Err(FrameError::Ignore(_)) => return StatusCode::ACCEPTED.into_response(),
    };
    let named = state.names_every_client || (state.counts_clients && names_tasks(frame));
    let extensions = if named {
        with_quota_key(extensions, client)
    } else {
        extensions
    };
    if stateless::is_stateless_era(headers) {
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

    let mut posted = Posted {
        frame,
        message,
        request_id,
        initialize: is_initialize,
        extensions,
    };
    if state.config.sessionless {
        return sessionless(state, posted, version).await;
    }
    if is_initialize {
        return initialize(state, headers, posted, client).await;
    }
    let session = match state.session_for(headers, client, posted.request_id.as_ref()).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if state.counts_clients && !named && session.client_declares(tasks::ID) {
        posted.extensions = with_quota_key(posted.extensions, client);
    }
    let response = match posted.request_id {
        Some(id) => {
            let request = Delivery {
                id,
                frame,
                message: posted.message,
                extensions: posted.extensions,
            };
            answer(state, &session, request, None).await
        }
        None => {
            // A response another instance awaits goes there.
            if !state.sessions.forward(&session, frame, &posted.message) {
                session.deliver(frame, posted.message, posted.extensions);
            }
            StatusCode::ACCEPTED.into_response()
        }
    };
    state.sessions.flush(&session).await;
    response
}

/// Whether a body names the Tasks extension: only a request that does (the stateless era and
/// sessionless requests declare it in `_meta`), or that comes on a session whose client
/// declared it, can make a task.
fn names_tasks(frame: &[u8]) -> bool {
    // Built once: making the searcher costs ~900 instructions, the search a few hundred.
    static FINDER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(tasks::ID.as_bytes()));
    FINDER.find(frame).is_some()
}

/// `extensions` naming `client` for per-client task quotas. A format and a map entry: paid
/// only by requests that can make a task (see [`names_tasks`]), on servers that keep tasks.
fn with_quota_key(mut extensions: Extensions, client: &Client) -> Extensions {
    if let Some(key) = client.shared_key() {
        extensions.insert(QuotaKey(key));
    }
    extensions
}

/// Spec: a missing `MCP-Protocol-Version` means 2025-03-26; an unsupported one is a 400.
// A `Response` error is what every caller returns at once; boxing it would buy nothing.
#[allow(clippy::result_large_err)]
fn protocol_version(headers: &HeaderMap, id: Option<&RequestId>) -> Result<ProtocolVersion, Response> {
    match header_str(headers, PROTOCOL_VERSION_HEADER) {
        None => Ok(ProtocolVersion::V2025_03_26),
        Some(v) => match v.trim().parse::<ProtocolVersion>() {
            Ok(v) if v.era() == mcpkit_types::Era::Handshake => Ok(v),
            _ => Err(bad_request(&format!("Unsupported MCP-Protocol-Version: {v}"), id)),
        },
    }
}

/// `initialize` opens a session: a new id, a new engine, the reply carrying `Mcp-Session-Id`.
/// The session belongs to `client`'s verified caller, and counts against its cap.
async fn initialize(state: &HttpState, headers: &HeaderMap, posted: Posted<'_>, client: &Client) -> Response {
    if headers.contains_key(SESSION_ID) {
        return bad_request("initialize must not carry Mcp-Session-Id", posted.request_id.as_ref());
    }
    let session = match state
        .sessions
        .create(&state.launcher, client, posted.request_id.as_ref())
        .await
    {
        Ok(s) => s,
        Err(refused) => return refused,
    };
    tracing::debug!("MCP session {} started", session.id);
    let Some(request) = posted.delivery() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let mut response = answer(state, &session, request, None).await;
    // `initialize` is answered at once (before its reply begins): a session it did not
    // negotiate was refused (an error reply) and is no session at all.
    if !response.status().is_success() || session.not_negotiated() {
        state.sessions.remove(&session);
        return response;
    }
    state.sessions.negotiated(&session).await;
    if let Ok(v) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_ID, v);
    }
    response
}

/// Serve one request on a throwaway, pre-negotiated session (sessionless mode).
async fn sessionless(state: &HttpState, mut posted: Posted<'_>, version: ProtocolVersion) -> Response {
    posted
        .extensions
        .insert(crate::server::client_state::SessionlessRequest);
    let preset = (!posted.initialize).then(|| Preset {
        version,
        capabilities: Default::default(),
        client_info: mcpkit_types::schema::Implementation::new("stateless-client", "0"),
    });
    // A throwaway id of its own, so concurrent sessionless requests never share stored events.
    let Some(id) = new_session_id() else {
        return internal_error("no randomness");
    };
    let session = state.launcher.start_sessionless(id, preset);
    // The session ends with its response: at once for JSON, with the stream for SSE (ending it
    // after the first event lost the result, as nothing can resume without a session).
    let until_done = CloseOnDrop(session.clone());
    match posted.delivery() {
        Some(request) => answer(state, &session, request, Some(until_done)).await,
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// Forward a request to the engine and answer it: plain JSON when its reply is the first thing
/// the handler sends, otherwise an SSE stream carrying everything up to the reply. A
/// `session_guard` lives as long as the answer: dropped here for JSON, with the stream for SSE.
async fn answer(
    state: &HttpState,
    session: &Arc<HttpSession>,
    request: Delivery<'_>,
    session_guard: Option<CloseOnDrop>,
) -> Response {
    let Delivery {
        id,
        frame,
        message,
        extensions,
    } = request;
    let Some((mut rx, stream)) = session.open_request(id.clone()) else {
        return bad_request("request id already in flight", Some(&id));
    };
    // Always SSE: primed before the handler runs, so even its reply is recorded.
    let primed = state.config.always_sse.then(|| session.prime(stream));
    if !session.deliver(frame, message, extensions) {
        return session_ended();
    }
    let retry = Some(state.config.sse_retry);
    let reply = |head: Vec<Event>, rx, guard| {
        SseReply {
            head,
            live: Some(rx),
            retry,
            keep_alive: false,
            with_ids: true,
            guard,
        }
        .respond(state)
    };
    if let Some(prime) = primed {
        return reply(vec![prime], rx, session_guard);
    }
    let may_refuse = state.may_refuse();
    let json = |ev: Event| json_reply(ev.data, may_refuse);
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
    reply(head, rx, session_guard)
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
