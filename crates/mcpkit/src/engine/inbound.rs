//! What the other side sends: one connection's dispatcher. Each request gets an entry in the
//! in-flight map (a second request with the same id is refused), its handler is polled once on
//! the spot and answered inline when it is already done, else it runs in its own task.
//! Notifications are handled one at a time, in arrival order.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use futures_util::FutureExt;
use mcpkit_types::jsonrpc::{self, MessageRef, OutgoingError, OutgoingResult};
use mcpkit_types::method::{Cancelled, NotificationMethod, Progress};
use mcpkit_types::schema::CancelledParams;
use mcpkit_types::{ErrorCode, ErrorObject, RequestId};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::{BoxFuture, HandlerResult, IncomingRequest, Peer, Role};
use crate::sync::lock;
use crate::telemetry::Inbound;
use crate::transport::{Extensions, Route};

/// One connection's incoming side: classifies each frame and runs its handler. Requests run
/// concurrently (a handler that completes at its first poll is answered on the spot);
/// notifications are handled one at a time, in arrival order.
pub(crate) struct Dispatcher {
    peer: Peer,
    role: Arc<dyn Role>,
    limit: Arc<Semaphore>,
    notes: Mutex<Notes>,
}

type Note = (String, Option<Box<RawValue>>);

/// Ordered notification handling: inline while every handler completes at once; after one has
/// to wait, it and every later notification go through a queue and a task, in order.
#[derive(Default)]
struct Notes {
    queue: Option<mpsc::UnboundedSender<Note>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Dispatcher {
    pub(super) fn new(peer: Peer, role: Arc<dyn Role>) -> Dispatcher {
        let limit = Arc::new(Semaphore::new(peer.shared.options.max_concurrent_requests.max(1)));
        Dispatcher {
            peer,
            role,
            limit,
            notes: Mutex::new(Notes::default()),
        }
    }

    /// The handle for sending to the other side.
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Classify one incoming frame and act on it.
    pub(crate) fn on_frame(&self, bytes: &[u8], extensions: Extensions) {
        match jsonrpc::parse(bytes) {
            Ok(message) => self.on_message(message, extensions),
            Err(e) => match e.reply() {
                Some((id, err)) => self.peer.send_error(id.as_ref(), &err),
                None => tracing::debug!("ignoring a malformed frame: {e:?}"),
            },
        }
    }

    /// Act on one message already read from its frame (the HTTP server reads each POST body
    /// once, for its own checks and for this).
    pub(crate) fn on_message(&self, message: MessageRef<'_>, extensions: Extensions) {
        match message {
            MessageRef::Request(r) => {
                let request = IncomingRequest {
                    id: r.id,
                    method: r.method.into_owned(),
                    params: r.params.map(ToOwned::to_owned),
                    cancel: self.peer.shared.closed.child_token(),
                    extensions,
                };
                self.on_request(request);
            }
            MessageRef::Notification(n) => match &*n.method {
                Cancelled::NAME => {
                    // The engine acts on it itself (no handler runs), so its span is made here.
                    let span = Inbound::start(
                        self.peer.telemetry_scope(),
                        Cancelled::NAME,
                        None,
                        n.params,
                        &extensions,
                    );
                    let entered = span.as_ref().map(|s| s.span().enter());
                    self.peer.on_cancelled(n.params);
                    drop(entered);
                    if let Some(span) = span {
                        span.handled();
                    }
                }
                Progress::NAME => {
                    self.peer.on_progress(n.params);
                    self.on_notification(n.method.into_owned(), n.params.map(ToOwned::to_owned));
                }
                _ => self.on_notification(n.method.into_owned(), n.params.map(ToOwned::to_owned)),
            },
            MessageRef::Response(r) => self.peer.on_response(r.id, r.outcome),
        }
    }

    fn on_request(&self, request: IncomingRequest) {
        let peer = &self.peer;
        {
            let mut inflight = lock(&peer.shared.inflight);
            if inflight.contains_key(&request.id) {
                drop(inflight);
                let e = ErrorObject::invalid_request(format!("request id {} is already in flight", request.id));
                peer.send_error(Some(&request.id), &e);
                return;
            }
            inflight.insert(request.id.clone(), request.cancel.clone());
        }
        let id = request.id.clone();
        let cancel = request.cancel.clone();
        // The handler's synchronous part runs here, in arrival order (so `initialize` is
        // settled before the next request is looked at); its future runs on its own.
        let role = &self.role;
        let mut handler = start(peer, request, |peer, request| role.handle_request(peer, request));
        // A handler that completes at its first poll (most do: echo, lists, ping) is answered
        // right here, without a task. Only when a slot is free without waiting, so the
        // concurrency limit and its queue order hold.
        let Ok(permit) = self.limit.clone().try_acquire_owned() else {
            let wait = Permit::Wait(self.limit.clone());
            tokio::spawn(run_request(peer.clone(), id, cancel, handler, wait));
            return;
        };
        let mut cx = Context::from_waker(Waker::noop());
        match std::panic::catch_unwind(AssertUnwindSafe(|| handler.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(result)) => {
                drop(permit);
                finish_request(peer, id, &cancel, Some(Ok(result)));
            }
            Err(panic) => {
                drop(permit);
                finish_request(peer, id, &cancel, Some(Err(panic)));
            }
            // Not done: it goes on in its own task, which polls it again (with a real waker)
            // straight away.
            Ok(Poll::Pending) => {
                tokio::spawn(run_request(peer.clone(), id, cancel, handler, Permit::Held(permit)));
            }
        }
    }

    fn on_notification(&self, method: String, params: Option<Box<RawValue>>) {
        let mut notes = lock(&self.notes);
        if let Some(queue) = &notes.queue {
            // An earlier handler is still running: keep the order.
            let _ = queue.send((method, params));
            return;
        }
        let span = Inbound::start(
            self.peer.telemetry_scope(),
            &method,
            None,
            params.as_deref(),
            &Extensions::default(),
        );
        let entered = span.as_ref().map(|s| s.span().enter());
        let setup = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.role.handle_notification(self.peer.clone(), method, params)
        }));
        drop(entered);
        let Ok(mut fut) = setup else {
            tracing::error!("a notification handler panicked");
            return;
        };
        if let Some(span) = span {
            fut = span.wrap_notification(fut);
        }
        let mut cx = Context::from_waker(Waker::noop());
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(())) => {}
            Err(_) => tracing::error!("a notification handler panicked"),
            // This handler waits: it and every later notification go through one task, in
            // order, from now on.
            Ok(Poll::Pending) => {
                let (tx, mut rx) = mpsc::unbounded_channel::<Note>();
                let role = self.role.clone();
                let peer = self.peer.clone();
                notes.task = Some(tokio::spawn(async move {
                    if AssertUnwindSafe(fut).catch_unwind().await.is_err() {
                        tracing::error!("a notification handler panicked");
                    }
                    while let Some((method, params)) = rx.recv().await {
                        let span = Inbound::start(
                            peer.telemetry_scope(),
                            &method,
                            None,
                            params.as_deref(),
                            &Extensions::default(),
                        );
                        let mut fut = role.handle_notification(peer.clone(), method, params);
                        if let Some(span) = span {
                            fut = span.wrap_notification(fut);
                        }
                        if AssertUnwindSafe(fut).catch_unwind().await.is_err() {
                            tracing::error!("a notification handler panicked");
                        }
                    }
                }));
                notes.queue = Some(tx);
            }
        }
    }

    /// No more input: let queued notification handlers finish.
    pub(super) async fn end_notes(&self) {
        let task = {
            let mut notes = lock(&self.notes);
            notes.queue = None;
            notes.task.take()
        };
        if let Some(task) = task {
            let _ = task.await;
        }
    }

    /// Whether the connection has ended.
    #[cfg(feature = "http-server")]
    pub(crate) fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// End a connection started with [`start_direct`](super::start_direct): nothing more is
    /// dispatched or sent, callers waiting for an answer from the other side fail, running
    /// handlers are cancelled.
    #[cfg(feature = "http-server")]
    pub(crate) fn shutdown(&self) {
        self.peer.shared.scope.session_ended(None);
        self.peer.shared.closed.cancel();
        lock(&self.notes).queue = None;
        self.peer.fail_pending();
        self.peer.cancel_inflight();
    }
}

