//! What one connection's spans and metrics share: its telemetry, its transport, and once known
//! its session id and negotiated protocol version. Set by the layer that learns each (the HTTP
//! front end, the handshake, the client's connect); read by the engine's dispatch.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use mcpkit_types::ProtocolVersion;

use super::{Side, Telemetry};

/// `network.transport` of a connection (and, for TCP, `network.protocol.name = http`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NetworkTransport {
    /// stdio, a child process, the in-memory pair.
    Pipe,
    /// HTTP.
    Tcp,
}

impl NetworkTransport {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            NetworkTransport::Pipe => "pipe",
            NetworkTransport::Tcp => "tcp",
        }
    }
}

/// One connection's telemetry state.
#[derive(Debug)]
pub(crate) struct Scope {
    pub(crate) telemetry: Telemetry,
    /// 0: not known, 1: pipe, 2: tcp.
    transport: AtomicU8,
    session_id: OnceLock<Arc<str>>,
    /// The negotiated version (an index into [`ProtocolVersion::ALL`]), or `u8::MAX`.
    version: AtomicU8,
    /// When the session began, and whether its end was recorded.
    started: Instant,
    ended: AtomicBool,
    /// A session the metrics count (a connection, an HTTP session; not a one-off stateless
    /// request).
    counted: AtomicBool,
}

impl Scope {
    pub(crate) fn new(telemetry: Telemetry) -> Scope {
        Scope {
            telemetry,
            transport: AtomicU8::new(0),
            session_id: OnceLock::new(),
            version: AtomicU8::new(u8::MAX),
            started: Instant::now(),
            ended: AtomicBool::new(false),
            counted: AtomicBool::new(false),
        }
    }

    /// Whether any span or metric wants anything from this connection: metrics on, or a
    /// subscriber interested in mcpkit's spans.
    pub(crate) fn records_metrics(&self) -> bool {
        self.telemetry.records_metrics()
    }

    pub(crate) fn set_transport(&self, t: NetworkTransport) {
        let v = match t {
            NetworkTransport::Pipe => 1,
            NetworkTransport::Tcp => 2,
        };
        self.transport.store(v, Ordering::Relaxed);
    }

    /// The transport, when the layer that made the connection said (a client connected over a
    /// transport it cannot see through leaves it unknown).
    pub(crate) fn transport(&self) -> Option<NetworkTransport> {
        match self.transport.load(Ordering::Relaxed) {
            1 => Some(NetworkTransport::Pipe),
            2 => Some(NetworkTransport::Tcp),
            _ => None,
        }
    }

    #[cfg(any(feature = "client", feature = "http-server"))]
    pub(crate) fn set_session_id(&self, id: Arc<str>) {
        let _ = self.session_id.set(id);
    }

    pub(crate) fn session_id(&self) -> Option<&str> {
        self.session_id.get().map(|s| &**s)
    }

    pub(crate) fn set_version(&self, v: ProtocolVersion) {
        if let Some(i) = ProtocolVersion::ALL.iter().position(|x| *x == v) {
            self.version.store(i as u8, Ordering::Relaxed);
        }
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::ALL
            .get(usize::from(self.version.load(Ordering::Relaxed)))
            .copied()
    }

    /// A session begins on this connection (`mcpkit.server.sessions.open` counts it).
    pub(crate) fn session_started(&self) {
        self.counted.store(true, Ordering::Relaxed);
        #[cfg(feature = "otel")]
        if let (Some(i), Side::Server) = (&self.telemetry.instruments, self.telemetry.side) {
            i.sessions_open.add(1, &self.telemetry.labels);
        }
    }

    /// The session ended (once): `mcp.{server,client}.session.duration`, with `error.type`
    /// when it ended with a transport error.
    pub(crate) fn session_ended(&self, error: Option<&'static str>) {
        if !self.counted.load(Ordering::Relaxed) || self.ended.swap(true, Ordering::Relaxed) {
            return;
        }
        #[cfg(feature = "otel")]
        if let Some(i) = &self.telemetry.instruments {
            i.session_ended(self, self.started.elapsed(), error);
        }
        #[cfg(not(feature = "otel"))]
        let _ = (error, Side::Server, self.started);
    }
}
