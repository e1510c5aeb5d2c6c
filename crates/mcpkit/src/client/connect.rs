//! Connecting: [`ClientBuilder`] and the choice of era ([`ConnectMode`]): the `initialize`
//! handshake, or the stateless wire opened with `server/discover` (spec: `basic/lifecycle`,
//! 2026-07-28 `basic/versioning`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcpkit_types::method::{Discover, Initialize, Initialized, Method, NotificationMethod};
use mcpkit_types::schema::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, DiscoverResult, ElicitParams, ElicitResult,
    ElicitationCapability, Implementation, InitializeParams, InitializeResult, JsonObject, Root, RootsCapability,
    SamplingCapability,
};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use tokio::sync::broadcast;

use super::stateless::{is_stateless_error, supported_of, Handlers, Stateless};
use super::{cache, dispatch, Client, ClientInner, ElicitFn, RootsFn, SamplingFn};
use crate::engine::{self, Peer, PeerOptions, RequestOptions};
use crate::error::{Error, Result};
use crate::transport::Transport;

/// How a client picks the protocol era when it connects (spec: 2026-07-28 `basic/versioning`
/// "Backward Compatibility").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConnectMode {
    /// The `initialize` handshake (every revision up to 2025-11-25). The default: every MCP
    /// server of the handshake era and every dual-era server speaks it.
    #[default]
    Handshake,
    /// Probe with `server/discover`: a stateless-era server is spoken to statelessly, anything
    /// else (an error that is not a stateless-era one, or silence) falls back to `initialize`.
    Auto,
    /// Speak this stateless-era revision and nothing else.
    Pinned(ProtocolVersion),
}

/// How long the `server/discover` probe waits by default before deciding the server is a silent
/// handshake-era one. Generous: a server process that is still starting (an interpreter loading its
/// modules on a busy machine) must not be mistaken for a handshake-era one.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Builds a [`Client`] and connects it.
pub struct ClientBuilder {
    info: Implementation,
    version: ProtocolVersion,
    mode: ConnectMode,
    max_input_rounds: usize,
    probe_timeout: Duration,
    capabilities: ClientCapabilities,
    sampling: Option<SamplingFn>,
    elicitation: Option<ElicitFn>,
    roots: Option<Vec<Root>>,
    roots_fn: Option<RootsFn>,
    peer_options: PeerOptions,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation::new("mcpkit-client", env!("CARGO_PKG_VERSION")),
            version: ProtocolVersion::LATEST_HANDSHAKE,
            mode: ConnectMode::default(),
            max_input_rounds: 8,
            probe_timeout: PROBE_TIMEOUT,
            capabilities: ClientCapabilities::default(),
            sampling: None,
            elicitation: None,
            roots: None,
            roots_fn: None,
            peer_options: PeerOptions::default(),
        }
    }
}

impl ClientBuilder {
    /// The `clientInfo` sent at initialization.
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Shorthand for [`ClientBuilder::info`].
    pub fn name(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info(Implementation::new(name, version))
    }