impl Peer {
    fn on_cancelled(&self, params: Option<&RawValue>) {
        let Some(p) = params.and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok()) else {
            return;
        };
        let Some(id) = p.request_id else { return };
        // Remove first so the handler, if it finishes in the race, sends nothing.
        if let Some(token) = self.shared.remove_inflight(&id) {
            token.cancel();
        }
    }
}

/// Answer one request without a connection loop (the stateless HTTP path): the same steps as a
/// request of a connection ([`start`], [`run_to_end`], [`reply_frame`]), and the reply frame
/// returned instead of sent (`None` when the request was cancelled: no reply), with the error
/// code when the reply is an error. `handle` is the role's `handle_request` (or a variant of it
/// that knows more of the request).
#[cfg(feature = "http-server")]
pub(crate) async fn serve_one(
    handle: impl FnOnce(Peer, IncomingRequest) -> BoxFuture<HandlerResult>,
    peer: Peer,
    request: IncomingRequest,
) -> Option<(Vec<u8>, Option<ErrorCode>)> {
    let id = request.id.clone();
    let cancel = request.cancel.clone();
    let handler = start(&peer, request, handle);
    let outcome = run_to_end(handler, &cancel).await?;
    reply_frame(&id, outcome)
}

/// What running a handler gave: its result, or the payload of its panic.
type Ran = std::result::Result<HandlerResult, Box<dyn std::any::Any + Send>>;

