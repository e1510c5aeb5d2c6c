//! The session directory: where the endpoint creates, finds, touches and ends its sessions,
//! and where a client message another instance awaits is forwarded to it.
//!
//! This instance's [`SessionTable`] is the directory of a lone instance. Instances that share
//! sessions plug a [`SharedDirectory`] in beside it (see [`ScaleOut`]): the table then caches
//! what the shared directory holds. The stateless era never asks the directory.

use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::future::BoxFuture;
use mcpkit_types::jsonrpc::MessageRef;
use mcpkit_types::RequestId;
use tokio_util::sync::CancellationToken;

use super::admission::Client;
use super::reply::{self, header_str, SESSION_ID_HEADER};
use super::session::{HttpSession, Launcher};
use super::streams::SharedLog;
use super::table::{new_session_id, SessionTable};
use crate::server::backend::{BackendError, BackendFuture, EventStore, SessionLimits};
use crate::server::Server;

/// What a shared directory could not do for a request.
#[derive(Debug)]
pub(super) enum Refusal {
    /// A cap holds (the deployment's total or the client's share): a 503 with these words.
    Full(&'static str),
    /// A backend the request needs cannot be reached: `backend` names it (a fixed name: the
    /// metric label).
    Unavailable { backend: &'static str, cause: BackendError },
}

/// The session directory beyond this instance: sessions recorded for every instance that
/// serves the same deployment.
pub(super) trait SharedDirectory: Send + Sync {
    /// Record the new `session` of `client` for every instance, under `limits` counted for the
    /// whole deployment, and follow it here. `table` is where a session ended elsewhere is
    /// removed from.
    fn create<'a>(
        &'a self,
        session: &'a Arc<HttpSession>,
        client: &'a Client,
        limits: SessionLimits,
        table: Weak<SessionTable>,
    ) -> BoxFuture<'a, Result<(), Refusal>>;
    /// What `initialize` negotiated goes into the record, before the client learns the id.
    fn negotiated<'a>(&'a self, session: &'a HttpSession) -> BoxFuture<'a, ()>;
    /// The session `id` of `client` that this instance does not have: rebuilt from its record
    /// (`None` when there is none, or it is another caller's) and kept in `table`.
    fn find<'a>(
        &'a self,
        id: &'a str,
        client: &'a Client,
        launcher: &'a Launcher,
        table: &'a Arc<SessionTable>,
    ) -> BoxFuture<'a, Result<Option<Arc<HttpSession>>, Refusal>>;
    /// The session was used: its record lives `ttl` from now (refreshed lazily).
    fn touch(&self, session: &HttpSession, ttl: Duration);
    /// Forward a client message another instance awaits; `true` when it went there (and is
    /// not for this instance's engine).
    fn forward(&self, session: &HttpSession, frame: &[u8], message: &MessageRef<'_>) -> bool;
    /// What the session's last request wrote (record changes, messages), to wait for before
    /// its answer goes out; `None` when there is nothing.
    fn flush(&self, session: &HttpSession) -> Option<BoxFuture<'static, ()>>;
    /// The session ends for every instance (DELETE).
    fn end<'a>(&'a self, session: &'a HttpSession) -> BoxFuture<'a, ()>;
    /// Start what this instance runs beside its endpoint for the deployment, until `stop`.
    fn join(&self, server: &Server, stop: &CancellationToken);
    /// Seal `requestState` with the deployment's keys from the first request on.
    fn load_keys<'a>(&'a self, server: &'a Server) -> BoxFuture<'a, ()>;
    /// Whether what the directory needs answers (`/readyz`).
    fn ready(&self) -> BackendFuture<()>;
}

/// An endpoint that shares its sessions and streams with other instances: the shared halves of
/// its session directory and of its stream log, and the event store they share.
pub(super) struct ScaleOut {
    pub(super) directory: Arc<dyn SharedDirectory>,
    pub(super) log: Arc<dyn SharedLog>,
    pub(super) events: Arc<dyn EventStore>,
}

/// The sessions of an endpoint: this instance's table, and the shared directory when there is
/// one.
pub(super) struct SessionDirectory {
    table: Arc<SessionTable>,
    limits: SessionLimits,
    shared: Option<Arc<dyn SharedDirectory>>,
}

impl SessionDirectory {
    pub(super) fn new(table: SessionTable, limits: SessionLimits, shared: Option<Arc<dyn SharedDirectory>>) -> Self {
        SessionDirectory {
            table: Arc::new(table),
            limits,
            shared,
        }
    }

