//! What every request of one Streamable HTTP endpoint shares.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use mcpkit_types::headers::SESSION_ID;
use mcpkit_types::ErrorCode;
use tokio_util::sync::CancellationToken;

use super::admission::{Admission, Client};
use super::config::HttpConfig;
use super::reply::{header_str, rpc_error};
use super::routes::RouteSettings;
use super::session::{Backend, HttpSession};
use super::table::SessionTable;
use super::tap::WireTap;
use crate::engine::Role;
use crate::server::Server;

pub(super) struct HttpState {
    pub(super) backend: Backend,
    pub(super) config: HttpConfig,
    pub(super) sessions: SessionTable,
    /// How sessions keep their streams (one event store for all of them).
    pub(super) routes: RouteSettings,
    /// Ends every open SSE stream (graceful shutdown).
    pub(super) shutdown: CancellationToken,
    /// Serves stateless-era POSTs directly (no engine per request); only a [`Server`] backend
    /// speaks 2026-07-28.
    pub(super) stateless: Option<StatelessBackend>,
    /// Shown every message read and written ([`super::HttpServer::inspect`]).
    pub(super) tap: WireTap,
}

/// The server behind stateless-era requests, and its handler table for them.
pub(super) struct StatelessBackend {
    pub(super) server: Server,
    pub(super) service: Arc<dyn Role>,
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
    ) -> HttpState {
        let stateless = match &backend {
            Backend::Server(s) => Some(StatelessBackend {
                server: s.clone(),
                service: s.stateless_service(),
            }),
            Backend::Factory(_) => None,
        };
        HttpState {
            sessions: SessionTable::new(config.session_idle_timeout, admission),
            routes: RouteSettings {
                store: config.make_event_store(),
                clock: config.clock.clone(),
                buffer: config.stream_buffer,
                streams_kept: config.streams_per_session,
                stream_prefix: std::sync::Arc::from(""),
            },
            backend,
            config,
            shutdown,
            stateless,
            tap,
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
    /// security best practices, "Session Hijacking": a session is bound to its user).
    #[allow(clippy::result_large_err)]
    pub(super) fn session_of(&self, headers: &HeaderMap, client: &Client) -> Result<Arc<HttpSession>, Response> {
        let Some(id) = header_str(headers, SESSION_ID) else {
            return Err(rpc_error(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Missing Mcp-Session-Id",
                None,
            ));
        };
        self.sessions.get(id, client).ok_or_else(|| {
            rpc_error(
                StatusCode::NOT_FOUND,
                ErrorCode::INVALID_REQUEST,
                "Session not found",
                None,
            )
        })
    }
}
