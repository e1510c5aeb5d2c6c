//! What every request of one Streamable HTTP endpoint shares.

use std::sync::{Arc, OnceLock, Weak};

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use mcpkit_types::ErrorCode;
use tokio_util::sync::CancellationToken;

use super::admission::{Admission, Client};
use super::cluster::{self, Cluster};
use super::config::HttpConfig;
use super::reply::{header_str, rpc_error, SESSION_ID_HEADER};
use super::routes::RouteSettings;
use super::session::{Backend, HttpSession};
use super::table::SessionTable;
use super::tap::WireTap;
use crate::server::Server;

pub(super) struct HttpState {
    pub(super) backend: Backend,
    pub(super) config: HttpConfig,
    pub(super) sessions: SessionTable,
    /// How sessions keep their streams (one event store for all of them).
    pub(super) routes: Arc<RouteSettings>,
    /// Ends every open SSE stream (graceful shutdown).
    pub(super) shutdown: CancellationToken,
    /// Serves stateless-era POSTs directly (no engine per request); only a [`Server`] backend
    /// speaks 2026-07-28.
    pub(super) stateless: Option<StatelessBackend>,
    /// Shown every message read and written ([`super::HttpServer::inspect`]).
    pub(super) tap: WireTap,
    /// The backends shared with other instances, when there are any.
    pub(super) cluster: Option<Arc<Cluster>>,
    /// This state, for the tasks its sessions start.
    pub(super) me: OnceLock<Weak<HttpState>>,
}

/// The server behind stateless-era requests, and its handler table for them.
pub(super) struct StatelessBackend {
    pub(super) server: Server,
    pub(super) service: Arc<crate::server::router::ServerService>,
}

impl HttpState {
    /// The state of an endpoint whose sessions are counted by `admission` (shared with the
    /// legacy routes, when they are on).
    pub(super) fn new(
        backend: Backend,
        config: HttpConfig,
        admission: Arc<Admission>,
        shutdown: CancellationToken,
        tap: WireTap,
        cluster: Option<Arc<Cluster>>,
    ) -> HttpState {
        let stateless = match &backend {
            Backend::Server(s) => Some(StatelessBackend {
                server: s.clone(),
                service: s.stateless_service(),
            }),
            Backend::Factory(_) => None,
        };
        let store = match &cluster {
            Some(c) => c.backends.events.clone(),
            None => config.make_event_store(),
        };
        if let Backend::Server(s) = &backend {
            super::store_gauge::start(s.telemetry().clone(), &store, shutdown.clone());
        }
        HttpState {
            sessions: SessionTable::new(config.session_idle_timeout, admission),
            routes: Arc::new(RouteSettings {
                store,
                clock: config.clock.clone(),
                buffer: config.stream_buffer.max(1),
                streams_kept: config.streams_per_session.max(1),
                stream_prefix: Arc::from(cluster.as_ref().map_or(String::new(), |c| format!("{}.", c.tag))),
            }),
            backend,
            config,
            shutdown,
            stateless,
            tap,
            cluster,
            me: OnceLock::new(),
        }
    }

    /// Where this endpoint's metrics go: its server's telemetry (none for a factory's).
    pub(super) fn telemetry(&self) -> crate::telemetry::Telemetry {
        match &self.backend {
            Backend::Server(s) => s.telemetry().clone(),
            Backend::Factory(_) => crate::telemetry::Telemetry::default(),
        }
    }

    /// The methods the endpoint serves (for `Allow`).
    pub(super) fn allowed_methods(&self) -> &'static str {
        if self.config.sessionless {
            "POST"
        } else {
            "GET, POST, DELETE"
        }
    }

    /// The live session the request names in `Mcp-Session-Id`: 400 without one, 404 for an id
    /// never issued, ended or expired, or opened by another caller than `client`'s (spec:
    /// security best practices, "Session Hijacking": a session is bound to its user). With
    /// shared backends, a session this instance does not have is rebuilt from its record
    /// (503 when the store cannot be reached).
    #[allow(clippy::result_large_err)]
    pub(super) async fn session_of(&self, headers: &HeaderMap, client: &Client) -> Result<Arc<HttpSession>, Response> {
        self.session_for(headers, client, None).await
    }

    /// [`HttpState::session_of`] for a request with `request_id`: a 503 names it.
    #[allow(clippy::result_large_err)]
    pub(super) async fn session_for(
        &self,
        headers: &HeaderMap,
        client: &Client,
        request_id: Option<&mcpkit_types::RequestId>,
    ) -> Result<Arc<HttpSession>, Response> {
        let Some(id) = header_str(headers, SESSION_ID_HEADER) else {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Missing Mcp-Session-Id",
                None,
            ));
        };
        let not_found = || {
            rpc_error(
                StatusCode::NOT_FOUND,
                ErrorCode::INVALID_REQUEST,
                "Session not found",
                None,
            )
        };
        if let Some(session) = self.sessions.get(id, client) {
            if let Some(link) = &session.link {
                link.touch(id, self.config.session_idle_timeout);
            }
            return Ok(session);
        }
        let Some(shared) = &self.cluster else {
            return Err(not_found());
        };
        // Nothing this server could have issued: no store is asked.
        if !cluster::plausible_session_id(id) {
            return Err(not_found());
        }
        let record = match shared.backends.sessions.get(id).await {
            Ok(Some(record)) => record,
            Ok(None) => return Err(not_found()),
            Err(e) => return Err(self.backend_unavailable(SESSION_STORE, &e, request_id)),
        };
        if record.caller != client.caller.as_ref().map(|c| c.binding()) {
            tracing::debug!("session {id} named by another caller");
            return Err(not_found());
        }
        let preset = cluster::preset_of(&record);
        let session = HttpSession::start(Arc::from(id), self, preset, client.caller.clone());
        session.restore(&record);
        session.set_hears_broadcasts(false);
        let (session, fresh) = self.sessions.adopt(session);
        if fresh {
            let me = self.me.get().cloned().unwrap_or_default();
            if let Err(e) = cluster::follow(me, &session).await {
                self.sessions.remove(&session);
                return Err(self.backend_unavailable(BUS, &e, request_id));
            }
            tracing::debug!("session {id} rebuilt from its record");
        }
        Ok(session)
    }

    /// The 503 of a request that needs `backend` (a fixed name: the metric label), counted in
    /// `mcpkit.server.backend.errors`.
    pub(super) fn backend_unavailable(
        &self,
        backend: &'static str,
        cause: &dyn std::fmt::Display,
        id: Option<&mcpkit_types::RequestId>,
    ) -> Response {
        self.telemetry().backend_error(backend);
        unavailable(&cause.to_string(), id)
    }
}

/// The `backend` label of a session store failure.
pub(super) const SESSION_STORE: &str = "session_store";
/// The `backend` label of a bus failure.
pub(super) const BUS: &str = "bus";

/// The 503 of a request that needs a backend that cannot be reached.
fn unavailable(cause: &str, id: Option<&mcpkit_types::RequestId>) -> Response {
    rpc_error(
        StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::INTERNAL_ERROR,
        &format!("Shared session state is unavailable ({cause})"),
        id,
    )
}