    /// This instance's sessions.
    pub(super) fn table(&self) -> &SessionTable {
        &self.table
    }

    /// A new session of `client` (`initialize`), under the session caps: a 503 when one holds
    /// or the shared directory cannot be reached.
    #[allow(clippy::result_large_err)]
    pub(super) async fn create(
        &self,
        launcher: &Launcher,
        client: &Client,
        request_id: Option<&RequestId>,
    ) -> Result<Arc<HttpSession>, Response> {
        let Some(id) = new_session_id() else {
            return Err(reply::internal_error("no randomness for a session id"));
        };
        let start = || launcher.start(id, None, client.caller.clone());
        let session = match self.table.insert_with(client, start) {
            Ok(s) => s,
            Err(refused) => return Err(reply::unavailable(refused.message(), request_id)),
        };
        if let Some(shared) = &self.shared {
            let table = Arc::downgrade(&self.table);
            if let Err(refusal) = shared.create(&session, client, self.limits, table).await {
                self.table.remove(&session);
                return Err(refused(launcher, refusal, request_id));
            }
        }
        Ok(session)
    }

    /// `initialize` succeeded: what it negotiated is kept with the session.
    pub(super) async fn negotiated(&self, session: &HttpSession) {
        if let Some(shared) = &self.shared {
            shared.negotiated(session).await;
        }
    }

    /// The live session the request names in `Mcp-Session-Id`: 400 without one, 404 for an id
    /// never issued, ended or expired, or opened by another caller than `client`'s (spec:
    /// security best practices, "Session Hijacking": a session is bound to its user). A
    /// session the shared directory holds is rebuilt here (503, naming `request_id`, when it
    /// cannot be reached).
    #[allow(clippy::result_large_err)]
    pub(super) async fn find(
        &self,
        launcher: &Launcher,
        headers: &HeaderMap,
        client: &Client,
        request_id: Option<&RequestId>,
    ) -> Result<Arc<HttpSession>, Response> {
        let Some(id) = header_str(headers, SESSION_ID_HEADER) else {
            return Err(reply::missing_session());
        };
        if let Some(session) = self.table.get(id, client) {
            if let Some(shared) = &self.shared {
                shared.touch(&session, self.limits.ttl);
            }
            return Ok(session);
        }
        let Some(shared) = &self.shared else {
            return Err(reply::session_not_found());
        };
        match shared.find(id, client, launcher, &self.table).await {
            Ok(Some(session)) => Ok(session),
            Ok(None) => Err(reply::session_not_found()),
            Err(refusal) => Err(refused(launcher, refusal, request_id)),
        }
    }

    /// A client message (a response or a notification): `true` when it went to the instance
    /// that awaits it rather than to this session's engine.
    pub(super) fn forward(&self, session: &HttpSession, frame: &[u8], message: &MessageRef<'_>) -> bool {
        self.shared
            .as_ref()
            .is_some_and(|shared| shared.forward(session, frame, message))
    }

    /// Wait for what the session's last request wrote to the shared directory.
    pub(super) async fn flush(&self, session: &HttpSession) {
        if let Some(pending) = self.shared.as_ref().and_then(|shared| shared.flush(session)) {
            pending.await;
        }
    }

    /// The session ends (DELETE): for every instance, then here.
    pub(super) async fn end(&self, session: &HttpSession) {
        if let Some(shared) = &self.shared {
            shared.end(session).await;
        }
        self.table.remove(session);
    }

    /// The session ends here (its `initialize` failed).
    pub(super) fn remove(&self, session: &HttpSession) {
        self.table.remove(session);
    }
}

/// The reply to a request the shared directory refused; an unreachable backend is counted in
/// `mcpkit.server.backend.errors`.
fn refused(launcher: &Launcher, refusal: Refusal, id: Option<&RequestId>) -> Response {
    match refusal {
        Refusal::Full(message) => reply::unavailable(message, id),
        Refusal::Unavailable { backend, cause } => {
            launcher.telemetry().backend_error(backend);
            reply::unavailable(&format!("Shared session state is unavailable ({cause})"), id)
        }
    }
}
