//! The connection engine, one for both roles (spec: `basic/index`, `basic/utilities/cancellation`,
//! `basic/utilities/progress`).
//!
//! A connection has a reader task (parse, classify, dispatch), a writer task (one writer that
//! drains its queue and flushes when the queue is empty), an ordered notification task, and a
//! task for each incoming request whose handler does not complete at its first poll (one that
//! does is answered by the reader itself, without a task). [`Peer`] is a cheap handle for sending requests and notifications.
//! The pending map and the in-flight map are locked only for an insert or a remove, never across
//! an await.
//!
//! MCP semantics, not LSP's: when `notifications/cancelled` arrives the handler is stopped and no
//! response is sent; dropping an outbound request future sends `notifications/cancelled`.

use crate::sync::lock;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use mcpkit_types::jsonrpc::{self, MessageRef, OutgoingError, OutgoingNotification, OutgoingRequest, OutgoingResult};
use mcpkit_types::method::{Method, NotificationMethod};
use mcpkit_types::schema::{CancelledParams, ProgressParams, ProgressToken};
use mcpkit_types::{ErrorCode, ErrorObject, RequestId};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::transport::{Frame, FrameReader, FrameWriter, Route, Transport};

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a request handler produces: the serialized result, or a JSON-RPC error.
pub type HandlerResult = std::result::Result<Box<RawValue>, ErrorObject>;

/// An incoming request, handed to the role's [`Service`].
#[derive(Debug)]
pub struct IncomingRequest {
    /// The id, echoed exactly.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The raw params.
    pub params: Option<Box<RawValue>>,
    /// Fires when the peer cancels the request or the connection ends.
    pub cancel: CancellationToken,
    /// What the transport attached to the request (see [`FrameReader::take_extensions`]).
    pub extensions: crate::transport::Extensions,
}

/// The handler table of one role. Server and client are the same engine with different services.
pub trait Service: Send + Sync + 'static {
    /// Answer one request. This call itself happens in arrival order on the reader; the
    /// returned future runs concurrently with other requests.
    fn handle_request(&self, peer: Peer, request: IncomingRequest) -> BoxFuture<HandlerResult>;
    /// Handle one notification. Notifications are handled one at a time, in arrival order.
    fn handle_notification(&self, peer: Peer, method: String, params: Option<Box<RawValue>>) -> BoxFuture<()>;
}

/// Limits and defaults of one connection.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// How many incoming requests run at once; more wait for a slot (default 256).
    pub max_concurrent_requests: usize,
    /// Default timeout for outgoing requests (default none).
    pub request_timeout: Option<Duration>,
    /// When the peer ends its input, how long requests already read may still run to send
    /// their answers before they are cancelled (default 10 s).
    pub drain_timeout: Duration,
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions {
            max_concurrent_requests: 256,
            request_timeout: None,
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// Per-call options for an outgoing request.
#[derive(Debug, Default)]
pub struct RequestOptions {
    /// Give up after this long (overrides the connection default).
    pub timeout: Option<Duration>,
    /// Restart the timeout whenever progress arrives for this request.
    pub reset_timeout_on_progress: bool,
    /// Where to deliver `notifications/progress` for this request. The caller must also put the
    /// token into the request's `_meta.progressToken`.
    pub progress: Option<(ProgressToken, mpsc::UnboundedSender<ProgressParams>)>,
    /// The incoming request this one is sent on behalf of (routes it to that request's stream
    /// on HTTP).
    pub related: Option<RequestId>,
}

type Outbound = (Vec<u8>, Route);

type Pending = oneshot::Sender<Result<Box<RawValue>>>;

/// A sink that takes each outgoing frame at once, without waiting (see [`start_direct`]).
pub(crate) type DirectSink = Box<dyn Fn(Vec<u8>, Route) + Send + Sync>;

/// Where a connection's outgoing frames go.
enum Outbox {
    /// Queued for the connection's writer task (stream transports).
    Queue(mpsc::UnboundedSender<Outbound>),
    /// Handed to a sink that never waits (an HTTP session routes each frame to its response
    /// stream under a lock): no queue, no writer task.
    Direct(DirectSink),
}

impl Outbox {
    fn send(&self, frame: Outbound, closed: &CancellationToken) -> std::result::Result<(), ()> {
        match self {
            Outbox::Queue(tx) => tx.send(frame).map_err(|_| ()),
            Outbox::Direct(_) if closed.is_cancelled() => Err(()),
            Outbox::Direct(sink) => {
                sink(frame.0, frame.1);
                Ok(())
            }
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            Outbox::Queue(tx) => tx.is_closed(),
            Outbox::Direct(_) => false,
        }
    }
}

struct Shared {
    pending: Mutex<HashMap<RequestId, Pending>>,
    inflight: Mutex<HashMap<RequestId, CancellationToken>>,
    progress: Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<ProgressParams>>>,
    next_id: AtomicI64,
    out: Outbox,
    closed: CancellationToken,
    close_reason: Mutex<Option<Error>>,
    options: PeerOptions,
    /// No connection loop reads answers (see [`Peer::detached`]): requests to the other side
    /// fail at once instead of waiting forever.
    detached: bool,
}

/// A handle to one connection: send requests and notifications to the other side.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("closed", &self.is_closed()).finish()
    }
}

