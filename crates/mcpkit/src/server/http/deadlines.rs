//! The read deadlines of one connection served by `HttpServer::serve`: idle (no request begun),
//! header (a request's head begun but not complete) and body (a request's body not complete).
//!
//! The socket ([`WatchedStream`]) enforces the first two: it knows when the first byte of a
//! request arrives, and the connection's service tells it (through [`ConnPhase`]) when a head
//! was complete and when the response was sent. The body deadline lives on the body itself
//! ([`TimedBody`]), so whoever reads it (the endpoint, or a layer in front) sees the timeout
//! as a read error, which `reply::read_capped` turns into 408.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use mcpkit_types::jsonrpc::OutgoingError;
use mcpkit_types::{ErrorCode, ErrorObject};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::sync::lock;

/// Where a connection is between its requests.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting, since then, for the first byte of a request.
    Idle(Instant),
    /// The head of a request began to arrive then.
    Head(Instant),
    /// A request is being served: its head is read; its body has its own deadline, and a
    /// response (an SSE stream too) may take as long as it takes.
    Busy,
}

/// The phase of one connection, shared by its socket and its service.
#[derive(Debug, Clone)]
pub(super) struct ConnPhase(Arc<Mutex<Shared>>);

#[derive(Debug)]
struct Shared {
    phase: Phase,
    /// A read that waited while the connection was busy, so without a deadline: woken when the
    /// response is done, to start the idle one.
    waiting_read: Option<Waker>,
    /// The number of the current request (the last whose head was complete).
    request: u64,
    /// The current request's body is still arriving (neither complete nor given up).
    body_pending: bool,
}

impl ConnPhase {
    pub(super) fn new() -> ConnPhase {
        ConnPhase(Arc::new(Mutex::new(Shared {
            phase: Phase::Idle(Instant::now()),
            waiting_read: None,
            request: 0,
            body_pending: false,
        })))
    }

    /// A request's head is complete: no read deadline on the socket while it is served. Its
    /// number, for [`ConnPhase::body_done`]; `body_pending` when its body is still to come.
    pub(super) fn request_started(&self, body_pending: bool) -> u64 {
        let mut shared = lock(&self.0);
        shared.phase = Phase::Busy;
        shared.request = shared.request.wrapping_add(1);
        shared.body_pending = body_pending;
        shared.request
    }

    /// The body of request `request` arrived whole, or nobody will read the rest.
    pub(super) fn body_done(&self, request: u64) {
        let mut shared = lock(&self.0);
        if shared.request == request {
            shared.body_pending = false;
        }
    }

    /// Whether a request is arriving and not yet being served: its head on its way, or its
    /// body (what a graceful shutdown closes at once).
    pub(super) fn mid_request(&self) -> bool {
        let shared = lock(&self.0);
        match shared.phase {
            Phase::Head(_) => true,
            Phase::Busy => shared.body_pending,
            Phase::Idle(_) => false,
        }
    }

    /// The response was sent (or dropped): the connection is idle from now.
    pub(super) fn response_done(&self) {
        let waiting = {
            let mut shared = lock(&self.0);
            shared.phase = Phase::Idle(Instant::now());
            shared.waiting_read.take()
        };
        if let Some(waker) = waiting {
            waker.wake();
        }
    }

    /// Bytes arrived: an idle connection now has a request head on its way.
    fn bytes_arrived(&self) {
        let mut shared = lock(&self.0);
        if matches!(shared.phase, Phase::Idle(_)) {
            shared.phase = Phase::Head(Instant::now());
        }
    }

    /// The current phase; while busy, `cx` is woken when that ends.
    fn get(&self, cx: &Context<'_>) -> Phase {
        let mut shared = lock(&self.0);
        if matches!(shared.phase, Phase::Busy) {
            shared.waiting_read = Some(cx.waker().clone());
        }
        shared.phase
    }
}

/// A served connection's socket (TCP or Unix domain), closing it when it stays idle or a request head stalls.
#[derive(Debug)]
pub(super) struct WatchedStream<S> {
    socket: S,
    phase: ConnPhase,
    idle_timeout: Duration,
    header_timeout: Duration,
    /// Made on the first wait, then reset: most reads never wait on it.
    timer: Option<(Instant, Pin<Box<Sleep>>)>,
    /// A deadline passed: every read from now on is the end of the stream.
    expired: bool,
}

