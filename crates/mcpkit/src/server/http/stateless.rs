//! Stateless-era POSTs (spec: 2026-07-28 `basic/transports/streamable-http` "Request Metadata",
//! "Server Validation", "Cancellation"): no session; the headers that mirror the body must
//! match it; JSON-RPC errors map to HTTP statuses; the request lives as long as its response.

use std::borrow::Cow;
use std::future::Future;
use std::task::Poll;

use axum::http::{header, HeaderMap, HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use mcpkit_types::headers::{self, name_member};
use mcpkit_types::jsonrpc::{self, OutgoingError};
use mcpkit_types::method::{CallTool, Method};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::reply::{Refusal, PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER};
use super::sse::{CancelOnDrop, SseReply};
use super::state::{HttpState, StatelessServer};
use super::streams::Event;
use crate::engine::{self, IncomingRequest, Peer, Role};
use crate::server::stateless::{self, MetaText};
use crate::server::Server;
use crate::transport::Extensions;

/// Whether a POST is a stateless-era request: no session, and a protocol version header that
/// names no handshake-era revision (a version we do not know is answered statelessly too,
/// with UnsupportedProtocolVersion).
pub(super) fn is_stateless_era(headers: &HeaderMap) -> bool {
    if headers.contains_key(&SESSION_ID_HEADER) {
        return false;
    }
    match headers.get(&PROTOCOL_VERSION_HEADER).and_then(|v| v.to_str().ok()) {
        Some(v) => !matches!(v.trim().parse::<ProtocolVersion>(), Ok(v) if v.era() == mcpkit_types::Era::Handshake),
        None => false,
    }
}

/// A request's params read once, for the header checks, the `_meta` validation and dispatch:
/// the members the headers mirror stay borrowed from the body (nothing is decoded unless a
/// header is compared with it), and so do the protocol fields of `_meta`.
#[derive(Deserialize, Default)]
struct StatelessParams<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, rename = "taskId", default)]
    task_id: Option<&'a RawValue>,
    #[serde(borrow, rename = "_meta", default)]
    meta: Option<MetaText<'a>>,
}

/// The mirrored members alone, for params whose `_meta` does not decode (that error is
/// dispatch's to report, after the header checks).
#[derive(Deserialize, Default)]
struct ProbeParams<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, rename = "taskId", default)]
    task_id: Option<&'a RawValue>,
    #[serde(borrow, rename = "_meta", default)]
    meta: Option<ProbeMeta<'a>>,
}

#[derive(Deserialize, Default)]
struct ProbeMeta<'a> {
    #[serde(borrow, rename = "io.modelcontextprotocol/protocolVersion", default)]
    protocol_version: Option<&'a RawValue>,
}

/// A request's params as the header checks and dispatch see them.
struct Read<'a> {
    name: Option<&'a RawValue>,
    uri: Option<&'a RawValue>,
    arguments: Option<&'a RawValue>,
    task_id: Option<&'a RawValue>,
    meta: MetaRead<'a>,
}

enum MetaRead<'a> {
    /// `_meta` read in the same pass (or absent): validated after the header checks.
    Typed(Option<MetaText<'a>>),
    /// `_meta` did not decode: only its version was probed, and dispatch reads it again to
    /// report what is wrong with it.
    Probed(Option<Cow<'a, str>>),
}

impl Read<'_> {
    fn protocol_version(&self) -> Option<&str> {
        match &self.meta {
            MetaRead::Typed(m) => m.as_ref()?.protocol_version(),
            MetaRead::Probed(v) => v.as_deref(),
        }
    }
}

/// Read the params once: the mirrored members and, when it decodes, the typed `_meta`.
fn read_params(params: Option<&RawValue>) -> Read<'_> {
    let text = params.map_or("{}", RawValue::get);
    // Only an object is read in one pass (a derived struct would also take an array).
    if text.trim_start().starts_with('{') {
        if let Ok(p) = serde_json::from_str::<StatelessParams<'_>>(text) {
            return Read {
                name: p.name,
                uri: p.uri,
                arguments: p.arguments,
                task_id: p.task_id,
                meta: MetaRead::Typed(p.meta),
            };
        }
    }
    let p: ProbeParams<'_> = params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or_default();
    Read {
        name: p.name,
        uri: p.uri,
        arguments: p.arguments,
        task_id: p.task_id,
        meta: MetaRead::Probed(string_of(p.meta.and_then(|m| m.protocol_version))),
    }
}

/// A member's text when it is a JSON string (other shapes are dispatch's to refuse).
fn string_of(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let text = raw?.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        // Escapes need an owned copy.
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

// Looked up by `HeaderName`: a `&str` name is parsed and lower-cased on every lookup.
const MCP_METHOD_HEADER: HeaderName = HeaderName::from_static(headers::MCP_METHOD);
const MCP_NAME_HEADER: HeaderName = HeaderName::from_static(headers::MCP_NAME);

fn header<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, ErrorObject> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim_matches([' ', '\t'])))
            .map_err(|_| mismatch(format!("{name} holds characters that are not allowed in a header"))),
    }
}

