//! What the server holds of the client it serves ([`ClientState`]): the negotiated revision and
//! client profile, the log level, the subscriptions. A handshake-era session (a stdio
//! connection, an HTTP `Mcp-Session-Id`) keeps one for its life; a stateless-era request has one
//! of its own, built from its `_meta`. A small struct, not a task. ("Session" names only the
//! handshake-era session.)

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mcpkit_types::schema::{ClientCapabilities, Implementation, LoggingLevel};
use mcpkit_types::ProtocolVersion;

use crate::engine::Peer;
#[cfg(feature = "http-server")]
use crate::server::backend::SessionRecord;
use crate::server::backend::SessionUpdate;
use crate::server::stateless::ClientProfile;

const LOG_UNSET: u8 = u8::MAX;
/// No log messages at all (a stateless request that set no `logLevel`).
const LOG_OFF: u8 = u8::MAX - 1;

/// Attached to a request served on a throwaway session of its own (sessionless HTTP mode):
/// nothing bound to its session outlives the request, so what must (a task) is bound to the
/// verified caller, or to nothing but its own unguessable id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionlessRequest;

/// What a request's client counts as for per-client quotas beyond sessions (a task's
/// [`crate::server::backend::TaskRecord::client`]): its verified caller's principal, else its
/// address. Attached by the HTTP front end, on a server that keeps such quotas
/// ([`crate::server::Server::counts_clients`]), to each request that can make a task: one whose
/// body names the Tasks extension, or on a session whose client declared it. Absent on stdio.
#[derive(Debug, Clone)]
pub(crate) struct QuotaKey(pub(crate) String);

/// What one client negotiated, and what it subscribed to.
#[derive(Debug, Default)]
pub(crate) struct ClientState {
    pub(crate) peer: OnceLock<Peer>,
    /// An idle session that never negotiated (and every session until it does) pays a version
    /// and a pointer for it, not the ~1 KiB of capability objects.
    negotiated: OnceLock<Negotiated>,
    pub(crate) initialized: AtomicBool,
    log_level: AtomicLevel,
    /// Ordered, not hashed: no hasher keys carried by every session that never subscribes
    /// (at most `max_subscriptions` entries, so the lookups stay short).
    pub(crate) subscriptions: Mutex<BTreeSet<String>>,
    /// Every request on this connection must be a stateless-era request (an HTTP POST that
    /// declared 2026-07-28): no handshake is accepted.
    pub(crate) stateless_only: bool,
    /// A random name for this session, made on first use (the owner of its tasks).
    scope: OnceLock<Box<str>>,
    /// Broadcasts (list_changed, resources/updated) are delivered by another instance: the one
    /// holding the session's GET stream.
    deaf_to_broadcasts: AtomicBool,
    /// Told every change worth keeping in a shared session store.
    observer: OnceLock<Observer>,
    /// Its place in the server's live sessions, given back when the session is dropped.
    pub(crate) slot: OnceLock<super::live_sessions::Slot>,
    /// What this session showed or hid (boxed: most sessions never change it).
    pub(crate) visibility: OnceLock<Box<super::access::Visibility>>,
}

/// What `initialize` (or a stateless request's `_meta`) settled.
#[derive(Debug)]
struct Negotiated {
    version: ProtocolVersion,
    client: Arc<ClientProfile>,
}

