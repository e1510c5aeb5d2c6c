//! Per-connection state of a handshake-era session: a small struct, not a task.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use mcpkit_types::schema::{ClientCapabilities, Implementation, LoggingLevel};
use mcpkit_types::ProtocolVersion;

use crate::peer::Peer;

const LOG_UNSET: u8 = u8::MAX;

/// What one client negotiated, and what it subscribed to.
#[derive(Debug, Default)]
pub(crate) struct Session {
    pub(crate) peer: OnceLock<Peer>,
    negotiated: OnceLock<(ProtocolVersion, ClientCapabilities, Implementation)>,
    pub(crate) initialized: AtomicBool,
    log_level: AtomicLevel,
    pub(crate) subscriptions: Mutex<HashSet<String>>,
}

#[derive(Debug)]
struct AtomicLevel(AtomicU8);

impl Default for AtomicLevel {
    fn default() -> Self {
        AtomicLevel(AtomicU8::new(LOG_UNSET))
    }
}

impl Session {
    pub(crate) fn negotiate(&self, v: ProtocolVersion, caps: ClientCapabilities, info: Implementation) -> bool {
        self.negotiated.set((v, caps, info)).is_ok()
    }

    pub(crate) fn is_negotiated(&self) -> bool {
        self.negotiated.get().is_some()
    }

    pub(crate) fn version(&self) -> ProtocolVersion {
        self.negotiated.get().map_or(ProtocolVersion::LATEST_HANDSHAKE, |n| n.0)
    }

    pub(crate) fn client_capabilities(&self) -> ClientCapabilities {
        self.negotiated.get().map(|n| n.1.clone()).unwrap_or_default()
    }

    pub(crate) fn client_info(&self) -> Option<Implementation> {
        self.negotiated.get().map(|n| n.2.clone())
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.log_level.0.store(level as u8, Ordering::Relaxed);
    }

    /// Until the client sets a level, everything is sent (the spec leaves the default to us).
    pub(crate) fn log_enabled(&self, level: LoggingLevel) -> bool {
        let min = self.log_level.0.load(Ordering::Relaxed);
        min == LOG_UNSET || level as u8 >= min
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.lock().map(|s| s.contains(uri)).unwrap_or(false)
    }
}