impl<S> WatchedStream<S> {
    pub(super) fn new(socket: S, phase: ConnPhase, idle_timeout: Duration, header_timeout: Duration) -> Self {
        WatchedStream {
            socket,
            phase,
            idle_timeout,
            header_timeout,
            timer: None,
            expired: false,
        }
    }

    /// Whether the current phase's deadline has passed (registering for a wake-up otherwise);
    /// with whether a request head was under way.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Option<bool> {
        let (deadline, mid_head) = match self.phase.get(cx) {
            Phase::Busy => return None,
            Phase::Idle(since) => (since + self.idle_timeout, false),
            Phase::Head(since) => (since + self.header_timeout, true),
        };
        let timer = match &mut self.timer {
            Some((at, timer)) => {
                if *at != deadline {
                    timer.as_mut().reset(deadline);
                    *at = deadline;
                }
                timer
            }
            None => {
                &mut self
                    .timer
                    .insert((deadline, Box::pin(tokio::time::sleep_until(deadline))))
                    .1
            }
        };
        timer.as_mut().poll(cx).is_ready().then_some(mid_head)
    }
}

/// What a client whose request head stalled is told before its connection closes.
fn header_timeout_reply(timeout: Duration) -> Vec<u8> {
    let message = format!("Request timeout: the request headers did not arrive within {timeout:?}");
    let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, &message);
    let body = serde_json::to_vec(&OutgoingError::new(None, &error)).unwrap_or_default();
    let mut reply = format!(
        "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(&body);
    reply
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for WatchedStream<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.expired {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        if let Poll::Ready(read) = Pin::new(&mut this.socket).poll_read(cx, buf) {
            if buf.filled().len() > before {
                this.phase.bytes_arrived();
            }
            return Poll::Ready(read);
        }
        let Some(mid_head) = this.poll_deadline(cx) else {
            return Poll::Pending;
        };
        this.expired = true;
        if mid_head {
            // HTTP allows a 408 here: the client has begun a request. One small write that
            // the socket buffer takes at once; if it does not, the close alone says enough.
            let reply = header_timeout_reply(this.header_timeout);
            if let Poll::Ready(Err(e)) = Pin::new(&mut this.socket).poll_write(cx, &reply) {
                tracing::debug!("408 after a stalled request head not sent: {e}");
            }
        }
        // The end of the stream: the HTTP connection closes (with an incomplete head, as an
        // error; idle, cleanly).
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WatchedStream<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().socket).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().socket).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().socket).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().socket).poll_shutdown(cx)
    }
}

/// The read error of a request body that did not arrive within the body-read timeout.
#[derive(Debug)]
pub(crate) struct BodyTimedOut(Duration);

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Request timeout: the request body did not arrive within {:?}",
            self.0
        )
    }
}

impl std::error::Error for BodyTimedOut {}

/// A request body that fails with [`BodyTimedOut`] when it is not complete by its deadline,
/// and tells its connection's [`ConnPhase`] when it is no longer arriving.
#[derive(Debug)]
pub(super) struct TimedBody {
    inner: Incoming,
    timeout: Duration,
    deadline: Instant,
    /// Made on the first wait: a body that arrived with its head never needs one.
    timer: Option<Pin<Box<Sleep>>>,
    /// The connection and the request's number there; `None` once told.
    arriving: Option<(ConnPhase, u64)>,
}

impl TimedBody {
    /// The body of request `request` on the connection of `phase`.
    pub(super) fn new(inner: Incoming, timeout: Duration, phase: ConnPhase, request: u64) -> TimedBody {
        TimedBody {
            inner,
            timeout,
            deadline: Instant::now() + timeout,
            timer: None,
            arriving: Some((phase, request)),
        }
    }

    /// The body is complete, failed, or will not be read further.
    fn done(&mut self) {
        if let Some((phase, request)) = self.arriving.take() {
            phase.body_done(request);
        }
    }
}

impl Drop for TimedBody {
    fn drop(&mut self) {
        self.done();
    }
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            if !matches!(frame, Some(Ok(_))) || this.inner.is_end_stream() {
                this.done();
            }
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let deadline = this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                this.done();
                Poll::Ready(Some(Err(Box::new(BodyTimedOut(this.timeout)))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