/// The handler of `request`, in the request's span (when telemetry listens): its synchronous
/// part runs now, and a panic there becomes the request's panic (answered -32603), never the
/// caller's.
fn start(
    peer: &Peer,
    request: IncomingRequest,
    handle: impl FnOnce(Peer, IncomingRequest) -> BoxFuture<HandlerResult>,
) -> BoxFuture<HandlerResult> {
    let span = Inbound::start(
        peer.telemetry_scope(),
        &request.method,
        Some(&request.id),
        request.params.as_deref(),
        &request.extensions,
    );
    let entered = span.as_ref().map(|s| s.span().enter());
    let handler = std::panic::catch_unwind(AssertUnwindSafe(|| handle(peer.clone(), request)));
    drop(entered);
    let handler: BoxFuture<HandlerResult> = match handler {
        Ok(f) => f,
        Err(_) => Box::pin(async { std::panic::panic_any("handler setup panicked") }),
    };
    match span {
        Some(span) => span.wrap_request(handler),
        None => handler,
    }
}

/// Run `handler` to its end, or until the request is cancelled (`None`).
async fn run_to_end(handler: BoxFuture<HandlerResult>, cancel: &CancellationToken) -> Option<Ran> {
    tokio::select! {
        r = AssertUnwindSafe(handler).catch_unwind() => Some(r),
        _ = cancel.cancelled() => None,
    }
}

/// The reply to request `id` for what its handler gave, with the error code when it is an
/// error; `None` (logged) when it cannot be serialized.
fn reply_frame(id: &RequestId, ran: Ran) -> Option<(Vec<u8>, Option<ErrorCode>)> {
    let (bytes, code) = match ran {
        Ok(Ok(result)) => {
            // Sized up front: the result is most of the frame, and growing the buffer copies it.
            let mut frame = Vec::with_capacity(result.get().len() + 64);
            let written = serde_json::to_writer(&mut frame, &OutgoingResult::new(id, &*result));
            (written.map(|()| frame), None)
        }
        Ok(Err(e)) => (serde_json::to_vec(&OutgoingError::new(Some(id), &e)), Some(e.code)),
        Err(_panic) => {
            tracing::error!("the handler for request {id} panicked");
            let e = ErrorObject::internal("internal error: the request handler panicked");
            (serde_json::to_vec(&OutgoingError::new(Some(id), &e)), Some(e.code))
        }
    };
    bytes
        .map(|b| (b, code))
        .map_err(|e| tracing::error!("could not serialize a reply: {e}"))
        .ok()
}

/// A request's concurrency slot: already taken, or to wait for.
enum Permit {
    Held(OwnedSemaphorePermit),
    Wait(Arc<Semaphore>),
}

async fn run_request(
    peer: Peer,
    id: RequestId,
    cancel: CancellationToken,
    handler: BoxFuture<HandlerResult>,
    permit: Permit,
) {
    let _permit = match permit {
        Permit::Held(p) => p,
        Permit::Wait(limit) => {
            let Ok(p) = limit.acquire_owned().await else {
                return;
            };
            p
        }
    };
    let outcome = run_to_end(handler, &cancel).await;
    finish_request(&peer, id, &cancel, outcome);
}

/// Send a request's answer (or, if it was cancelled, only release its stream).
fn finish_request(peer: &Peer, id: RequestId, cancel: &CancellationToken, outcome: Option<Ran>) {
    let still_wanted = peer.shared.remove_inflight(&id).is_some();
    match outcome {
        Some(ran) if still_wanted && !cancel.is_cancelled() => {
            if let Some((frame, _)) = reply_frame(&id, ran) {
                let _ = peer.send_out(super::Outgoing::Frame(frame, Route::Reply(id)));
            }
        }
        #[cfg(feature = "http-server")]
        _ => peer.finished_without_reply(id),
        // Only the HTTP server has a stream per request to release.
        #[cfg(not(feature = "http-server"))]
        _ => {}
    }
}
