//! The connection engine, one for both roles (spec: `basic/index`, `basic/utilities/cancellation`,
//! `basic/utilities/progress`).
//!
//! A connection has a reader task (parse, classify, dispatch) and a writer task (one writer that
//! drains its queue and flushes when the queue is empty). [`Peer`] is a cheap handle for sending
//! requests and notifications. The pending, in-flight and progress maps are locked only for an
//! insert or a remove, never across an await.
//!
//! Ordering: requests run concurrently, each in its own task unless its handler completes at
//! its first poll (then the reader answers it on the spot). Notifications keep their arrival
//! order: they are handled one at a time, inline on the reader while each handler completes at
//! once; a notification handler that has to wait holds every later notification back until it
//! is done (they queue behind it in one task), but never holds requests back.
//!
//! MCP semantics, not LSP's: when `notifications/cancelled` arrives the handler is stopped and no
//! response is sent; dropping an outbound request future sends `notifications/cancelled`.
//!
//! The files: `inbound` dispatches what the other side sends (in-flight requests, duplicate
//! ids, ordered notifications), `outbound` sends requests and waits for their answers
//! (progress, timeouts), `io` holds the read and write loops of a stream transport.

mod inbound;
mod io;
mod outbound;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpkit_types::jsonrpc::{OutgoingError, OutgoingNotification};
use mcpkit_types::method::NotificationMethod;
use mcpkit_types::schema::{ProgressParams, ProgressToken};
use mcpkit_types::{ErrorObject, RequestId};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::sync::lock;
use crate::telemetry::{Scope, Telemetry};
use crate::transport::{Route, Transport};

#[cfg(feature = "http-server")]
pub(crate) use inbound::serve_one;
pub(crate) use inbound::Dispatcher;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a request handler produces: the serialized result, or a JSON-RPC error.
pub type HandlerResult = std::result::Result<Box<RawValue>, ErrorObject>;

/// An incoming request, handed to the connection's [`Role`].
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
    /// What the transport attached to the request (see
    /// [`FrameReader::take_extensions`](crate::transport::FrameReader::take_extensions)).
    pub extensions: crate::transport::Extensions,
}

/// The handler table of one side of a connection. Server and client are the same engine with
/// different roles; [`start`] runs one on a transport.
pub trait Role: Send + Sync + 'static {
    /// Answer one request. This call itself happens in arrival order on the reader; the
    /// returned future runs concurrently with other requests.
    fn handle_request(&self, peer: Peer, request: IncomingRequest) -> BoxFuture<HandlerResult>;
    /// Handle one notification. Notifications are handled one at a time, in arrival order: a
    /// returned future that waits holds the later notifications back until it completes.
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
    /// Where this connection's metrics go (default: none; spans go through `tracing` either
    /// way). The server and client builders' `telemetry` options set it.
    pub telemetry: Telemetry,
}

