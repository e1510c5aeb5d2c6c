//! `HttpServer::serve`'s (and `serve_unix`'s) accept loop: the connection limit, each
//! connection's HTTP/1.1 service with its read deadlines (`deadlines`), and the graceful
//! shutdown with its deadline. The loop is the same for a TCP and a Unix domain socket; only
//! what names the peer differs ([`Peer`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body as AxumBody;
use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use axum::Router;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::config::HttpConfig;
use super::deadlines::{ConnPhase, TimedBody, WatchedStream};

/// The connection-level limits of [`HttpConfig`].
#[derive(Debug, Clone, Copy)]
pub(super) struct ConnLimits {
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    idle_timeout: Duration,
    max_connections: usize,
    shutdown_timeout: Duration,
}

impl ConnLimits {
    pub(super) fn of(config: &HttpConfig) -> ConnLimits {
        ConnLimits {
            header_read_timeout: config.header_read_timeout,
            body_read_timeout: config.body_read_timeout,
            idle_timeout: config.idle_timeout,
            max_connections: config.max_connections.max(1),
            shutdown_timeout: config.shutdown_timeout,
        }
    }
}

/// Who is at the other end of an accepted connection.
#[derive(Debug, Clone, Copy)]
pub(super) enum Peer {
    /// A TCP peer's address (requests carry it as `ConnectInfo<SocketAddr>`).
    Tcp(SocketAddr),
    /// A Unix domain socket peer's credentials (requests carry them as [`UnixPeer`]).
    Unix(UnixPeer),
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Tcp(addr) => write!(f, "{addr}"),
            Peer::Unix(p) => match p.pid {
                Some(pid) => write!(f, "uid {} pid {pid}", p.uid),
                None => write!(f, "uid {}", p.uid),
            },
        }
    }
}

/// The credentials of the process at the other end of a Unix domain socket connection, as the
/// kernel reported them when it was accepted (`SO_PEERCRED`): every request served by
/// [`super::HttpServer::serve_unix`] carries them as a request extension. The endpoint counts a
/// client's sessions under its `uid` ([`super::HttpConfig::max_sessions_per_client`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct UnixPeer {
    /// The peer's effective user id.
    pub uid: u32,
    /// The peer's effective group id.
    pub gid: u32,
    /// The peer's process id, where the OS reports it.
    pub pid: Option<i32>,
}

/// A listening socket the accept loop takes connections from.
pub(super) trait Listen: Send + 'static {
    /// An accepted connection.
    type Io: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    /// The next connection and who is at its other end.
    fn accept(&self) -> impl Future<Output = std::io::Result<(Self::Io, Peer)>> + Send;
}

impl Listen for TcpListener {
    type Io = tokio::net::TcpStream;

    async fn accept(&self) -> std::io::Result<(Self::Io, Peer)> {
        let (tcp, addr) = TcpListener::accept(self).await?;
        // Without it a reply written in two parts waits ~40 ms for a delayed ACK.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {e}");
        }
        Ok((tcp, Peer::Tcp(addr)))
    }
}

#[cfg(unix)]
impl Listen for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;

    async fn accept(&self) -> std::io::Result<(Self::Io, Peer)> {
        let (stream, _) = tokio::net::UnixListener::accept(self).await?;
        match stream.peer_cred() {
            Ok(cred) => Ok((
                stream,
                Peer::Unix(UnixPeer {
                    uid: cred.uid(),
                    gid: cred.gid(),
                    pid: cred.pid(),
                }),
            )),
            // Without credentials the connection could not be counted against its user's share:
            // it is dropped, as an error of this connection alone.
            Err(e) => Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                format!("the peer's credentials could not be read: {e}"),
            )),
        }
    }
}