/// Check the mirrored headers of a request (its method and params, already read from the body)
/// against its body.
fn check_headers(headers: &HeaderMap, method: &str, params: &Read<'_>, server: &Server) -> Result<(), ErrorObject> {
    match header(headers, &MCP_METHOD_HEADER)? {
        None => return Err(mismatch("the Mcp-Method header is required".into())),
        Some(h) if h != method => {
            return Err(mismatch(format!(
                "Mcp-Method header value {h:?} does not match body method {method:?}"
            )))
        }
        Some(_) => {}
    }
    if let (Some(h), Some(body)) = (header(headers, &PROTOCOL_VERSION_HEADER)?, params.protocol_version()) {
        if h != body {
            return Err(mismatch(format!(
                "MCP-Protocol-Version header {h:?} does not match _meta protocolVersion {body:?}"
            )));
        }
    }
    if let Some(member) = name_member(method) {
        let body = match member {
            "uri" => params.uri,
            "taskId" => params.task_id,
            _ => params.name,
        };
        if let Some(body) = string_of(body) {
            let Some(h) = header(headers, &MCP_NAME_HEADER)? else {
                return Err(mismatch(format!("the Mcp-Name header is required for {method}")));
            };
            let decoded = headers::decode_value(h).map_err(|e| mismatch(format!("Mcp-Name: {e}")))?;
            if decoded != body {
                return Err(mismatch(format!(
                    "Mcp-Name header value {decoded:?} does not match body value {body:?}"
                )));
            }
        }
    }
    if method == CallTool::NAME {
        let snap = server.snapshot();
        let declared = string_of(params.name).map_or(&[][..], |tool| snap.tool_header_params(&tool));
        if !declared.is_empty() {
            // Decoded only for a tool that declares header parameters.
            let args: Value = params
                .arguments
                .and_then(|a| serde_json::from_str(a.get()).ok())
                .unwrap_or(Value::Null);
            for p in declared {
                // A declared name that is no valid header name cannot have been sent.
                let h = match HeaderName::try_from(p.header()) {
                    Ok(name) => header(headers, &name)?,
                    Err(_) => None,
                };
                let decoded = h
                    .map(headers::decode_value)
                    .transpose()
                    .map_err(|e| mismatch(format!("Mcp-Param-{}: {e}", p.name)))?;
                match (headers::value_at(&args, &p.path), decoded) {
                    (Some(body), Some(d)) if headers::matches(&d, body, p.kind) => {}
                    (Some(body), Some(d)) => {
                        return Err(mismatch(format!(
                            "Mcp-Param-{} header value {d:?} does not match body value {body}",
                            p.name
                        )))
                    }
                    (Some(_), None) => {
                        return Err(mismatch(format!(
                            "the Mcp-Param-{} header is required when arguments.{} is present",
                            p.name,
                            p.path.join(".")
                        )))
                    }
                    (None, _) => {}
                }
            }
        }
    }
    Ok(())
}

