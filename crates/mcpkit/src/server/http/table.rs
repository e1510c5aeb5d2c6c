//! The live sessions of an endpoint, by id: created by `initialize`, found by
//! `Mcp-Session-Id`, ended by DELETE, idle expiry or shutdown.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::session::HttpSession;

pub(super) struct SessionTable {
    sessions: Mutex<HashMap<Arc<str>, Arc<HttpSession>>>,
    idle_timeout: Duration,
    max_sessions: usize,
}

/// Why a session could not be added.
pub(super) struct Full;

impl SessionTable {
    pub(super) fn new(idle_timeout: Duration, max_sessions: usize) -> SessionTable {
        SessionTable {
            sessions: Mutex::new(HashMap::new()),
            idle_timeout,
            max_sessions,
        }
    }

    /// How often the reaper looks for idle sessions.
    pub(super) fn reap_period(&self) -> Duration {
        (self.idle_timeout / 4)
            .max(Duration::from_millis(50))
            .min(Duration::from_secs(30))
    }

    /// Add the session `start` makes, unless the table is full even after expiring the idle
    /// ones.
    pub(super) fn insert_with(&self, start: impl FnOnce() -> Arc<HttpSession>) -> Result<Arc<HttpSession>, Full> {
        let mut sessions = lock(&self.sessions);
        if sessions.len() >= self.max_sessions {
            drop(sessions);
            self.expire_idle();
            sessions = lock(&self.sessions);
        }
        if sessions.len() >= self.max_sessions {
            return Err(Full);
        }
        let session = start();
        sessions.insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// The live session `id`, marked active. A session idle past the timeout is ended here
    /// rather than served, whether or not the reaper has come by yet.
    pub(super) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = lock(&self.sessions).get(id).cloned()?;
        if session.idle() > self.idle_timeout {
            self.remove(&session);
            tracing::debug!("session {} expired", session.id);
            return None;
        }
        session.touch();
        Some(session)
    }

    /// End `session` and forget it.
    pub(super) fn remove(&self, session: &HttpSession) {
        lock(&self.sessions).remove(&session.id);
        session.close();
    }

    /// End every session idle longer than the timeout.
    pub(super) fn expire_idle(&self) {
        let limit = self.idle_timeout;
        let expired: Vec<Arc<HttpSession>> = {
            let mut sessions = lock(&self.sessions);
            let ids: Vec<Arc<str>> = sessions
                .iter()
                .filter(|(_, s)| s.idle() > limit)
                .map(|(k, _)| k.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for s in expired {
            tracing::debug!("session {} expired", s.id);
            s.close();
        }
    }
}

/// 128 bits from the OS's CSPRNG, as 32 hex digits (visible ASCII, as the spec requires).
pub(super) fn new_session_id() -> Option<Arc<str>> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into())
}
