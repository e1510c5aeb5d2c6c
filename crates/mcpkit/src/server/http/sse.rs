//! SSE responses: events in wire form, a priming event first, keep-alive comments on streams
//! that may idle, and an end when the endpoint shuts down.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::state::HttpState;
use super::streams::Event;

/// How long a stream that may idle stays silent before a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

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

/// Cancels a stateless-era request when its response stream ends or the client goes away
/// (spec: 2026-07-28 `basic/transports/streamable-http` "Cancellation").
pub(super) struct CancelOnDrop(pub(super) CancellationToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// An SSE response: `head` first (the first event carries `retry`), then whatever `live`
/// delivers until it closes; the `guard` (such as [`CancelOnDrop`]) is dropped when the stream
/// ends or the client goes away.
pub(super) struct SseReply<G> {
    pub(super) head: Vec<Event>,
    pub(super) live: Option<mpsc::Receiver<Event>>,
    /// The reconnection delay the first event advises.
    pub(super) retry: Option<Duration>,
    /// A comment every 15 s while the stream idles (streams that may idle: the GET stream).
    pub(super) keep_alive: bool,
    /// Events carry their ids (2026-07-28 streams are not resumable: no ids).
    pub(super) with_ids: bool,
    pub(super) guard: G,
}

impl<G: Send + 'static> SseReply<G> {
    /// The response, its stream ending when the endpoint shuts down.
    pub(super) fn respond(self, state: &HttpState) -> Response {
        let SseReply {
            head,
            live,
            retry,
            keep_alive,
            with_ids,
            guard,
        } = self;
        let stop = state.shutdown.clone();
        // Counted in `mcpkit.server.streams.open` until the stream ends or the client goes away.
        let guard = (guard, state.telemetry().stream_opened());
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
                    _ = tokio::time::sleep(KEEP_ALIVE), if keep_alive => {
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
}