impl Default for PeerOptions {
    fn default() -> Self {
        PeerOptions {
            max_concurrent_requests: 256,
            request_timeout: None,
            drain_timeout: Duration::from_secs(10),
            telemetry: Telemetry::default(),
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

/// What a connection sends out: a frame and where it belongs, or the end of an incoming
/// request's response stream.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A frame and where the transport should put it.
    Frame(Vec<u8>, Route),
    /// Not a frame: only a transport with a stream per request (the HTTP server) acts on it;
    /// stream transports have none (and the engine sends none without the HTTP server).
    #[cfg(feature = "http-server")]
    End(StreamEnd),
}

#[cfg(feature = "http-server")]
impl Outgoing {
    /// The frame, if this is one.
    pub(crate) fn into_frame(self) -> Option<Vec<u8>> {
        match self {
            Outgoing::Frame(frame, _) => Some(frame),
            Outgoing::End(_) => None,
        }
    }
}

/// How an incoming request's response stream ends early.
#[cfg(feature = "http-server")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// End it now; the client may resume it (HTTP: with `Last-Event-ID`).
    Close(RequestId),
    /// The request ended without a reply (it was cancelled): release its stream.
    Unanswered(RequestId),
}

type Pending = oneshot::Sender<Result<Box<RawValue>>>;

/// A sink that takes each outgoing frame at once, without waiting (see [`start_direct`]).
#[cfg(feature = "http-server")]
pub(crate) type DirectSink = Box<dyn Fn(Outgoing) + Send + Sync>;

/// Where a connection's outgoing frames go.
enum Outbox {
    /// Queued for the connection's writer task (stream transports).
    Queue(mpsc::UnboundedSender<Outgoing>),
    /// Handed to a sink that never waits (an HTTP session routes each frame to its response
    /// stream under a lock): no queue, no writer task.
    #[cfg(feature = "http-server")]
    Direct(DirectSink),
    /// A queue opened by the first frame (one stateless request, see [`Peer::detached_until`]):
    /// most requests send nothing but their reply, and making and dropping a queue cost them
    /// ~1,600 instructions.
    #[cfg(feature = "http-server")]
    Deferred(Mutex<Deferred>),
}

#[cfg(feature = "http-server")]
enum Deferred {
    /// Nothing sent yet: the first frame opens the queue and hands its receiving end over.
    Waiting(oneshot::Sender<mpsc::UnboundedReceiver<Outgoing>>),
    Open(mpsc::UnboundedSender<Outgoing>),
    /// The receiving side was gone when the first frame came.
    Closed,
}

impl Outbox {
    /// Hand `frame` on; `Err` when nobody will read it. A direct sink does not know when its
    /// connection ended: the caller checks that first ([`Peer::send_out`]).
    fn send(&self, frame: Outgoing) -> std::result::Result<(), ()> {
        match self {
            Outbox::Queue(tx) => tx.send(frame).map_err(|_| ()),
            #[cfg(feature = "http-server")]
            Outbox::Direct(sink) => {
                sink(frame);
                Ok(())
            }
            #[cfg(feature = "http-server")]
            Outbox::Deferred(state) => {
                let mut state = lock(state);
                match std::mem::replace(&mut *state, Deferred::Closed) {
                    Deferred::Waiting(hand_over) => {
                        let (tx, rx) = mpsc::unbounded_channel();
                        // Queued before the receiver is handed over: whoever takes it finds
                        // the frame that opened it.
                        let _ = tx.send(frame);
                        if hand_over.send(rx).is_err() {
                            return Err(());
                        }
                        *state = Deferred::Open(tx);
                        Ok(())
                    }
                    Deferred::Open(tx) => {
                        let sent = tx.send(frame).map_err(|_| ());
                        *state = Deferred::Open(tx);
                        sent
                    }
                    Deferred::Closed => Err(()),
                }
            }
        }
    }

    fn is_closed(&self) -> bool {
        match self {
            Outbox::Queue(tx) => tx.is_closed(),
            #[cfg(feature = "http-server")]
            Outbox::Direct(_) => false,
            #[cfg(feature = "http-server")]
            Outbox::Deferred(state) => match &*lock(state) {
                Deferred::Waiting(hand_over) => hand_over.is_closed(),
                Deferred::Open(tx) => tx.is_closed(),
                Deferred::Closed => true,
            },
        }
    }
}

/// The receiving end of a [`Peer::detached_until`] peer: empty, without a queue, until the
/// peer sends its first frame.
#[cfg(feature = "http-server")]
pub(crate) struct Sent {
    opening: Option<oneshot::Receiver<mpsc::UnboundedReceiver<Outgoing>>>,
    queue: Option<mpsc::UnboundedReceiver<Outgoing>>,
}

#[cfg(feature = "http-server")]
impl Sent {
    /// The next frame; `None` once the peer is gone and everything it sent was read.
    /// Cancel-safe, like `mpsc::UnboundedReceiver::recv`.
    pub(crate) async fn recv(&mut self) -> Option<Outgoing> {
        if let Some(opening) = self.opening.as_mut() {
            let queue = opening.await.ok();
            self.opening = None;
            self.queue = queue;
        }
        self.queue.as_mut()?.recv().await
    }