    /// The handshake-era revision to ask for in `initialize` (default: the newest, 2025-11-25).
    pub fn protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.version = v;
        self
    }

    /// How to pick the protocol era: [`ConnectMode::Handshake`] (default, the `initialize`
    /// handshake), [`ConnectMode::Auto`] (probe with `server/discover`, stateless when the server
    /// speaks 2026-07-28, handshake otherwise) or [`ConnectMode::Pinned`] (one stateless
    /// revision).
    pub fn mode(mut self, mode: ConnectMode) -> Self {
        self.mode = mode;
        self
    }

    /// [`ConnectMode::Auto`]: how long to wait for the `server/discover` probe before treating
    /// a silent server as a handshake-era one (default 10 s).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Stateless era: how many `input_required` rounds one request may take before the client
    /// gives up (default 8).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Answer `sampling/createMessage` (declares the `sampling` capability).
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.capabilities.sampling = Some(SamplingCapability::default());
        self.sampling = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answer `elicitation/create` (declares the `elicitation` capability, form and URL modes).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.capabilities.elicitation = Some(ElicitationCapability {
            form: Some(Default::default()),
            url: Some(Default::default()),
            ..Default::default()
        });
        self.elicitation = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Offer these roots to the server (declares `roots` with `listChanged`).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.capabilities.roots = Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        });
        self.roots = Some(roots);
        self
    }

    /// Answer `roots/list` with `f` each time the server asks (declares `roots`; the roots set
    /// with [`ClientBuilder::roots`] are then not used). For roots that come from elsewhere,
    /// such as a gateway's downstream client.
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<mcpkit_types::schema::ListRootsResult, ErrorObject>> + Send + 'static,
    {
        if self.capabilities.roots.is_none() {
            self.capabilities.roots = Some(RootsCapability::default());
        }
        self.roots_fn = Some(Arc::new(move || Box::pin(f())));
        self
    }

    /// Declare extension `id` with `settings` (`{}`: support without settings) in the client
    /// capabilities (spec: 2026-07-28 `basic/versioning` "Extension negotiation"). See
    /// [`Client::uses_extension`](super::Client::uses_extension) for what the server declared.
    pub fn extension(mut self, id: &str, settings: JsonObject) -> Self {
        self.capabilities = std::mem::take(&mut self.capabilities).with_extension(id, settings);
        self
    }

    /// Connection limits and the default request timeout. Metrics set with
    /// [`ClientBuilder::telemetry`] are kept unless `options` names its own.
    pub fn peer_options(mut self, options: PeerOptions) -> Self {
        let telemetry = std::mem::take(&mut self.peer_options.telemetry);
        self.peer_options = options;
        if !self.peer_options.telemetry.records_metrics() {
            self.peer_options.telemetry = telemetry;
        }
        self
    }

    /// Record this client's metrics (`mcp.client.operation.duration`,
    /// `mcp.client.session.duration`) with `telemetry` (see [`crate::telemetry`]). Spans go
    /// through `tracing` with or without it.
    pub fn telemetry(mut self, telemetry: crate::telemetry::Telemetry) -> Self {
        self.peer_options.telemetry = telemetry;
        self
    }

    /// Connect over a transport and run the `initialize` handshake.
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client> {
        let (notify_tx, _) = broadcast::channel(1024);
        let roots = Arc::new(RwLock::new(self.roots.clone().unwrap_or_default()));
        let response_cache = Arc::new(cache::ResponseCache::default());
        let service = Arc::new(dispatch::ClientService {
            cache: response_cache.clone(),
            sampling: self.sampling.clone(),
            elicitation: self.elicitation.clone(),
            roots: self.roots.is_some().then(|| roots.clone()),
            roots_fn: self.roots_fn.clone(),
            notifications: notify_tx.clone(),
        });
        let network = network_of(&transport);
        let session_source = SessionSource::of(&transport);
        let options = PeerOptions {
            telemetry: self
                .peer_options
                .telemetry
                .clone()
                .for_side(crate::telemetry::Side::Client),
            ..self.peer_options.clone()
        };
        let connection = engine::start(transport, service, options);
        let peer = connection.peer().clone();
        if let Some(network) = network {
            peer.telemetry_scope().set_transport(network);
        }
        let handlers = Handlers {
            sampling: self.sampling.clone(),
            elicitation: self.elicitation.clone(),
            roots: self.roots.is_some().then(|| roots.clone()),
            roots_fn: self.roots_fn.clone(),
        };
        let shared = |init, version, stateless| ClientInner {
            peer: peer.clone(),
            connection: Mutex::new(None),
            init,
            version,
            notifications: notify_tx.clone(),
            roots: roots.clone(),
            output_schemas: RwLock::new(HashMap::new()),
            next_progress: AtomicI64::new(1),
            stateless,
            handlers: handlers.clone(),
            cache: response_cache.clone(),
            listening: tokio::sync::Mutex::new(()),
            capabilities: self.capabilities.clone(),
        };
        match self.discover(&peer).await {
            Ok(Some((stateless, init))) => {
                let version = stateless.version;
                peer.telemetry_scope().set_version(version);
                let inner = shared(init, version, Some(stateless));
                *crate::sync::lock(&inner.connection) = Some(connection);
                return Ok(Client { inner: Arc::new(inner) });
            }
            Ok(None) => {}
            Err(e) => {
                peer.close();
                return Err(e);
            }
        }
        let params = InitializeParams::new(self.version.as_str(), self.capabilities.clone(), self.info.clone());
        let init = match peer.request::<Initialize>(&params).await {
            Ok(r) => r,
            Err(e) => {
                peer.close();
                return Err(e);
            }
        };
        let version = match init.protocol_version.parse::<ProtocolVersion>() {
            Ok(v) if v.era() == mcpkit_types::Era::Handshake => v,
            _ => {
                // Spec: the client SHOULD disconnect when it does not support the server's version.
                peer.close();
                let _ = connection.closed().await;
                return Err(crate::error::unsupported(&init.protocol_version));
            }
        };
        peer.telemetry_scope().set_version(version);
        // The HTTP session began with the `initialize` reply: every later span names it.
        if let Some(id) = session_source.session_id() {
            peer.telemetry_scope().set_session_id(id);
        }
        peer.notify_raw(Initialized::NAME, None::<&()>)?;
        let inner = shared(init, version, None);
        *crate::sync::lock(&inner.connection) = Some(connection);
        Ok(Client { inner: Arc::new(inner) })
    }

    /// The stateless-era opening (spec: 2026-07-28 `basic/versioning`): `server/discover` with
    /// the per-request `_meta`. `Ok(None)` means: use the handshake.
    async fn discover(&self, peer: &Peer) -> Result<Option<(Stateless, InitializeResult)>> {
        let (version, auto) = match self.mode {
            ConnectMode::Handshake => return Ok(None),
            ConnectMode::Auto => (ProtocolVersion::LATEST, true),
            ConnectMode::Pinned(v) if v.era() == mcpkit_types::Era::Stateless => (v, false),
            ConnectMode::Pinned(v) => {
                return Err(Error::Protocol(format!(
                    "{v} is a handshake-era revision: use ConnectMode::Handshake with protocol_version({v})"
                )))
            }
        };
        let mut stateless = Stateless::new(version, &self.capabilities, &self.info, self.max_input_rounds);
        let mut retried = false;
        let outcome = loop {
            let params = stateless.params(serde_json::Value::Null)?;
            let options = RequestOptions {
                timeout: auto.then_some(self.probe_timeout),
                ..Default::default()
            };
            let outcome = peer.request_raw(Discover::NAME, Some(&params), options).await;
            // Spec: 2026-07-28 `basic/transports/streamable-http` "Protocol Version Header": an
            // UnsupportedProtocolVersion answer lists what the server speaks; retry once with a
            // stateless revision from that list that this client accepts (only the pinned one
            // when pinned, the newest known one in auto mode).
            let retry = match &outcome {
                Err(e) if !retried && e.rpc().map(|e| e.code) == Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION) => {
                    supported_of(e)
                        .iter()
                        .filter_map(|v| v.parse::<ProtocolVersion>().ok())
                        .filter(|v| v.era() == mcpkit_types::Era::Stateless && (auto || *v == version))
                        .max()
                }
                _ => None,
            };
            match retry {
                Some(v) => {
                    retried = true;
                    stateless = Stateless::new(v, &self.capabilities, &self.info, self.max_input_rounds);
                }
                None => break outcome,
            }
        };
        let version = stateless.version;
        let speaks_handshake = |versions: &[String]| {
            versions.iter().any(|v| {
                v.parse::<ProtocolVersion>()
                    .is_ok_and(|v| v.era() == mcpkit_types::Era::Handshake)
            })
        };
        let discovered: DiscoverResult = match outcome {
            Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))?,
            Err(e @ (Error::ConnectionClosed | Error::Transport(_))) => return Err(e),
            Err(e) if is_stateless_error(&e) => {
                // A stateless-era server that does not speak our revision: the handshake only if
                // it says it speaks a handshake-era one.
                if auto && speaks_handshake(&supported_of(&e)) {
                    return Ok(None);
                }
                return Err(e);
            }
            Err(_) if auto => return Ok(None),
            Err(e) => return Err(e),
        };
        if !discovered.supported_versions.iter().any(|v| v == version.as_str()) {
            if auto && speaks_handshake(&discovered.supported_versions) {
                return Ok(None);
            }
            return Err(crate::error::unsupported(
                discovered.supported_versions.first().map_or("", String::as_str),
            ));
        }
        let info = discovered.server_info().unwrap_or_default();
        let mut init = InitializeResult::new(version.as_str(), discovered.capabilities, info);
        if let Some(i) = discovered.instructions {
            init = init.with_instructions(i);
        }
        Ok(Some((stateless, init)))
    }
}

