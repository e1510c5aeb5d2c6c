//! The server's HTTP front end: Streamable HTTP (spec: `basic/transports` "Streamable HTTP")
//! and, beside it on request, the deprecated 2024-11-05 HTTP+SSE transport (`sse_legacy`).
//!
//! One entry point, [`HttpServer`]: `.router()` gives an axum `Router` to mount in your own
//! app, `.into_service()` a plain `tower::Service` over `http::Request<B>` for hyper or any
//! other tower host (a serverless function's adapter too), `.serve(listener)` serves it on a
//! TCP listener (with `TCP_NODELAY` on every connection, a connection limit, idle, header and
//! body timeouts, and a graceful shutdown with a deadline on the [`HttpServer::shutdown`]
//! token), `.serve_unix(listener)` the same on a Unix domain socket (bind it with
//! [`bind_unix`]), and `.layer(l)` wraps it in tower layers (such as the OAuth resource layer,
//! `auth::resource::ProtectedResource`).
//!
//! One endpoint. POST carries one message: a request is answered with `application/json`, or
//! with an SSE stream when its handler sends anything (progress, logs, server→client requests)
//! before its result; notifications and responses get 202. GET opens the session's standalone
//! SSE stream (one at a time: while it is open another GET gets 409, a `Last-Event-ID` resume
//! of it included); DELETE ends the session. Every SSE stream starts with a priming event and
//! keeps a bounded replay log, so a client resumes with `Last-Event-ID` and loses nothing.
//!
//! Secure by default: `Host` and `Origin` must be loopback names, bodies are capped, session
//! ids come from the OS's CSPRNG, and [`HttpServer::serve`] serves where you bound (use
//! 127.0.0.1).

mod accept;
mod admission;
mod cluster;
mod cluster_instance;
mod cluster_streams;
mod config;
mod deadlines;
mod directory;
mod factory;
mod forwarded;
mod get_delete;
mod health;
mod inspector;
mod post;
mod reply;
mod security;
mod service;
mod session;
mod sse;
mod sse_legacy;
mod state;
mod stateless;
mod store_gauge;
mod streamable;
mod streams;
mod table;
#[cfg(unix)]
mod unix;

use std::sync::Arc;

use axum::extract::Request;
use axum::response::IntoResponse;
use axum::routing::Route;
use axum::Router;
use tokio_util::sync::CancellationToken;

pub use accept::UnixPeer;
pub use config::{Clock, HttpConfig, SystemClock};
pub use factory::{SessionFactory, SessionReader, SessionTransport, SessionWriter};
pub use forwarded::{ForwardedHeader, IpNet};
#[cfg(feature = "auth")]
pub(crate) use reply::{read_capped, BodyError};
pub use service::{HttpService, ResponseBody};
#[cfg(unix)]
pub use unix::bind_unix;

use crate::server::backend::Backends;
use crate::server::Server;
use admission::Admission;
use directory::ScaleOut;
use inspector::Inspector;
use session::SessionSource;
use sse_legacy::LegacyEndpoint;
use state::Endpoint;

/// The paths of the 2024-11-05 HTTP+SSE endpoints when [`HttpServer::sse_legacy`] is on.
const SSE_LEGACY_PATHS: (&str, &str) = ("/sse", "/messages");

type Wrap = Box<dyn FnOnce(Router) -> Router + Send>;