/// The running connection: await [`Connection::closed`] to learn when and why it ended.
#[derive(Debug)]
pub struct Connection {
    peer: Peer,
    done: tokio::task::JoinHandle<()>,
}

impl Connection {
    /// The handle for sending to the other side.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }
    /// Wait until the connection has ended and the writer has drained. `Ok` on a clean end of
    /// stream, the transport error otherwise.
    pub async fn closed(self) -> Result<()> {
        let _ = self.done.await;
        match lock(&self.peer.shared.close_reason).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Start the engine on a transport with the given handler table.
pub fn start<T: Transport>(transport: T, service: Arc<dyn Service>, options: PeerOptions) -> Connection {
    let (reader, writer) = transport.split();
    let (peer, out_rx) = Peer::with_outbox(options, false);
    let writer_task = tokio::spawn(write_loop(writer, out_rx, peer.shared.closed.clone()));
    let dispatcher = Dispatcher::new(peer.clone(), service);
    let done = tokio::spawn(async move {
        read_loop(reader, &dispatcher).await;
        // Let the writer drain what handlers already queued, then stop it.
        dispatcher.peer.shared.closed.cancel();
        let _ = writer_task.await;
    });
    Connection { peer, done }
}

/// Start the engine without a task of its own: the caller hands it each incoming frame
/// ([`Dispatcher::on_frame`]) and every outgoing frame goes straight to `sink`. For transports
/// that already run a task per incoming message (HTTP POSTs): an idle connection then costs a
/// small struct, no task and no queue.
pub(crate) fn start_direct(service: Arc<dyn Service>, options: PeerOptions, sink: DirectSink) -> Dispatcher {
    let peer = Peer::from_outbox(options, false, Outbox::Direct(sink));
    Dispatcher::new(peer, service)
}

/// One connection's incoming side: classifies each frame and runs its handler. Requests run
/// concurrently (a handler that completes at its first poll is answered on the spot);
/// notifications are handled one at a time, in arrival order.
pub(crate) struct Dispatcher {
    peer: Peer,
    service: Arc<dyn Service>,
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
    fn new(peer: Peer, service: Arc<dyn Service>) -> Dispatcher {
        let limit = Arc::new(Semaphore::new(peer.shared.options.max_concurrent_requests.max(1)));
        Dispatcher {
            peer,
            service,
            limit,
            notes: Mutex::new(Notes::default()),
        }
    }

    /// The handle for sending to the other side.
    pub(crate) fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Classify one incoming frame and act on it.
    pub(crate) fn on_frame(&self, bytes: &[u8], extensions: crate::transport::Extensions) {
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
    pub(crate) fn on_message(&self, message: MessageRef<'_>, extensions: crate::transport::Extensions) {
        let peer = &self.peer;
        match message {
            MessageRef::Request(r) => {
                let cancel = peer.shared.closed.child_token();
                {
                    let mut inflight = lock(&peer.shared.inflight);
                    if inflight.contains_key(&r.id) {
                        drop(inflight);
                        let e = ErrorObject::invalid_request(format!("request id {} is already in flight", r.id));
                        peer.send_error(Some(&r.id), &e);
                        return;
                    }
                    inflight.insert(r.id.clone(), cancel.clone());
                }
                let request = IncomingRequest {
                    id: r.id,
                    method: r.method.into_owned(),
                    params: r.params.map(ToOwned::to_owned),
                    cancel,
                    extensions,
                };
                let id = request.id.clone();
                let cancel = request.cancel.clone();
                // The handler's synchronous part runs here, in arrival order (so `initialize`
                // is settled before the next request is looked at); its future runs on its own.
                let handler =
                    std::panic::catch_unwind(AssertUnwindSafe(|| self.service.handle_request(peer.clone(), request)));
                let mut handler: BoxFuture<HandlerResult> = match handler {
                    Ok(f) => f,
                    Err(_) => Box::pin(async { std::panic::panic_any("handler setup panicked") }),
                };
                // A handler that completes at its first poll (most do: echo, lists, ping) is
                // answered right here, without a task. Only when a slot is free without waiting,
                // so the concurrency limit and its queue order hold.
                if let Ok(permit) = self.limit.clone().try_acquire_owned() {
                    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
                    match std::panic::catch_unwind(AssertUnwindSafe(|| handler.as_mut().poll(&mut cx))) {
                        Ok(std::task::Poll::Ready(result)) => {
                            drop(permit);
                            finish_request(peer, id, &cancel, Some(Ok(result)));
                        }
                        Err(panic) => {
                            drop(permit);
                            finish_request(peer, id, &cancel, Some(Err(panic)));
                        }
                        // Not done: it goes on in its own task, which polls it again (with a
                        // real waker) straight away.
                        Ok(std::task::Poll::Pending) => {
                            tokio::spawn(run_request(peer.clone(), id, cancel, handler, Permit::Held(permit)));
                        }
                    }
                } else {
                    let wait = Permit::Wait(self.limit.clone());
                    tokio::spawn(run_request(peer.clone(), id, cancel, handler, wait));
                }
            }
            MessageRef::Notification(n) => match &*n.method {
                "notifications/cancelled" => peer.on_cancelled(n.params),
                "notifications/progress" => {
                    peer.on_progress(n.params);
                    self.on_notification(n.method.into_owned(), n.params.map(ToOwned::to_owned));
                }
                _ => self.on_notification(n.method.into_owned(), n.params.map(ToOwned::to_owned)),
            },
            MessageRef::Response(r) => {
                let waiter = lock(&peer.shared.pending).remove(&r.id);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(r.outcome.map(ToOwned::to_owned).map_err(Error::Rpc));
                    }
                    None => tracing::debug!("ignoring a response to unknown request {}", r.id),
                }
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
        let setup = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.service.handle_notification(self.peer.clone(), method, params)
        }));
        let Ok(mut fut) = setup else {
            tracing::error!("a notification handler panicked");
            return;
        };
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(&mut cx))) {
            Ok(std::task::Poll::Ready(())) => {}
            Err(_) => tracing::error!("a notification handler panicked"),
            Ok(std::task::Poll::Pending) => {
                let (tx, mut rx) = mpsc::unbounded_channel::<Note>();
                let service = self.service.clone();
                let peer = self.peer.clone();
                notes.task = Some(tokio::spawn(async move {
                    if AssertUnwindSafe(fut).catch_unwind().await.is_err() {
                        tracing::error!("a notification handler panicked");
                    }
                    while let Some((method, params)) = rx.recv().await {
                        let fut = service.handle_notification(peer.clone(), method, params);
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
    async fn end_notes(&self) {
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
    pub(crate) fn is_closed(&self) -> bool {
        self.peer.is_closed()
    }

    /// End a connection started with [`start_direct`]: nothing more is dispatched or sent,
    /// callers waiting for an answer from the other side fail, running handlers are cancelled.
    pub(crate) fn shutdown(&self) {
        self.peer.shared.closed.cancel();
        lock(&self.notes).queue = None;
        let reason = self.peer.close_error();
        for (_, tx) in lock(&self.peer.shared.pending).drain() {
            let _ = tx.send(Err(reason.clone()));
        }
        for (_, token) in lock(&self.peer.shared.inflight).drain() {
            token.cancel();
        }
    }
}

async fn write_loop<W: FrameWriter>(mut w: W, mut rx: mpsc::UnboundedReceiver<Outbound>, closed: CancellationToken) {
    loop {
        let frame = tokio::select! {
            biased;
            f = rx.recv() => f,
            _ = closed.cancelled() => {
                // Drain what is already queued before closing.
                while let Ok((f, route)) = rx.try_recv() {
                    if w.write_routed(&f, &route).await.is_err() { break; }
                }
                break;
            }
        };
        let Some((frame, route)) = frame else { break };
        if let Err(e) = w.write_routed(&frame, &route).await {
            tracing::debug!("transport write failed: {e}");
            return;
        }
        // Write everything that is already queued, then flush once.
        while let Ok((f, route)) = rx.try_recv() {
            if let Err(e) = w.write_routed(&f, &route).await {
                tracing::debug!("transport write failed: {e}");
                return;
            }
        }
        if let Err(e) = w.flush().await {
            tracing::debug!("transport flush failed: {e}");
            return;
        }
    }
    let _ = w.close().await;
}

/// How many buffered frames the reader handles before it lets the writer run.
const FRAMES_PER_TURN: usize = 16;

async fn read_loop<R: FrameReader>(mut reader: R, dispatcher: &Dispatcher) {
    let peer = &dispatcher.peer;
    let mut read: usize = 0;
    let end = loop {
        let frame = tokio::select! {
            // Buffered input first: the close signal is looked at only when reading waits.
            biased;
            f = reader.read_frame() => f,
            _ = peer.shared.closed.cancelled() => break None,
        };
        match frame {
            Ok(Some(Frame::Message(b))) => dispatcher.on_frame(&b, reader.take_extensions()),
            Ok(Some(Frame::Oversized(n))) => {
                tracing::warn!("discarded a {n}-byte frame over the size limit");
                peer.send_error(
                    None,
                    &ErrorObject::invalid_request(format!("message of {n} bytes exceeds the size limit")),
                );
            }
            Ok(None) => break None,
            Err(e) => break Some(Error::from(e)),
        }
        // A long run of buffered input (a pipelining client) lets the writer in every few
        // frames: the first replies leave while the rest are handled, so the client refills
        // its window instead of waiting for the whole batch.
        read = read.wrapping_add(1);
        if read % FRAMES_PER_TURN == 0 {
            tokio::task::yield_now().await;
        }
    };
    if let Some(e) = end {
        *lock(&peer.shared.close_reason) = Some(e);
    }
    // Nothing more will come in: fail every waiting caller (no answer can arrive).
    dispatcher.end_notes().await;
    let reason = peer.close_error();
    for (_, tx) in lock(&peer.shared.pending).drain() {
        let _ = tx.send(Err(reason.clone()));
    }
    // At a clean end of input the writer may still be open (a client closes our stdin and
    // waits for the answers): let requests already read finish, within the drain limit.
    if !peer.shared.closed.is_cancelled() {
        let deadline = tokio::time::Instant::now() + peer.shared.options.drain_timeout;
        while !lock(&peer.shared.inflight).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(5)) => {}
                _ = peer.shared.closed.cancelled() => break,
            }
        }
    }
    for (_, token) in lock(&peer.shared.inflight).drain() {
        token.cancel();
    }
}

/// Answer one request without a connection loop (the stateless HTTP path): run the handler with
/// the same panic and cancellation rules as the engine, and return the reply frame (`None` when
/// the request was cancelled: no reply), with the error code when the reply is an error.
pub(crate) async fn serve_one(
    service: &dyn Service,
    peer: Peer,
    request: IncomingRequest,
) -> Option<(Vec<u8>, Option<ErrorCode>)> {
    let id = request.id.clone();
    let cancel = request.cancel.clone();
    let handler = service.handle_request(peer, request);
    let outcome = tokio::select! {
        r = AssertUnwindSafe(handler).catch_unwind() => r,
        _ = cancel.cancelled() => return None,
    };
    let (bytes, code) = match outcome {
        Ok(Ok(result)) => (serde_json::to_vec(&OutgoingResult::new(&id, &*result)), None),
        Ok(Err(e)) => (serde_json::to_vec(&OutgoingError::new(Some(&id), &e)), Some(e.code)),
        Err(_panic) => {
            tracing::error!("the handler for request {id} panicked");
            let e = ErrorObject::internal("internal error: the request handler panicked");
            (serde_json::to_vec(&OutgoingError::new(Some(&id), &e)), Some(e.code))
        }
    };
    bytes
        .map(|b| (b, code))
        .map_err(|e| tracing::error!("could not serialize a reply: {e}"))
        .ok()
}

/// A request's concurrency slot: already taken, or to wait for.
enum Permit {
    Held(tokio::sync::OwnedSemaphorePermit),
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
    let fut = AssertUnwindSafe(handler).catch_unwind();
    let outcome = tokio::select! {
        r = fut => Some(r),
        _ = cancel.cancelled() => None,
    };
    finish_request(&peer, id, &cancel, outcome);
}

type Outcome = Option<std::result::Result<HandlerResult, Box<dyn std::any::Any + Send>>>;

/// Send a request's answer (or, if it was cancelled, only release its stream).
fn finish_request(peer: &Peer, id: RequestId, cancel: &CancellationToken, outcome: Outcome) {
    let still_wanted = lock(&peer.shared.inflight).remove(&id).is_some();
    match outcome {
        _ if !still_wanted || cancel.is_cancelled() => peer.finished_without_reply(id),
        None => peer.finished_without_reply(id),
        Some(Ok(Ok(result))) => {
            // Sized up front: the result is most of the frame, and growing the buffer copies it.
            let mut frame = Vec::with_capacity(result.get().len() + 64);
            match serde_json::to_writer(&mut frame, &OutgoingResult::new(&id, &*result)) {
                Ok(()) => {
                    let _ = peer.send_out((frame, Route::Reply(id)));
                }
                Err(e) => tracing::error!("could not serialize a reply: {e}"),
            }
        }
        Some(Ok(Err(e))) => peer.send_error(Some(&id), &e),
        Some(Err(_panic)) => {
            tracing::error!("the handler for request {id} panicked");
            peer.send_error(
                Some(&id),
                &ErrorObject::internal("internal error: the request handler panicked"),
            );
        }
    }
}

impl Peer {
    /// A peer without a connection: what handlers send through it (notifications, with their
    /// routes) comes out of the returned receiver, and requests to the other side fail at once.
    /// For serving one stateless request directly.
    pub(crate) fn detached(options: PeerOptions) -> (Peer, mpsc::UnboundedReceiver<Outbound>) {
        Peer::with_outbox(options, true)
    }

    /// A peer and the receiving end of everything it sends.
    fn with_outbox(options: PeerOptions, detached: bool) -> (Peer, mpsc::UnboundedReceiver<Outbound>) {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        (Peer::from_outbox(options, detached, Outbox::Queue(out_tx)), out_rx)
    }

    fn from_outbox(options: PeerOptions, detached: bool, out: Outbox) -> Peer {
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            progress: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(0),
            out,
            closed: CancellationToken::new(),
            close_reason: Mutex::new(None),
            options,
            detached,
        });
        Peer { shared }
    }

    fn send_out(&self, frame: Outbound) -> std::result::Result<(), ()> {
        self.shared.out.send(frame, &self.shared.closed)
    }

    fn send_frame<T: Serialize + ?Sized>(&self, frame: &T, route: Route) {
        match serde_json::to_vec(frame) {
            Ok(bytes) => {
                let _ = self.send_out((bytes, route));
            }
            Err(e) => tracing::error!("could not serialize an outgoing message: {e}"),
        }
    }

    /// Tell the transport a request will never be answered (MCP cancellation sends nothing).
    fn finished_without_reply(&self, id: RequestId) {
        let _ = self.send_out((Vec::new(), Route::Finished(id)));
    }

    fn send_error(&self, id: Option<&RequestId>, error: &ErrorObject) {
        let route = id.map_or(Route::Standalone, |id| Route::Reply(id.clone()));
        self.send_frame(&OutgoingError::new(id, error), route);
    }

    fn on_cancelled(&self, params: Option<&RawValue>) {
        let Some(p) = params.and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok()) else {
            return;
        };
        let Some(id) = p.request_id else { return };
        // Remove first so the handler, if it finishes in the race, sends nothing.
        if let Some(token) = lock(&self.shared.inflight).remove(&id) {
            token.cancel();
        }
    }

    fn on_progress(&self, params: Option<&RawValue>) {
        let Some(p) = params.and_then(|p| serde_json::from_str::<ProgressParams>(p.get()).ok()) else {
            return;
        };
        let tx = lock(&self.shared.progress).get(&p.progress_token).cloned();
        if let Some(tx) = tx {
            let _ = tx.send(p);
        }
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled() || self.shared.out.is_closed()
    }

    /// Resolves when the connection ends.
    pub async fn closed(&self) {
        self.shared.closed.cancelled().await
    }

    /// Close the connection: stops reading, drains queued output and closes the transport.
    pub fn close(&self) {
        self.shared.closed.cancel();
    }

    /// Send a typed notification.
    pub fn notify<N: NotificationMethod>(&self, params: &N::Params) -> Result<()> {
        self.notify_raw(N::NAME, Some(params))
    }

    /// Ask the transport to end the response stream of an incoming request early (HTTP: the
    /// client resumes it with `Last-Event-ID`; other transports ignore this).
    pub fn close_request_stream(&self, id: &RequestId) {
        let _ = self.send_out((Vec::new(), Route::CloseStream(id.clone())));
    }

    /// Send a notification with any serializable params.
    pub fn notify_raw<P: Serialize + ?Sized>(&self, method: &str, params: Option<&P>) -> Result<()> {
        self.notify_routed(method, params, Route::Standalone)
    }

    /// Send a notification on behalf of an incoming request (on HTTP it travels on that
    /// request's response stream).
    pub fn notify_related<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        related: &RequestId,
    ) -> Result<()> {
        self.notify_routed(method, params, Route::Related(related.clone()))
    }

    fn notify_routed<P: Serialize + ?Sized>(&self, method: &str, params: Option<&P>, route: Route) -> Result<()> {
        if self.is_closed() {
            return Err(Error::ConnectionClosed);
        }
        let bytes = serde_json::to_vec(&OutgoingNotification::new(method, params))
            .map_err(|e| Error::Serialize(e.to_string()))?;
        self.send_out((bytes, route)).map_err(|_| Error::ConnectionClosed)
    }

    /// Send a typed request and wait for its typed result.
    pub async fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result> {
        self.request_with::<M>(params, RequestOptions::default()).await
    }

    /// Send a typed request with per-call options.
    pub async fn request_with<M: Method>(&self, params: &M::Params, options: RequestOptions) -> Result<M::Result> {
        let raw = self.request_raw(M::NAME, Some(params), options).await?;
        decode(&raw)
    }

    /// Send a request with any serializable params; the raw result comes back.
    ///
    /// Dropping the returned future before it completes sends `notifications/cancelled`.
    pub async fn request_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        if self.shared.detached {
            return Err(Error::Protocol(format!(
                "{method}: this connection carries no requests to the other side (a stateless request)"
            )));
        }
        let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let bytes = serde_json::to_vec(&OutgoingRequest::new(&id, method, params))
            .map_err(|e| Error::Serialize(e.to_string()))?;
        let (tx, mut rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), tx);
        let mut guard = OutboundGuard {
            peer: self,
            id: Some(id.clone()),
            progress: None,
        };
        let mut progress_rx = None;
        if let Some((token, sink)) = options.progress {
            let (ptx, prx) = mpsc::unbounded_channel();
            lock(&self.shared.progress).insert(token.clone(), ptx);
            guard.progress = Some(token);
            progress_rx = Some((prx, sink));
        }
        let route = options.related.clone().map_or(Route::Standalone, Route::Related);
        if self.is_closed() || self.send_out((bytes, route)).is_err() {
            guard.id = None;
            return Err(Error::ConnectionClosed);
        }
        let timeout = options.timeout.or(self.shared.options.request_timeout);
        let far = Duration::from_secs(365 * 24 * 3600);
        let sleep = tokio::time::sleep(timeout.unwrap_or(far));
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                r = &mut rx => {
                    guard.id = None; // answered: nothing to cancel
                    // Progress read before the response is already queued: deliver it first.
                    if let Some((prx, sink)) = progress_rx.as_mut() {
                        while let Ok(p) = prx.try_recv() {
                            let _ = sink.send(p);
                        }
                    }
                    return r.unwrap_or_else(|_| Err(self.close_error()));
                }
                p = async { match progress_rx.as_mut() { Some((prx, _)) => prx.recv().await, None => std::future::pending().await } } => {
                    if let (Some(p), Some((_, sink))) = (p, progress_rx.as_ref()) {
                        let _ = sink.send(p);
                        if options.reset_timeout_on_progress {
                            if let Some(t) = timeout {
                                sleep.as_mut().reset(tokio::time::Instant::now() + t);
                            }
                        }
                    }
                }
                _ = &mut sleep => {
                    let t = timeout.unwrap_or(far);
                    guard.cancel_with(&format!("timed out after {t:?}"));
                    return Err(Error::Timeout(t));
                }
            }
        }
    }

    fn close_error(&self) -> Error {
        lock(&self.shared.close_reason)
            .clone()
            .unwrap_or(Error::ConnectionClosed)
    }
}

/// Decode a raw result into a method's result type.
pub(crate) fn decode<T: DeserializeOwned>(raw: &RawValue) -> Result<T> {
    serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))
}

/// Sends `notifications/cancelled` if the request future is dropped before its answer.
struct OutboundGuard<'a> {
    peer: &'a Peer,
    id: Option<RequestId>,
    progress: Option<ProgressToken>,
}

impl OutboundGuard<'_> {
    fn cancel_with(&mut self, reason: &str) {
        if let Some(id) = self.id.take() {
            lock(&self.peer.shared.pending).remove(&id);
            let params = CancelledParams {
                request_id: Some(id),
                reason: Some(reason.to_owned()),
                ..Default::default()
            };
            let _ = self.peer.notify_raw("notifications/cancelled", Some(&params));
        }
    }
}

impl Drop for OutboundGuard<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.progress.take() {
            lock(&self.peer.shared.progress).remove(&token);
        }
        if self.id.is_some() && !self.peer.is_closed() {
            self.cancel_with("the caller dropped the request");
        } else if let Some(id) = self.id.take() {
            lock(&self.peer.shared.pending).remove(&id);
        }
    }
}