    /// The next frame if one is there.
    pub(crate) fn try_recv(&mut self) -> Option<Outgoing> {
        if let Some(opening) = self.opening.as_mut() {
            match opening.try_recv() {
                Ok(queue) => self.queue = Some(queue),
                Err(oneshot::error::TryRecvError::Empty) => return None,
                Err(oneshot::error::TryRecvError::Closed) => {}
            }
            self.opening = None;
        }
        self.queue.as_mut()?.try_recv().ok()
    }
}

/// The state of one connection, shared by its [`Peer`] handles and its loops.
struct Shared {
    /// Outgoing requests waiting for their answers.
    pending: Mutex<HashMap<RequestId, Pending>>,
    /// Inbound requests still running, with the token that cancels each.
    inflight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Signalled when `inflight` becomes empty (the reader waits for it while draining).
    drained: Notify,
    /// Where `notifications/progress` for an outbound request goes, by token.
    progress: Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<ProgressParams>>>,
    next_id: AtomicI64,
    out: Outbox,
    closed: CancellationToken,
    /// Boxed: nearly every connection ends without one, and an `Error` is ~100 bytes.
    close_reason: Mutex<Option<Box<Error>>>,
    /// The server's or client's, shared by its connections.
    options: Arc<PeerOptions>,
    /// No connection loop reads answers (see [`Peer::detached`]): requests to the other side
    /// fail at once instead of waiting forever.
    detached: bool,
    /// The connection's spans and metrics: transport, session id, negotiated version.
    scope: Arc<Scope>,
}

impl Shared {
    /// Take a request out of the in-flight map, waking the drain when it was the last one.
    fn remove_inflight(&self, id: &RequestId) -> Option<CancellationToken> {
        let mut inflight = lock(&self.inflight);
        let token = inflight.remove(id);
        if token.is_some() && inflight.is_empty() {
            // An idle connection keeps no table: an HTTP session idles for hours after one
            // request, and the table's buckets would outweigh the rest of it.
            inflight.shrink_to_fit();
            // No waiter on the hot path: this only stores a permit (one atomic operation).
            self.drained.notify_one();
        }
        token
    }
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
            Some(e) => Err(*e),
            None => Ok(()),
        }
    }
}

/// Start the engine on a transport with the given role's handler table.
pub fn start<T: Transport>(transport: T, role: Arc<dyn Role>, options: PeerOptions) -> Connection {
    let (reader, writer) = transport.split();
    let (peer, out_rx) = Peer::with_outbox(Arc::new(options), false);
    peer.shared.scope.session_started();
    let writer_task = tokio::spawn(io::write_loop(writer, out_rx, peer.shared.closed.clone()));
    let dispatcher = Dispatcher::new(peer.clone(), role);
    let done = tokio::spawn(async move {
        io::read_loop(reader, &dispatcher).await;
        // Let the writer drain what handlers already queued, then stop it.
        dispatcher.peer().shared.closed.cancel();
        let _ = writer_task.await;
        let failed = lock(&dispatcher.peer().shared.close_reason).is_some();
        let shared = &dispatcher.peer().shared;
        shared.scope.session_ended(failed.then_some("transport_error"));
    });
    Connection { peer, done }
}

/// Start the engine without a task of its own: the caller hands it each incoming frame
/// ([`Dispatcher::on_frame`]) and every outgoing frame goes straight to `sink`. For transports
/// that already run a task per incoming message (HTTP POSTs): an idle connection then costs a
/// small struct, no task and no queue.
#[cfg(feature = "http-server")]
pub(crate) fn start_direct(role: Arc<dyn Role>, options: Arc<PeerOptions>, sink: DirectSink) -> Dispatcher {
    let peer = Peer::from_outbox(options, false, Outbox::Direct(sink));
    peer.shared.scope.session_started();
    Dispatcher::new(peer, role)
}

impl Peer {
    /// Number this peer's outgoing requests from `base` (instances sharing a bus tell their
    /// requests apart by the number's high bits).
    #[cfg(feature = "http-server")]
    pub(crate) fn set_request_id_base(&self, base: i64) {
        self.shared.next_id.store(base, std::sync::atomic::Ordering::Relaxed);
    }

    /// A peer without a connection: what handlers send through it (notifications, with their
    /// routes) comes out of the returned receiver, and requests to the other side fail at once.
    /// For serving one stateless request directly.
    #[cfg(feature = "server")]
    pub(crate) fn detached(options: Arc<PeerOptions>) -> (Peer, mpsc::UnboundedReceiver<Outgoing>) {
        Peer::with_outbox(options, true)
    }

    /// [`Peer::detached`] for one request whose `cancel` token ends it: that token is the
    /// peer's "connection closed" too (the request's response is all the connection there is),
    /// so the peer needs no token of its own.
    #[cfg(feature = "http-server")]
    pub(crate) fn detached_until(options: Arc<PeerOptions>, cancel: CancellationToken) -> (Peer, Sent) {
        let (hand_over, opening) = oneshot::channel();
        let out = Outbox::Deferred(Mutex::new(Deferred::Waiting(hand_over)));
        let sent = Sent {
            opening: Some(opening),
            queue: None,
        };
        (Peer::from_parts(options, true, out, cancel), sent)
    }