/// What a session tells of its changes (HTTP sessions of instances sharing a session store).
#[derive(Clone)]
pub(crate) struct Observer(pub(crate) std::sync::Arc<dyn Fn(SessionUpdate) + Send + Sync>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

#[derive(Debug)]
struct AtomicLevel(AtomicU8);

impl Default for AtomicLevel {
    fn default() -> Self {
        AtomicLevel(AtomicU8::new(LOG_UNSET))
    }
}

impl ClientState {
    /// A connection that accepts only stateless-era requests.
    pub(crate) fn stateless_only() -> ClientState {
        ClientState {
            stateless_only: true,
            ..Default::default()
        }
    }

    /// The state of one stateless-era request: negotiated from its `_meta`, logging only at the
    /// level it asked for (spec: 2026-07-28 `server/utilities/logging`).
    pub(crate) fn for_request(
        v: ProtocolVersion,
        client: Arc<ClientProfile>,
        log: Option<LoggingLevel>,
    ) -> ClientState {
        // Built whole: setting a `OnceLock` and two atomics after the fact costs more.
        ClientState {
            negotiated: OnceLock::from(Negotiated { version: v, client }),
            initialized: AtomicBool::new(true),
            log_level: AtomicLevel(AtomicU8::new(log.map_or(LOG_OFF, |l| l as u8))),
            ..Default::default()
        }
    }

    pub(crate) fn negotiate(&self, v: ProtocolVersion, caps: ClientCapabilities, info: Implementation) -> bool {
        let client = Arc::new(ClientProfile::new(caps, info));
        self.negotiated.set(Negotiated { version: v, client }).is_ok()
    }

    pub(crate) fn is_negotiated(&self) -> bool {
        self.negotiated.get().is_some()
    }

    pub(crate) fn version(&self) -> ProtocolVersion {
        self.negotiated
            .get()
            .map_or(ProtocolVersion::LATEST_HANDSHAKE, |n| n.version)
    }

    pub(crate) fn client_capabilities(&self) -> ClientCapabilities {
        self.negotiated
            .get()
            .and_then(|n| n.client.capabilities.as_deref().cloned())
            .unwrap_or_default()
    }

    /// Whether the client declared extension `id` in its capabilities (by reference: no copy).
    #[cfg(feature = "http-server")]
    pub(crate) fn declares_extension(&self, id: &str) -> bool {
        self.negotiated
            .get()
            .and_then(|n| n.client.capabilities.as_deref())
            .is_some_and(|c| c.extension(id).is_some())
    }

    pub(crate) fn client_info(&self) -> Option<Implementation> {
        self.negotiated.get().map(|n| n.client.info.clone())
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        self.log_level.0.store(level as u8, Ordering::Relaxed);
    }

    /// Until the client sets a level, everything is sent (the spec leaves the default to us).
    pub(crate) fn log_enabled(&self, level: LoggingLevel) -> bool {
        let min = self.log_level.0.load(Ordering::Relaxed);
        min == LOG_UNSET || (min != LOG_OFF && level as u8 >= min)
    }

    /// This session's random name: what binds a task to the session that made it.
    pub(crate) fn scope(&self) -> &str {
        self.scope.get_or_init(|| {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let mut bytes = [0u8; 16];
            // Without randomness, a number unique in this process still tells sessions apart.
            if getrandom::fill(&mut bytes).is_err() {
                return format!("n{}", NEXT.fetch_add(1, Ordering::Relaxed)).into();
            }
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into()
        })
    }

    /// Whether this instance delivers server-wide notifications to the session.
    pub(crate) fn hears_broadcasts(&self) -> bool {
        !self.deaf_to_broadcasts.load(Ordering::Relaxed)
    }

    /// Deliver server-wide notifications here, or leave them to another instance.
    #[cfg(feature = "http-server")]
    pub(crate) fn set_hears_broadcasts(&self, on: bool) {
        self.deaf_to_broadcasts.store(!on, Ordering::Relaxed);
    }

    /// Tell `observer` of every change from now on (once).
    #[cfg(feature = "http-server")]
    pub(crate) fn observe_with(&self, observer: Observer) {
        let _ = self.observer.set(observer);
    }

    /// The client changed something kept in the session record.
    pub(crate) fn changed(&self, change: SessionUpdate) {
        if let Some(o) = self.observer.get() {
            (o.0)(change);
        }
    }

    /// Take a change made on another instance (not told to the observer again).
    #[cfg(feature = "http-server")]
    pub(crate) fn apply(&self, change: &SessionUpdate) {
        match change {
            SessionUpdate::Initialized => self.initialized.store(true, Ordering::Relaxed),
            SessionUpdate::LogLevel(level) => self.set_log_level(*level),
            SessionUpdate::Subscribe(uri) => {
                crate::sync::lock(&self.subscriptions).insert(uri.clone());
            }
            SessionUpdate::Unsubscribe(uri) => {
                crate::sync::lock(&self.subscriptions).remove(uri);
            }
            SessionUpdate::Visibility(rules) => self.visibility.get_or_init(Box::default).replace(rules),
            // Negotiated once, from the record, when the session is rebuilt.
            _ => {}
        }
    }

    /// Take what a session record says beyond its negotiation (level, subscriptions).
    #[cfg(feature = "http-server")]
    pub(crate) fn restore(&self, record: &SessionRecord) {
        if record.initialized {
            self.initialized.store(true, Ordering::Relaxed);
        }
        if let Some(level) = record.log_level {
            self.set_log_level(level);
        }
        crate::sync::lock(&self.subscriptions).extend(record.subscriptions.iter().cloned());
        if !record.visibility.is_empty() {
            self.visibility.get_or_init(Box::default).replace(&record.visibility);
        }
    }

    pub(crate) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.lock().map(|s| s.contains(uri)).unwrap_or(false)
    }
}