/// Serves a [`Server`] (or a [`SessionFactory`]) over HTTP: configure, then take the
/// [`router`](HttpServer::router) to mount in an axum app, or [`serve`](HttpServer::serve) a
/// listener.
///
/// ```no_run
/// # async fn run(server: mcpkit::Server) -> std::io::Result<()> {
/// use mcpkit::server::http::HttpServer;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
/// HttpServer::new(server).sse_legacy(true).serve(listener).await
/// # }
/// ```
pub struct HttpServer {
    source: SessionSource,
    config: HttpConfig,
    path: String,
    sse_legacy: Option<(String, String)>,
    shutdown: CancellationToken,
    layers: Vec<Wrap>,
    inspector: Inspector,
    scale_out: Option<ScaleOut>,
    readiness: Option<health::Readiness>,
    #[cfg(feature = "otel")]
    metrics: Option<crate::telemetry::Prometheus>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("path", &self.path)
            .field("sse_legacy", &self.sse_legacy)
            .field("layers", &self.layers.len())
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Serve `server` at `/mcp` with the default [`HttpConfig`], Streamable HTTP only.
    pub fn new(server: Server) -> HttpServer {
        HttpServer::with_source(SessionSource::Server(server))
    }

    /// Serve each session with `factory` instead of a [`Server`] (a gateway or proxy).
    /// [`HttpConfig::sessionless`] is ignored (a forwarded session needs its `initialize`), and
    /// so are [`HttpServer::sse_legacy`] and the stateless era (both need a [`Server`]).
    pub fn with_factory(factory: Arc<dyn SessionFactory>) -> HttpServer {
        HttpServer::with_source(SessionSource::Factory(factory))
    }

    fn with_source(source: SessionSource) -> HttpServer {
        HttpServer {
            source,
            config: HttpConfig::default(),
            path: "/mcp".to_owned(),
            sse_legacy: None,
            shutdown: CancellationToken::new(),
            layers: Vec::new(),
            inspector: Inspector::default(),
            scale_out: None,
            readiness: None,
            #[cfg(feature = "otel")]
            metrics: None,
        }
    }

    /// Share sessions, SSE event logs, server→client traffic and the `requestState` keys with
    /// every other instance given the same backends (the same database), so that instances
    /// behind a plain round-robin load balancer act as one server (see
    /// [`crate::server::backend`]). Without it the endpoint is one instance, its state in its
    /// own memory. `max_sessions` then holds for all instances together, and so does each
    /// client's share. Give the server the same task store ([`Backends::tasks`]) for the Tasks
    /// extension.
    pub fn scale_out(mut self, backends: Backends) -> HttpServer {
        // Wired here only: `cluster` is what knows other instances exist; the rest of the
        // endpoint sees the shared halves of its session directory and stream log.
        self.scale_out = Some(cluster::scale_out(backends));
        self
    }

    /// Also ask `check` on `GET /readyz` (within 2 s): `Ok(line)` is ready (the line, when not
    /// empty, follows "ready: "), `Err(why)` answers 503 "not ready: why". For what the
    /// process needs beyond its backends, such as a gateway's upstreams.
    pub fn readiness<F, Fut>(mut self, check: F) -> HttpServer
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, String>> + Send + 'static,
    {
        self.readiness = Some(Arc::new(move || Box::pin(check())));
        self
    }

    /// Limits and policies (default [`HttpConfig::default`]).
    pub fn config(mut self, config: HttpConfig) -> HttpServer {
        self.config = config;
        self
    }

    /// The path of the Streamable HTTP endpoint (default `/mcp`).
    pub fn path(mut self, path: &str) -> HttpServer {
        self.path = path.to_owned();
        self
    }

    /// The stop token: when it fires every open SSE stream ends, and [`HttpServer::serve`]
    /// finishes its graceful shutdown and returns. Without it nothing stops the endpoint.
    pub fn shutdown(mut self, token: CancellationToken) -> HttpServer {
        self.shutdown = token;
        self
    }

    /// Also serve the 2024-11-05 HTTP+SSE transport for old clients: GET `/sse` opens a
    /// session's stream, POST `/messages?sessionId=…` delivers its messages (default off).
    pub fn sse_legacy(mut self, on: bool) -> HttpServer {
        self.sse_legacy = on.then(|| (SSE_LEGACY_PATHS.0.to_owned(), SSE_LEGACY_PATHS.1.to_owned()));
        self
    }