/// Serve `app` on `listener` until `stop` fires, then give open connections
/// `limits.shutdown_timeout` to finish and close the rest.
pub(super) async fn serve<L: Listen>(
    listener: L,
    app: Router,
    limits: ConnLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    // Over the limit a connection waits, unaccepted, in the listener's backlog (see
    // `HttpConfig::max_connections` for why not refuse it).
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut open = JoinSet::new();
    loop {
        while open.try_join_next().is_some() {}
        let permit = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (io, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_this_connection(&e) => {
                tracing::debug!("a connection was dropped as it was accepted: {e}");
                continue;
            }
            Err(e) => {
                // Out of file descriptors, most often: pause rather than spin.
                tracing::warn!("accepting a connection failed: {e}");
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        let accepted = Accepted {
            io,
            peer,
            _slot: permit,
        };
        open.spawn(connection(accepted, app.clone(), limits, stop.clone()));
    }
    drop(listener);
    let drained = tokio::time::timeout(limits.shutdown_timeout, async {
        while open.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            "closing {} connection(s) still open at the shutdown deadline ({:?})",
            open.len(),
            limits.shutdown_timeout
        );
        open.shutdown().await;
    }
    Ok(())
}

/// An accept error that concerns only the connection being accepted.
fn is_this_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset)
}

/// A connection just accepted, with its slot among the open connections.
struct Accepted<S> {
    io: S,
    peer: Peer,
    /// Freed when the connection is over.
    _slot: OwnedSemaphorePermit,
}

/// Serve one connection until it closes, or gracefully once `stop` fires (the accept loop
/// aborts it at the shutdown deadline). At `stop`, a connection whose request is still
/// arriving (its head or its body) is closed at once, and an idle one as soon as hyper has
/// written what it holds: only a request whose body has arrived gets the grace period. Its
/// slot is freed when this returns.
async fn connection<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    accepted: Accepted<S>,
    app: Router,
    limits: ConnLimits,
    stop: CancellationToken,
) {
    let Accepted { io, peer, _slot } = accepted;
    let phase = ConnPhase::new();
    let phase_at_stop = phase.clone();
    let io = WatchedStream::new(io, phase.clone(), limits.idle_timeout, limits.header_read_timeout);
    let service = ConnService {
        app,
        phase,
        peer,
        body_read_timeout: limits.body_read_timeout,
    };
    // The header deadline is the socket's (it also answers 408), so none from hyper.
    let conn = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(TokioIo::new(io), service);
    let mut conn = std::pin::pin!(conn);
    let outcome = tokio::select! {
        outcome = conn.as_mut() => outcome,
        () = stop.cancelled() => {
            if phase_at_stop.mid_request() {
                // Nothing is being served: a client half-way through its request would
                // otherwise hold the shutdown until its read deadline.
                tracing::debug!("connection from {peer} closed at shutdown before a whole request");
                return;
            }
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = outcome {
        tracing::debug!("connection from {peer} ended: {e}");
    }
}

/// The service of one connection: the app, with the request's deadlines and the caller's
/// address (`ConnectInfo<SocketAddr>`, as axum's own `serve` would give it) or, on a Unix
/// domain socket, its credentials ([`UnixPeer`]).
#[derive(Clone)]
struct ConnService {
    app: Router,
    phase: ConnPhase,
    peer: Peer,
    body_read_timeout: Duration,
}

impl hyper::service::Service<hyper::Request<Incoming>> for ConnService {
    type Response = Response<SentBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let number = self.phase.request_started(!request.body().is_end_stream());
        let timeout = self.body_read_timeout;
        let phase = self.phase.clone();
        let mut request: Request = request.map(|body| AxumBody::new(TimedBody::new(body, timeout, phase, number)));
        match self.peer {
            Peer::Tcp(addr) => {
                request.extensions_mut().insert(ConnectInfo(addr));
            }
            Peer::Unix(cred) => {
                request.extensions_mut().insert(cred);
            }
        }
        let mut app = self.app.clone();
        let phase = self.phase.clone();
        Box::pin(async move {
            use tower_service::Service;
            std::future::poll_fn(|cx| Service::<Request>::poll_ready(&mut app, cx)).await?;
            let response = Service::<Request>::call(&mut app, request).await?;
            Ok(response.map(|body| SentBody { body, phase }))
        })
    }
}

/// A response body that marks its connection idle once it has been sent (or dropped).
struct SentBody {
    body: AxumBody,
    phase: ConnPhase,
}

impl Drop for SentBody {
    fn drop(&mut self) {
        self.phase.response_done();
    }
}

impl Body for SentBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
