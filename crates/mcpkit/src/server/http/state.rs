//! What every request of one Streamable HTTP endpoint shares.

use std::sync::Arc;

use axum::http::HeaderMap;
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use super::admission::{Admission, Client};
use super::config::HttpConfig;
use super::directory::{ScaleOut, SessionDirectory};
use super::inspector::Inspector;
use super::session::{HttpSession, Launcher, SessionSource};
use super::streams::{StreamLog, StreamSettings};
use super::table::SessionTable;
use crate::server::backend::SessionLimits;
use crate::server::Server;

pub(super) struct HttpState {
    /// What starts its sessions.
    pub(super) launcher: Launcher,
    pub(super) config: HttpConfig,
    /// Where its sessions are kept.
    pub(super) sessions: SessionDirectory,
    /// Ends every open SSE stream (graceful shutdown).
    pub(super) shutdown: CancellationToken,
    /// Serves stateless-era POSTs directly (no engine per request); only a [`Server`] source
    /// speaks 2026-07-28.
    pub(super) stateless: Option<StatelessServer>,
    /// Shown every message read and written ([`super::HttpServer::inspect`]).
    pub(super) inspector: Inspector,
    /// Whether each request that can make a task names its client (`Server::counts_clients`).
    pub(super) counts_clients: bool,
    /// Whether every request names its client (a layer counts per client).
    pub(super) names_every_client: bool,
}

/// The server behind stateless-era requests, and its handler table for them.
pub(super) struct StatelessServer {
    pub(super) server: Server,
    pub(super) service: Arc<crate::server::methods::ServerService>,
}

/// What an endpoint is made of.
pub(super) struct Endpoint {
    pub(super) source: SessionSource,
    pub(super) config: HttpConfig,
    /// Counts its sessions (shared with the legacy routes, when they are on).
    pub(super) admission: Arc<Admission>,
    pub(super) shutdown: CancellationToken,
    pub(super) inspector: Inspector,
    /// What it shares with other instances, if anything.
    pub(super) scale_out: Option<ScaleOut>,
}

impl HttpState {
    /// Whether the server may refuse a request with a status of its own (429, 403): only then
    /// is a reply's error looked at.
    pub(super) fn may_refuse(&self) -> bool {
        self.stateless.as_ref().is_some_and(|s| s.server.may_refuse())
    }

    pub(super) fn new(endpoint: Endpoint) -> HttpState {
        let Endpoint {
            source,
            config,
            admission,
            shutdown,
            inspector,
            scale_out,
        } = endpoint;
        let counts_clients = matches!(&source, SessionSource::Server(s) if s.counts_clients());
        let names_every_client = matches!(&source, SessionSource::Server(s) if s.names_every_client());
        let stateless = match &source {
            SessionSource::Server(s) => Some(StatelessServer {
                server: s.clone(),
                service: s.stateless_service(),
            }),
            SessionSource::Factory(_) => None,
        };
        let (store, shared_log, shared_directory) = match scale_out {
            Some(s) => (s.events, Some(s.log), Some(s.directory)),
            None => (config.make_event_store(), None, None),
        };
        if let SessionSource::Server(s) = &source {
            super::store_gauge::start(s.telemetry().clone(), &store, shutdown.clone());
        }
        let prefix: Arc<str> = Arc::from(shared_log.as_ref().map_or(String::new(), |l| l.stream_prefix()));
        let settings = |log: StreamLog| {
            Arc::new(StreamSettings {
                log,
                clock: config.clock.clone(),
                buffer: config.stream_buffer.max(1),
                streams_kept: config.streams_per_session.max(1),
                stream_prefix: prefix.clone(),
            })
        };
        let (streams, sessionless_streams) = match shared_log {
            Some(shared) => (
                settings(StreamLog::shared(store.clone(), shared)),
                settings(StreamLog::local(store)),
            ),
            None => {
                let local = settings(StreamLog::local(store));
                (local.clone(), local)
            }
        };
        let limits = SessionLimits {
            max_sessions: config.max_sessions,
            max_per_client: config.max_sessions_per_client,
            ttl: config.session_idle_timeout,
        };
        let table = SessionTable::new(config.session_idle_timeout, admission, config.clock.clone());
        HttpState {
            launcher: Launcher {
                source,
                streams,
                sessionless_streams,
                inspector: inspector.clone(),
            },
            sessions: SessionDirectory::new(table, limits, shared_directory),
            config,
            shutdown,
            stateless,
            inspector,
            counts_clients,
            names_every_client,
        }
    }

    /// Where this endpoint's metrics go: its server's telemetry (none for a factory's).
    pub(super) fn telemetry(&self) -> crate::telemetry::Telemetry {
        self.launcher.telemetry()
    }

    /// The methods the endpoint serves (for `Allow`).
    pub(super) fn allowed_methods(&self) -> &'static str {
        if self.config.sessionless {
            "POST"
        } else {
            "GET, POST, DELETE"
        }
    }

    /// The live session the request names (see [`SessionDirectory::find`]).
    #[allow(clippy::result_large_err)]
    pub(super) async fn session_of(&self, headers: &HeaderMap, client: &Client) -> Result<Arc<HttpSession>, Response> {
        self.sessions.find(&self.launcher, headers, client, None).await
    }

    /// [`HttpState::session_of`] for a request with `request_id`: a 503 names it.
    #[allow(clippy::result_large_err)]
    pub(super) async fn session_for(
        &self,
        headers: &HeaderMap,
        client: &Client,
        request_id: Option<&mcpkit_types::RequestId>,
    ) -> Result<Arc<HttpSession>, Response> {
        self.sessions.find(&self.launcher, headers, client, request_id).await
    }
}