    /// [`HttpServer::sse_legacy`] on other paths than `/sse` and `/messages`.
    pub fn sse_legacy_paths(mut self, sse_path: &str, messages_path: &str) -> HttpServer {
        self.sse_legacy = Some((sse_path.to_owned(), messages_path.to_owned()));
        self
    }

    /// Show `observe` every JSON-RPC message the endpoint reads from its clients
    /// ([`Direction::Incoming`](crate::transport::inspect::Direction), a POST body) and writes
    /// to them (`Outgoing`, a JSON reply or an SSE event), in both eras and on the legacy
    /// HTTP+SSE endpoints: the HTTP counterpart of [`transport::inspect::inspect`](crate::transport::inspect::inspect), for wire
    /// tracing. It is called on the request's task: keep it quick.
    pub fn inspect<F>(mut self, observe: F) -> HttpServer
    where
        F: Fn(crate::transport::inspect::Direction, crate::transport::inspect::Observed<'_>) + Send + Sync + 'static,
    {
        self.inspector = Inspector::new(observe);
        self
    }

    /// Wrap every route (the legacy ones too) in a tower layer: tracing, CORS, the OAuth
    /// resource layer… Layers added later wrap the earlier ones.
    pub fn layer<L>(mut self, layer: L) -> HttpServer
    where
        L: tower_layer::Layer<Route> + Clone + Send + Sync + 'static,
        L::Service: tower_service::Service<Request> + Clone + Send + Sync + 'static,
        <L::Service as tower_service::Service<Request>>::Response: IntoResponse + 'static,
        <L::Service as tower_service::Service<Request>>::Error: Into<std::convert::Infallible> + 'static,
        <L::Service as tower_service::Service<Request>>::Future: Send + 'static,
    {
        self.layers.push(Box::new(move |router: Router| router.layer(layer)));
        self
    }

    /// Serve `prometheus`'s metrics as Prometheus text at `GET /metrics` on this endpoint's
    /// address (feature `otel`; opt-in). Give the server the same provider's
    /// [`Telemetry`](crate::telemetry::Telemetry) so its metrics are there; to serve them on an
    /// address of their own instead, see [`crate::telemetry::metrics_router`].
    #[cfg(feature = "otel")]
    pub fn metrics(mut self, prometheus: crate::telemetry::Prometheus) -> HttpServer {
        self.metrics = Some(prometheus);
        self
    }

    /// The endpoint as an axum `Router`, with its layers: merge it into your app, or serve it
    /// as it is. Built inside a tokio runtime, it also starts the idle-session reaper.
    pub fn router(self) -> Router {
        // One count for both transports: legacy sessions take from the same caps.
        let admission = Admission::new(self.config.max_sessions, self.config.max_sessions_per_client);
        let mut router = match (&self.source, &self.sse_legacy) {
            (SessionSource::Server(server), Some((sse_path, messages_path))) => sse_legacy::router(LegacyEndpoint {
                server: server.clone(),
                config: self.config.clone(),
                admission: admission.clone(),
                sse_path,
                messages_path,
                shutdown: self.shutdown.clone(),
                inspector: self.inspector.clone(),
            }),
            _ => Router::new(),
        };
        let mut config = self.config;
        if matches!(self.source, SessionSource::Factory(_)) {
            config.sessionless = false;
        }
        let shared = self.scale_out.as_ref().map(|s| s.directory.clone());
        if let (Some(shared), SessionSource::Server(server)) = (&shared, &self.source) {
            if tokio::runtime::Handle::try_current().is_ok() {
                shared.join(server, &self.shutdown);
            }
        }
        let endpoint = Endpoint {
            source: self.source,
            config,
            admission,
            shutdown: self.shutdown,
            inspector: self.inspector,
            scale_out: self.scale_out,
        };
        router = router.merge(streamable::router(endpoint, &self.path));
        #[cfg(feature = "otel")]
        if let Some(p) = self.metrics {
            router = router.merge(crate::telemetry::metrics_router(p));
        }
        for wrap in self.layers {
            router = wrap(router);
        }
        // Outside the layers (a load balancer's probe carries no credentials); everything else
        // goes to the layered router as it is (its fallback included).
        health::router(shared, self.readiness).fallback_service(router)
    }

    /// Serve on `listener` until the [`HttpServer::shutdown`] token fires, with `TCP_NODELAY`
    /// on every connection and the connection limits of [`HttpConfig`]: at most
    /// `max_connections` at once, and a connection closed when it stays idle
    /// (`idle_timeout`) or a request's headers or body stall (`header_read_timeout`,
    /// `body_read_timeout`; 408). Requests carry the caller's address as axum's
    /// `ConnectInfo<SocketAddr>`. At shutdown it stops accepting, open streams end, and the call
    /// returns once the connections have closed, or at `shutdown_timeout`, closing those left.
    /// Refuses to start (an error at once) if the server has no `requestState` key because the
    /// OS random source failed.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        self.serve_on(listener).await
    }