/// `network.transport` of a client's connection, as the transport tells it.
/// Where the session id of a connection shows up once the server assigned one (an HTTP
/// transport's `Mcp-Session-Id`), for the spans' `mcp.session.id`.
struct SessionSource {
    #[cfg(feature = "http-client")]
    http: Option<crate::transport::http_client::HttpClientInfo>,
}

impl SessionSource {
    fn of<T: Transport>(transport: &T) -> SessionSource {
        #[cfg(feature = "http-client")]
        {
            use crate::transport::http_client::HttpClientTransport;
            let any: &dyn std::any::Any = transport;
            let http = any
                .downcast_ref::<HttpClientTransport>()
                .or_else(|| {
                    any.downcast_ref::<crate::transport::BoxTransport>()
                        .and_then(|b| b.as_any().downcast_ref::<HttpClientTransport>())
                })
                .map(HttpClientTransport::info);
            SessionSource { http }
        }
        #[cfg(not(feature = "http-client"))]
        {
            let _ = transport;
            SessionSource {}
        }
    }

    fn session_id(&self) -> Option<Arc<str>> {
        #[cfg(feature = "http-client")]
        return self.http.as_ref().and_then(|i| i.session_id()).map(Arc::from);
        #[cfg(not(feature = "http-client"))]
        None
    }
}

fn network_of<T: Transport>(transport: &T) -> Option<crate::telemetry::NetworkTransport> {
    use crate::telemetry::NetworkTransport;
    match transport.network_transport() {
        Some("tcp") => Some(NetworkTransport::Tcp),
        Some("pipe") => Some(NetworkTransport::Pipe),
        _ => None,
    }
}
