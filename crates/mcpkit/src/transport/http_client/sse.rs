//! Reading SSE streams: a request's response stream, followed until its response and resumed
//! with `Last-Event-ID` when it drops, and the standalone GET stream (spec: `basic/transports`
//! "Listening for Messages from the Server", "Resumability and Redelivery").

use std::sync::Arc;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use mcpkit_types::headers::{LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
use mcpkit_types::{ErrorObject, RequestId};
use reqwest::header;
use reqwest::StatusCode;
use sse_stream::{Sse, SseByteStream};

use super::post::{media_type, Answer, Delivery};
use super::Inner;
use crate::sync::lock;

/// `Accept` of every GET.
pub(super) const ACCEPT_SSE: &str = "text/event-stream";
/// The reconnection delay when the server sent no `retry` field.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// An SSE event stream, as the readers consume it.
pub(super) trait SseEvents: Stream<Item = Result<Sse, sse_stream::Error>> + Send + Unpin + 'static {}
impl<T: Stream<Item = Result<Sse, sse_stream::Error>> + Send + Unpin + 'static> SseEvents for T {}

pub(super) fn is_sse(response: &reqwest::Response) -> bool {
    media_type(response) == "text/event-stream"
}

/// Events without a type, or of type `message`, carry messages.
pub(super) fn is_message_event(event: Option<&str>) -> bool {
    matches!(event, None | Some("" | "message"))
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

impl Cursor {
    /// Takes in one SSE block: moves the cursor by its `id` and `retry`, and returns whether it
    /// moved the stream on (a new id or a message) and the JSON-RPC frame it carries, if any.
    fn absorb(&mut self, event: Sse) -> (bool, Option<Vec<u8>>) {
        let mut progressed = false;
        if let Some(id) = event.id {
            progressed = true;
            self.last_id = (!id.is_empty()).then_some(id);
        }
        if let Some(ms) = event.retry {
            self.retry = Duration::from_millis(ms);
        }
        let Some(data) = event.data else {
            return (progressed, None);
        };
        if !is_message_event(event.event.as_deref()) || data.trim().is_empty() {
            // Priming events carry no message.
            return (progressed, None);
        }
        (true, Some(data.into_bytes()))
    }
}

/// Decodes an SSE body delivered in `chunks` the way the client reads a response stream, and
/// returns the frames it would hand on, with the resume cursor (last event id, retry delay) at
/// the end. For the fuzz targets in `fuzz/` only (cargo-fuzz builds with `--cfg fuzzing`): not
/// part of the API, and not in any other build.
#[cfg(fuzzing)]
pub async fn sse_frames_for_fuzzing(chunks: Vec<bytes::Bytes>) -> (Vec<Vec<u8>>, Option<String>, Duration) {
    let body = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let mut events = Box::pin(SseByteStream::new(body));
    let mut cursor = Cursor::default();
    let mut frames = Vec::new();
    while let Some(Ok(event)) = events.next().await {
        if let (_, Some(frame)) = cursor.absorb(event) {
            frames.push(frame);
        }
    }
    (frames, cursor.last_id, cursor.retry)
}

/// How reading one SSE connection ended.
#[derive(Debug, Default)]
struct Pumped {
    /// The awaited response arrived: its outcome.
    answer: Option<Result<(), ErrorObject>>,
    /// Something new (an event id or a message) arrived on this connection.
    progressed: bool,
}

impl Inner {
    /// A GET on the endpoint for an SSE stream (standalone, or resuming after `last_event_id`).
    pub(super) async fn get_stream(&self, last_event_id: Option<&str>) -> Result<reqwest::Response, String> {
        super::auth::send(self.auth.as_ref(), &self.url, || self.get_request(last_event_id)).await
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
            req = req.header(SESSION_ID, &*s);
        }
        if let Some(v) = version {
            req = req.header(PROTOCOL_VERSION, &*v);
        }
        if let Some(id) = last_event_id {
            req = req.header(LAST_EVENT_ID, id);
        }
        req
    }

    /// Read a request's SSE stream until its response, resuming with `Last-Event-ID` when the
    /// connection ends first.
    pub(super) async fn follow(
        self: &Arc<Self>,
        first: reqwest::Response,
        id: &RequestId,
        delivery: Delivery,
    ) -> Answer {
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
            let (moved, frame) = cursor.absorb(event);
            out.progressed |= moved;
            let Some(frame) = frame else { continue };
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
    pub(super) fn start_standalone(self: &Arc<Self>) -> tokio::sync::oneshot::Receiver<()> {
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
                Ok(r) if matches!(r.status(), StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED) => {
                    // The stream is optional: a server that routes only POST answers 404 or 405.
                    // Neither says the session is gone; if it is, the next POST's 404 starts a
                    // new session, which reopens this stream.
                    tracing::debug!("the MCP server offers no standalone SSE stream (HTTP {})", r.status());
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
}
