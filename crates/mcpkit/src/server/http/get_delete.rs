//! GET opens the session's standalone SSE stream (or resumes a stream with `Last-Event-ID`);
//! DELETE ends the session. Neither exists in the stateless era or in sessionless mode.
//!
//! One GET stream per session: while it is open, another GET gets 409 Conflict, with or
//! without a `Last-Event-ID` naming it (a resume does not steal a live stream; the client
//! retries once the old connection is gone). Resuming a request's stream by its event id is
//! not affected.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpkit_types::headers::{LAST_EVENT_ID, SESSION_ID};
use mcpkit_types::ErrorCode;

use super::admission::Client;
use super::reply::{accepts, header_str, method_not_allowed, rpc_error};
use super::sse::sse;
use super::state::HttpState;
use super::stateless::is_stateless_era;

pub(super) async fn get(state: &HttpState, headers: &HeaderMap, client: &Client) -> Response {
    // Spec: 2026-07-28 has no GET stream.
    let stateless_era = is_stateless_era(headers, headers.contains_key(SESSION_ID));
    if stateless_era || state.config.sessionless || !state.config.enable_get_stream {
        return method_not_allowed(state.allowed_methods());
    }
    if !accepts(headers, &["text/event-stream"]) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            ErrorCode::INVALID_REQUEST,
            "Accept must list text/event-stream",
            None,
        );
    }
    let session = match state.session_of(headers, client).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Some(last) = header_str(headers, LAST_EVENT_ID) {
        let resumed = match session.link {
            Some(_) => session.resume_shared(last).await,
            None => session.resume(last),
        };
        if let Some(resumed) = resumed {
            return sse(resumed.missed, resumed.live, None, true, state);
        }
    }
    let opened = match session.link {
        Some(_) => session.open_standalone_shared(None).await.map(|r| (r.live, r.missed)),
        None => session.open_standalone().map(|(rx, prime)| (Some(rx), vec![prime])),
    };
    match opened {
        Some((rx, head)) => sse(head, rx, Some(state.config.sse_retry), true, state),
        None => rpc_error(
            StatusCode::CONFLICT,
            ErrorCode::INVALID_REQUEST,
            "A GET stream is already open",
            None,
        ),
    }
}

pub(super) async fn delete(state: &HttpState, headers: &HeaderMap, client: &Client) -> Response {
    if state.config.sessionless || is_stateless_era(headers, headers.contains_key(SESSION_ID)) {
        return method_not_allowed(state.allowed_methods());
    }
    let session = match state.session_of(headers, client).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Some(link) = &session.link {
        link.end(&session.id).await;
    }
    state.sessions.remove(&session);
    tracing::debug!("MCP session {} ended by its client (DELETE)", session.id);
    StatusCode::OK.into_response()
}