    /// A peer and the receiving end of everything it sends.
    fn with_outbox(options: Arc<PeerOptions>, detached: bool) -> (Peer, mpsc::UnboundedReceiver<Outgoing>) {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        (Peer::from_outbox(options, detached, Outbox::Queue(out_tx)), out_rx)
    }

    fn from_outbox(options: Arc<PeerOptions>, detached: bool, out: Outbox) -> Peer {
        Peer::from_parts(options, detached, out, CancellationToken::new())
    }

    fn from_parts(options: Arc<PeerOptions>, detached: bool, out: Outbox, closed: CancellationToken) -> Peer {
        let scope = Arc::new(Scope::new(options.telemetry.clone()));
        let shared = Arc::new(Shared {
            pending: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            drained: Notify::new(),
            progress: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(0),
            out,
            closed,
            close_reason: Mutex::new(None),
            options,
            detached,
            scope,
        });
        Peer { shared }
    }

    /// This connection's telemetry state (the layers above fill in its session id, version
    /// and transport as they learn them).
    pub(crate) fn telemetry_scope(&self) -> &Arc<Scope> {
        &self.shared.scope
    }

    fn send_out(&self, frame: Outgoing) -> std::result::Result<(), ()> {
        #[cfg(feature = "http-server")]
        if matches!(self.shared.out, Outbox::Direct(_)) && self.shared.closed.is_cancelled() {
            return Err(());
        }
        self.shared.out.send(frame)
    }

    fn send_frame<T: Serialize + ?Sized>(&self, frame: &T, route: Route) {
        match serde_json::to_vec(frame) {
            Ok(bytes) => {
                let _ = self.send_out(Outgoing::Frame(bytes, route));
            }
            Err(e) => tracing::error!("could not serialize an outgoing message: {e}"),
        }
    }

    /// Tell the transport a request will never be answered (MCP cancellation sends nothing).
    #[cfg(feature = "http-server")]
    fn finished_without_reply(&self, id: RequestId) {
        let _ = self.send_out(Outgoing::End(StreamEnd::Unanswered(id)));
    }

    fn send_error(&self, id: Option<&RequestId>, error: &ErrorObject) {
        let route = id.map_or(Route::Standalone, |id| Route::Reply(id.clone()));
        self.send_frame(&OutgoingError::new(id, error), route);
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
        #[cfg(feature = "http-server")]
        let _ = self.send_out(Outgoing::End(StreamEnd::Close(id.clone())));
        // Without the HTTP server every transport is a stream transport: no request has a
        // stream of its own to end.
        #[cfg(not(feature = "http-server"))]
        let _ = id;
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
        let mut bytes = serde_json::to_vec(&OutgoingNotification::new(method, params))
            .map_err(|e| Error::Serialize(e.to_string()))?;
        let span = crate::telemetry::Outbound::start(&self.shared.scope, method, None, &bytes);
        if let Some(span) = &span {
            bytes = span.inject(bytes);
        }
        let sent = self
            .send_out(Outgoing::Frame(bytes, route))
            .map_err(|_| Error::ConnectionClosed);
        if let Some(span) = span {
            let ending = match sent {
                Ok(()) => crate::telemetry::Ending::Done,
                Err(_) => crate::telemetry::Ending::Failed("connection_closed"),
            };
            span.finish(&ending);
        }
        sent
    }

    /// Why the connection ended: the transport error, or [`Error::ConnectionClosed`].
    fn close_error(&self) -> Error {
        lock(&self.shared.close_reason)
            .as_deref()
            .cloned()
            .unwrap_or(Error::ConnectionClosed)
    }

    /// Fail every outbound request still waiting: no answer can arrive any more.
    fn fail_pending(&self) {
        let reason = self.close_error();
        for (_, tx) in lock(&self.shared.pending).drain() {
            let _ = tx.send(Err(reason.clone()));
        }
    }

    /// Cancel every inbound request still running.
    fn cancel_inflight(&self) {
        for (_, token) in lock(&self.shared.inflight).drain() {
            token.cancel();
        }
    }
}