/// The HTTP status of a stateless-era JSON reply carrying `error` (none for a result): 404 for
/// an unknown method, 429 for one refused by a limit of the server's middleware, 403 for want of an item's scopes, 400 for a request the server refuses as malformed (spec: 2026-07-28
/// `basic/index` "_meta", `basic/transports/streamable-http`), 200 otherwise.
fn status_of(error: Option<ErrorCode>) -> StatusCode {
    match error {
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(ErrorCode::RATE_LIMITED) => StatusCode::TOO_MANY_REQUESTS,
        Some(ErrorCode::INSUFFICIENT_SCOPE) => StatusCode::FORBIDDEN,
        Some(
            ErrorCode::PARSE_ERROR
            | ErrorCode::INVALID_REQUEST
            | ErrorCode::INVALID_PARAMS
            | ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Serve one stateless-era request: plain JSON when its reply comes first and soon, otherwise
/// an SSE stream (not resumable in 2026-07-28, so no event ids) carrying the request's
/// notifications, then its reply. Closing the stream cancels the request.
pub(super) async fn post(
    state: &HttpState,
    stateless: &StatelessServer,
    headers: &HeaderMap,
    request: jsonrpc::RequestRef<'_>,
    extensions: Extensions,
) -> Response {
    let params = read_params(request.params);
    if let Err(e) = check_headers(headers, &request.method, &params, &stateless.server) {
        let body = serde_json::to_vec(&OutgoingError::new(Some(&request.id), &e)).unwrap_or_default();
        state.inspector.outgoing(&body);
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
    }
    // Validated here, from the one read: dispatch does not parse `_meta` again.
    let meta = match params.meta {
        MetaRead::Typed(m) => Some(stateless::validate(m)),
        MetaRead::Probed(_) => None,
    };
    let cancel = CancellationToken::new();
    let request = IncomingRequest {
        id: request.id,
        method: request.method.into_owned(),
        params: request.params.map(ToOwned::to_owned),
        cancel: cancel.clone(),
        extensions,
    };
    let (peer, mut sent) = Peer::detached_until(stateless.server.peer_options(), cancel.clone());
    peer.telemetry_scope()
        .set_transport(crate::telemetry::NetworkTransport::Tcp);
    let service = stateless.service.clone();
    let mut reply = Box::pin(async move {
        let handle = |peer, request| match meta {
            Some(meta) => service.handle_stateless(peer, request, meta),
            None => service.handle_request(peer, request),
        };
        engine::serve_one(handle, peer, request).await
    });
    let json = |reply: Reply| {
        let Some((frame, error)) = reply else {
            return StatusCode::ACCEPTED.into_response();
        };
        state.inspector.outgoing(&frame);
        let refusal = matches!(error, Some(ErrorCode::RATE_LIMITED | ErrorCode::INSUFFICIENT_SCOPE))
            .then(|| Refusal::of(&frame))
            .flatten();
        let mut r = (status_of(error), [(header::CONTENT_TYPE, "application/json")], frame).into_response();
        if let Some(refusal) = refusal {
            refusal.apply(&mut r);
        }
        r
    };
    let early = if state.config.always_sse {
        Early::Waited
    } else if let Poll::Ready(done) = std::future::poll_fn(|cx| Poll::Ready(reply.as_mut().poll(cx))).await {
        // Most handlers answer on their first poll: no timer for them.
        Early::Done(done)
    } else {
        tokio::select! {
            biased;
            note = sent.recv() => Early::Note(note),
            done = &mut reply => Early::Done(done),
            _ = tokio::time::sleep(state.config.json_wait) => Early::Waited,
        }
    };
    // A reply that came after notifications goes on the stream behind them, as on a session.
    let (first, done) = match early {
        Early::Done(done) => match sent.try_recv() {
            None => return json(done),
            note => (note, Some(done)),
        },
        Early::Note(note) => (note, None),
        Early::Waited => (None, None),
    };
    // Bounded: a client that stops reading loses its stream (and with it the request, which
    // nothing can resume on this wire) instead of growing the server's memory.
    let (tx, rx) = mpsc::channel::<Event>(state.config.stream_buffer.max(1));
    let inspector = state.inspector.clone();
    let event = move |frame: Vec<u8>| {
        inspector.outgoing(&frame);
        Event {
            id: String::new(),
            data: Bytes::from(frame),
            is_reply: false,
        }
    };
    if let Some(frame) = first.and_then(engine::Outgoing::into_frame) {
        let _ = tx.try_send(event(frame));
    }
    if let Some(done) = done {
        end_stream(&mut sent, done, |frame| {
            let _ = tx.try_send(event(frame));
        });
    } else {
        let stop = cancel.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => break,
                    note = sent.recv() => match note {
                        Some(engine::Outgoing::Frame(frame, _)) => {
                            if tx.try_send(event(frame)).is_err() {
                                break;
                            }
                        }
                        Some(engine::Outgoing::End(_)) => {}
                        // Every sender is gone: only the reply can still come.
                        None => {
                            if let Some((frame, _)) = (&mut reply).await {
                                let _ = tx.try_send(event(frame));
                            }
                            break;
                        }
                    },
                    done = &mut reply => {
                        end_stream(&mut sent, done, |frame| {
                            let _ = tx.try_send(event(frame));
                        });
                        break;
                    }
                }
            }
        });
    }
    SseReply {
        head: Vec::new(),
        live: Some(rx),
        retry: None,
        keep_alive: true,
        with_ids: false,
        guard: Some(CancelOnDrop(cancel)),
    }
    .respond(state)
}

/// A request's reply frame and its error code, if it is answered (see `engine::serve_one`).
type Reply = Option<(Vec<u8>, Option<ErrorCode>)>;

/// How a request stands when its answer must start.
enum Early {
    /// Its reply came (plain JSON, unless it sent something first).
    Done(Reply),
    /// It sent something before replying: an SSE stream, beginning with that.
    Note(Option<engine::Outgoing>),
    /// Neither within the JSON wait (or every answer is SSE).
    Waited,
}

/// The end of a request's stream: what it sent, then its reply.
fn end_stream(sent: &mut engine::Sent, reply: Reply, mut push: impl FnMut(Vec<u8>)) {
    while let Some(out) = sent.try_recv() {
        if let Some(frame) = out.into_frame() {
            push(frame);
        }
    }
    if let Some((frame, _)) = reply {
        push(frame);
    }
}
