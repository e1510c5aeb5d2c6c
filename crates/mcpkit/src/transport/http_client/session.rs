//! The session of a handshake-era connection (spec: `basic/transports` "Session Management"):
//! the `Mcp-Session-Id` and negotiated version learned from `initialize`, a new session when
//! the server forgets the old one (`404`: the recorded handshake is replayed), and `DELETE` at
//! the end.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use mcpkit_types::headers::{PROTOCOL_VERSION, SESSION_ID};
use mcpkit_types::jsonrpc::{self, MessageRef};
use mcpkit_types::method::{Initialized, NotificationMethod};
use mcpkit_types::{ErrorObject, RequestId};
use reqwest::StatusCode;
use serde::Deserialize;

use super::post::Delivery;
use super::{other, Inner, Mode};
use crate::sync::lock;

/// How long `close` waits for the server to acknowledge `DELETE`.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long `close` waits for the POSTs of notifications already sent.
const NOTES_TIMEOUT: Duration = Duration::from_secs(2);

/// The version in an `initialize` result.
#[derive(Deserialize)]
struct InitializeVersion {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
}

impl Inner {
    pub(super) fn remember_session(&self, response: &reqwest::Response) {
        if let Some(id) = response.headers().get(SESSION_ID).and_then(|v| v.to_str().ok()) {
            lock(&self.state).session_id = Some(id.into());
        }
    }

    /// Whether `frame` answers `wanted` (and how); records the negotiated version when it
    /// answers the pending `initialize`.
    pub(super) fn inspect(&self, frame: &[u8], wanted: Option<&RequestId>) -> Option<Result<(), ErrorObject>> {
        let init = lock(&self.state).awaiting_init.clone();
        if wanted.is_none() && init.is_none() {
            return None;
        }
        let Ok(MessageRef::Response(r)) = jsonrpc::parse(frame) else {
            return None;
        };
        if init.as_ref() == Some(&r.id) {
            if let Ok(raw) = &r.outcome {
                if let Ok(v) = serde_json::from_str::<InitializeVersion>(raw.get()) {
                    let mut s = lock(&self.state);
                    s.protocol_version = Some(v.protocol_version.into());
                    s.awaiting_init = None;
                }
            }
        }
        (wanted == Some(&r.id)).then(|| r.outcome.map(|_| ()))
    }

    /// The session id a POST carries; while a new session is being started, waits for it.
    pub(super) async fn session_for_request(&self) -> Option<Arc<str>> {
        let _no_new_session_under_way = self.session_gate.read().await;
        self.session_id()
    }

    /// The session `stale` expired: replay `initialize` and `notifications/initialized` to
    /// start a new one (spec: "Session Management" 4). Concurrent callers start only one, and
    /// no other POST leaves until it is ready (see `session_for_request`).
    pub(super) async fn reinitialize(self: &Arc<Self>, stale: &str) -> io::Result<()> {
        let _no_request_leaves = self.session_gate.write().await;
        let (init, initialized) = {
            let mut s = lock(&self.state);
            if s.session_id.as_deref() != Some(stale) {
                // Someone else already started a new session.
                return Ok(());
            }
            s.session_id = None;
            if let Some(t) = s.standalone.take() {
                t.cancel();
            }
            s.awaiting_init = s.initialize.as_ref().map(|(id, _)| id.clone());
            (s.initialize.clone(), s.initialized.clone())
        };
        let Some((id, frame)) = init else {
            return Err(other(
                "the MCP session expired, and no initialize request was recorded to start a new one",
            ));
        };
        tracing::debug!("MCP session {stale} expired; starting a new one");
        let response = self
            .send_authorized(|| self.post_request(&frame, None, false))
            .await
            .map_err(|e| other(format!("starting a new MCP session failed: {e}")))?;
        let status = response.status();
        if !status.is_success() {
            return Err(other(format!("starting a new MCP session failed: HTTP {status}")));
        }
        self.remember_session(&response);
        self.read_reply(response, &id, Delivery::SuppressResponse)
            .await
            .map_err(|reason| other(format!("starting a new MCP session failed: {reason}")))?;
        if let Some(note) = initialized {
            let session = self.session_id();
            let response = self
                .send_authorized(|| self.post_request(&note, session.as_deref(), true))
                .await
                .map_err(|e| other(format!("starting a new MCP session failed: {e}")))?;
            if !response.status().is_success() {
                return Err(other(format!(
                    "starting a new MCP session failed: {} got HTTP {}",
                    Initialized::NAME,
                    response.status()
                )));
            }
            if self.standalone_stream {
                drop(self.start_standalone());
            }
        }
        Ok(())
    }

    /// End the connection: stop every stream and POST, and DELETE the session.
    pub(super) async fn close(&self) {
        if self.shutdown.is_cancelled() {
            return;
        }
        // Notifications already sent (a cancellation, say) go out before the session ends.
        self.notes.close();
        let _ = tokio::time::timeout(NOTES_TIMEOUT, self.notes.wait()).await;
        self.shutdown.cancel();
        let (mode, session, version) = {
            let s = lock(&self.state);
            (s.mode.clone(), s.session_id.clone(), s.protocol_version.clone())
        };
        let (Mode::Streamable, Some(session)) = (mode, session) else {
            return;
        };
        let mut req = self
            .http
            .delete(self.url.clone())
            .headers(self.headers.clone())
            .header(SESSION_ID, &*session);
        if let Some(v) = version {
            req = req.header(PROTOCOL_VERSION, &*v);
        }
        if let Some(auth) = &self.auth {
            for (name, value) in auth.headers(&reqwest::Method::DELETE, &self.url) {
                req = req.header(name, value);
            }
        }
        match tokio::time::timeout(DELETE_TIMEOUT, req.send()).await {
            Ok(Ok(r)) if r.status() == StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!("the MCP server does not let clients end sessions");
            }
            Ok(Ok(r)) => tracing::debug!("DELETE of the MCP session: HTTP {}", r.status()),
            Ok(Err(e)) => tracing::debug!("DELETE of the MCP session failed: {e}"),
            Err(_) => tracing::debug!("DELETE of the MCP session timed out"),
        }
    }
}
