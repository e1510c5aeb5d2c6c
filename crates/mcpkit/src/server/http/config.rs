//! The limits and policies of the HTTP endpoint, and the clock its sessions age by.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::forwarded::{ForwardedHeader, IpNet};
use super::security::LOCALHOST_NAMES;
use crate::server::backend::memory::MemoryEventStore;
use crate::server::backend::EventStore;

/// Limits and policies of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Host names (without port) accepted in `Host`, any port; a request naming another gets
    /// 421 (DNS-rebinding protection). `"*"` accepts any (only behind a proxy that checks
    /// `Host`). Default: the loopback names `localhost`, `127.0.0.1`, `[::1]` and `::1`.
    /// Independent of [`HttpConfig::allowed_origins`]: accepting any `Host` still checks
    /// `Origin`.
    pub allowed_hosts: Vec<String>,
    /// What `Origin` may say when a browser sends one (requests without `Origin` are not
    /// checked); another origin gets 403. An entry is a full origin
    /// (`https://app.example.com`, matched exactly, port included), a host name (any scheme
    /// and port), or `"*"` (any origin). Default: the same loopback names as `allowed_hosts`.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body (default 4 MiB); larger gets 413.
    pub max_body_bytes: usize,
    /// Sessions idle this long are ended (default 30 minutes).
    pub session_idle_timeout: Duration,
    /// At most this many live sessions (default 10,000), Streamable HTTP and legacy `/sse`
    /// together; more get 503. A session past its idle timeout never counts, whether or not the
    /// reaper (every quarter of the timeout, at most 30 s) has ended it yet: at a cap, the
    /// expired sessions are ended before a refusal. The check itself counts in constant time,
    /// and looks at the sessions only when one may have expired since it last did.
    pub max_sessions: usize,
    /// At most this many live sessions per client (default 1,000), within `max_sessions`; more
    /// get the same 503. A client is its verified subject (or, without one, client id) when
    /// an authorization layer attached a [`crate::transport::VerifiedCaller`], else its peer
    /// address (when served by [`super::HttpServer::serve`], or with axum's
    /// `ConnectInfo<SocketAddr>`; behind a proxy in [`HttpConfig::trusted_proxies`], the
    /// address the proxy names), or on a Unix domain socket
    /// ([`super::HttpServer::serve_unix`]) its user id; a request identifying none of these is
    /// only held to `max_sessions`.
    pub max_sessions_per_client: usize,
    /// The networks of the reverse proxies (load balancers) whose word on the client's address
    /// is believed (default none: the TCP peer is the client, and no forwarding header is
    /// read). A request whose peer is in one of them is attributed to the address named in
    /// [`HttpConfig::forwarded_header`]: the first one, from the right, that is not itself in
    /// these networks; a header that cannot be read there leaves the peer. List only your own
    /// balancers' addresses: anyone else could name any client it likes. Host and Origin
    /// checks do not depend on it.
    pub trusted_proxies: Vec<IpNet>,
    /// Which header [`HttpConfig::trusted_proxies`] name the client in (default
    /// `X-Forwarded-For`). Only that one is read: use the one your proxies write.
    pub forwarded_header: ForwardedHeader,
    /// Events kept per SSE stream for `Last-Event-ID` replay (default 256), by the default
    /// event store; a client that falls further behind misses the oldest.
    pub event_log_length: usize,
    /// SSE streams kept resumable per session (default 64; older finished streams are
    /// forgotten first), by the session and the default event store.
    pub streams_per_session: usize,
    /// Handshake-era requests without sessions: each POST is served on its own, without
    /// `Mcp-Session-Id` (for plain load balancers). Server→client requests and GET streams are
    /// then unavailable, and a request answered with an SSE stream keeps it open until its
    /// result (nothing could resume it). (Stateless-era requests never have sessions, whatever
    /// this says.)
    pub sessionless: bool,
    /// Answer every request with an SSE stream, even when the handler sends nothing first.
    pub always_sse: bool,
    /// Offer the standalone GET stream (default yes; no gives 405).
    pub enable_get_stream: bool,
    /// The `retry` hint in priming events (default 1 s).
    pub sse_retry: Duration,
    /// How long a request may stay silent before its reply switches from plain JSON to an SSE
    /// stream (default 1 s): a slow handler's client gets headers early.
    pub json_wait: Duration,
    /// Events queued on one SSE stream (a request's, the GET stream, a legacy `/sse` stream)
    /// for a client that has not read them yet (default 1024). A stream that falls this far
    /// behind is closed rather than left to grow: a Streamable HTTP client resumes it from the
    /// event log with `Last-Event-ID`; a stream nothing can resume (legacy, sessionless,
    /// 2026-07-28) ends its request or session.
    pub stream_buffer: usize,
    /// How long [`HttpServer::serve`](super::HttpServer::serve) waits for a request's headers
    /// once its first byte has arrived (default 10 s). A client that stalls part-way gets 408
    /// and its connection is closed (slowloris protection).
    pub header_read_timeout: Duration,
    /// How long [`HttpServer::serve`](super::HttpServer::serve) waits for a whole request body
    /// once its headers have arrived (default 30 s; ample for the 4 MiB cap). A body that is not
    /// complete by then gets 408 with a JSON-RPC error, and its connection is closed.
    pub body_read_timeout: Duration,
    /// How long a connection served by [`HttpServer::serve`](super::HttpServer::serve) may sit
    /// without a request: from its opening, or from the end of its last response, until the
    /// first byte of the next request (default 60 s). Then it is closed, without a reply (an
    /// unasked 408 could be mistaken for the answer to a request already on its way).
    pub idle_timeout: Duration,
    /// At most this many connections are served at once by
    /// [`HttpServer::serve`](super::HttpServer::serve) (default 1024; keep it under the
    /// process's open-file limit). Further connections are not refused: they wait in the
    /// listener's backlog, using no file descriptor of the process, and are served as soon as
    /// one closes. The timeouts above make sure stalled connections do close, so a client
    /// queued behind them waits at most about that long, where a refusal would have turned it
    /// away while an attacker held the slots. Idle keep-alive connections count too: a client
    /// pool holding more than this many waits for the idle timeout.
    pub max_connections: usize,
    /// When [`HttpServer::shutdown`](super::HttpServer::shutdown) fires, how long
    /// [`HttpServer::serve`](super::HttpServer::serve) lets the requests being served finish
    /// (default 5 s). It stops accepting at once and ends every SSE stream; a connection with no
    /// request being served (idle, or a client half-way through its request's headers or body)
    /// is closed at once. Connections still open at the deadline (a slow handler) are closed
    /// and `serve` returns.
    pub shutdown_timeout: Duration,
    /// Where SSE events are kept for `Last-Event-ID` replay (default `None`: a
    /// [`MemoryEventStore`] bounded by `event_log_length` and `streams_per_session`).
    pub event_store: Option<Arc<dyn EventStore>>,
    /// What session idleness is measured with (default [`SystemClock`]); tests put a clock
    /// they move by hand here instead of sleeping past the timeout.
    pub clock: Arc<dyn Clock>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        let local: Vec<String> = LOCALHOST_NAMES.iter().map(|s| (*s).to_owned()).collect();
        HttpConfig {
            allowed_hosts: local.clone(),
            allowed_origins: local,
            max_body_bytes: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            max_sessions_per_client: 1_000,
            trusted_proxies: Vec::new(),
            forwarded_header: ForwardedHeader::XForwardedFor,
            event_log_length: 256,
            streams_per_session: 64,
            sessionless: false,
            always_sse: false,
            enable_get_stream: true,
            sse_retry: Duration::from_secs(1),
            json_wait: Duration::from_secs(1),
            stream_buffer: 1024,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            shutdown_timeout: Duration::from_secs(5),
            event_store: None,
            clock: Arc::new(SystemClock),
        }
    }
}

impl HttpConfig {
    /// The event store these settings describe: the configured one, or a new bounded
    /// [`MemoryEventStore`].
    pub(super) fn make_event_store(&self) -> Arc<dyn EventStore> {
        match &self.event_store {
            Some(store) => store.clone(),
            None => Arc::new(MemoryEventStore::new(self.event_log_length, self.streams_per_session)),
        }
    }
}

/// A monotonic clock: the time source of session idleness.
pub trait Clock: std::fmt::Debug + Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The runtime's clock (tokio's, so a paused test runtime's time applies too).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }
}
