//! GET opens the session's standalone SSE stream (or resumes a stream with `Last-Event-ID`);
//! DELETE ends the session. Neither exists in the stateless era or in sessionless mode.
//!
//! One GET stream per session: while it is open, another GET gets 409 Conflict, with or
//! without a `Last-Event-ID` naming it (a resume does not steal a live stream; the client
//! retries once the old connection is gone). Resuming a request's stream by its event id is
//! not affected.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use mcpkit_types::headers::LAST_EVENT_ID;

use super::admission::Client;
use super::reply::{accepts, conflict, header_str, method_not_allowed, not_acceptable};
use super::sse::SseReply;
use super::state::HttpState;
use super::stateless::is_stateless_era;

pub(super) async fn get(state: &HttpState, headers: &HeaderMap, client: &Client) -> Response {
    // Spec: 2026-07-28 has no GET stream.
    let stateless_era = is_stateless_era(headers);
    if stateless_era || state.config.sessionless || !state.config.enable_get_stream {
        return method_not_allowed(state.allowed_methods());
    }
    if !accepts(headers, &["text/event-stream"]) {
        return not_acceptable("Accept must list text/event-stream");
    }
    let session = match state.session_of(headers, client).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let stream = |head, live, retry| {
        SseReply {
            head,
            live,
            retry,
            keep_alive: true,
            with_ids: true,
            guard: (),
        }
        .respond(state)
    };
    if let Some(last) = header_str(headers, LAST_EVENT_ID) {
        if let Some(resumed) = session.resume(last).await {
            return stream(resumed.missed, resumed.live, None);
        }
    }
    match session.open_standalone().await {
        Some(opened) => stream(opened.missed, opened.live, Some(state.config.sse_retry)),
        None => conflict("A GET stream is already open"),
    }
}

pub(super) async fn delete(state: &HttpState, headers: &HeaderMap, client: &Client) -> Response {
    if state.config.sessionless || is_stateless_era(headers) {
        return method_not_allowed(state.allowed_methods());
    }
    let session = match state.session_of(headers, client).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    state.sessions.end(&session).await;
    tracing::debug!("MCP session {} ended by its client (DELETE)", session.id);
    StatusCode::OK.into_response()
}