    /// [`HttpServer::serve`] on a Unix domain socket (Unix only): the same connection limit,
    /// read timeouts, graceful shutdown and `Host`/`Origin` checks (a client names the server
    /// `localhost`). A socket has no address, so each request carries the peer's credentials as
    /// a [`UnixPeer`] request extension, and a client's share of the sessions
    /// ([`HttpConfig::max_sessions_per_client`]) is counted per user id: the identity the
    /// kernel vouches for (a process id would give one user a share per process it starts).
    /// [`HttpConfig::trusted_proxies`] does not apply. Bind with [`bind_unix`] (mode 0600, a
    /// stale socket file replaced); when the call returns it removes the socket file it served,
    /// unless another file has taken its place meanwhile.
    ///
    /// ```no_run
    /// # async fn run(server: mcpkit::Server) -> std::io::Result<()> {
    /// use mcpkit::server::http::{bind_unix, HttpServer};
    /// let listener = bind_unix("/run/user/1000/notes.sock").await?;
    /// HttpServer::new(server).serve_unix(listener).await
    /// # }
    /// ```
    #[cfg(unix)]
    pub async fn serve_unix(self, listener: tokio::net::UnixListener) -> std::io::Result<()> {
        let socket_file = unix::SocketFile::of(&listener);
        let served = self.serve_on(listener).await;
        if let Some(file) = socket_file {
            file.remove();
        }
        served
    }

    /// The endpoint as a [`tower::Service`](tower_service::Service) over `http::Request<B>` for
    /// any body `B` (`http_body::Body` with `Bytes` data), answering
    /// `http::Response<`[`ResponseBody`]`>`: serve it with hyper directly, any other tower host,
    /// or a serverless function's HTTP adapter, without axum. It is
    /// [`HttpServer::router`] behind a type of its own, with the same routes, layers and
    /// checks. The host gives the connection limits and timeouts that
    /// [`HttpServer::serve`] would; a request that carries
    /// `axum::extract::ConnectInfo<SocketAddr>` (or a [`UnixPeer`]) is counted against its
    /// client's share of the sessions, one without only against the total. Built inside a tokio
    /// runtime (it starts the idle-session reaper).
    pub fn into_service(self) -> HttpService {
        HttpService::new(self.router())
    }

    async fn serve_on<L: accept::Listen>(self, listener: L) -> std::io::Result<()> {
        if let SessionSource::Server(server) = &self.source {
            if let Some(shared) = &self.scale_out {
                // Seal with the shared ring from the first request on.
                shared.directory.load_keys(server).await;
            }
            server.check_keys().map_err(std::io::Error::other)?;
        }
        let stop = self.shutdown.clone();
        let limits = accept::ConnLimits::of(&self.config);
        let app = self.router();
        accept::serve(listener, app, limits, stop).await
    }
}
