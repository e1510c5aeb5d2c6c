//! The session store: one record per handshake-era session, so that any instance can validate
//! an `Mcp-Session-Id` and serve the session's requests.

use std::collections::BTreeSet;
use std::time::Duration;

use mcpkit_types::schema::{ClientCapabilities, Implementation, LoggingLevel};
use serde::{Deserialize, Serialize};

use super::BackendFuture;

/// What the cluster knows about one handshake-era session: enough for any instance to rebuild
/// it. Times are milliseconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The `Mcp-Session-Id` (32 hex digits, from the OS's CSPRNG).
    pub id: String,
    /// The negotiated protocol revision (`"2025-11-25"`); `None` until `initialize` answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The client's `clientInfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
    /// The client's capabilities.
    #[serde(default)]
    pub client_capabilities: ClientCapabilities,
    /// `notifications/initialized` arrived.
    #[serde(default)]
    pub initialized: bool,
    /// The level of `logging/setLevel`, when the client set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<LoggingLevel>,
    /// The resource URIs the client subscribed to.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub subscriptions: BTreeSet<String>,
    /// The digest of the verified caller that opened it (`VerifiedCaller::binding`), when
    /// authorization is on: no other caller may use the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// The client the session counts against for the per-client cap (the `client` given to
    /// [`SessionStore::create`], which sets it): `None` when nothing identified the client,
    /// and in records written before the field existed (those count only in the total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// What the session was shown or hidden (`RequestContext::show`/`hide`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visibility: Vec<VisibilityRule>,
    /// When it was created.
    pub created_ms: u64,
    /// When it was last seen (refreshed lazily: at most a fraction of the TTL behind).
    pub last_seen_ms: u64,
}

impl SessionRecord {
    /// A record for a session opened now by `caller`, not yet negotiated.
    pub fn new(id: impl Into<String>, caller: Option<String>) -> SessionRecord {
        let now = now_ms();
        SessionRecord {
            id: id.into(),
            protocol_version: None,
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            initialized: false,
            log_level: None,
            subscriptions: BTreeSet::new(),
            caller,
            client: None,
            visibility: Vec::new(),
            created_ms: now,
            last_seen_ms: now,
        }
    }

    /// Make `change` (what every store does with [`SessionStore::update`]).
    pub fn apply(&mut self, change: &SessionUpdate) {
        match change {
            SessionUpdate::Negotiated(n) => {
                self.protocol_version = Some(n.protocol_version.clone());
                self.client_info = Some(n.client_info.clone());
                self.client_capabilities = n.client_capabilities.clone();
            }
            SessionUpdate::Initialized => self.initialized = true,
            SessionUpdate::LogLevel(level) => self.log_level = Some(*level),
            SessionUpdate::Subscribe(uri) => {
                self.subscriptions.insert(uri.clone());
            }
            SessionUpdate::Unsubscribe(uri) => {
                self.subscriptions.remove(uri);
            }
            SessionUpdate::Visibility(rules) => self.visibility.clone_from(rules),
        }
    }
}

/// One change of what a session sees: the items of a name or a tag, shown or hidden.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VisibilityRule {
    /// The item's name (`false`) or a tag (`true`).
    pub by_tag: bool,
    /// The name or tag.
    pub value: String,
    /// Shown (`true`) or hidden.
    pub show: bool,
}

/// One change to a session record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SessionUpdate {
    /// `initialize` was answered.
    Negotiated(Box<Negotiation>),
    /// `notifications/initialized` arrived.
    Initialized,
    /// `logging/setLevel`.
    LogLevel(LoggingLevel),
    /// `resources/subscribe`.
    Subscribe(String),
    /// `resources/unsubscribe`.
    Unsubscribe(String),
    /// What the session sees changed: the whole list of its rules now.
    Visibility(Vec<VisibilityRule>),
}

/// What `initialize` settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Negotiation {
    /// The revision agreed.
    pub protocol_version: String,
    /// The client's `clientInfo`.
    pub client_info: Implementation,
    /// The client's capabilities.
    pub client_capabilities: ClientCapabilities,
}

/// Whether [`SessionStore::create`] kept the record. Every refusal wrote nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// Kept: the session exists for every instance.
    Yes,
    /// The store holds `max_sessions` live sessions already (of all clients together).
    Full,
    /// The client the session is for holds `max_per_client` live sessions already (on all
    /// instances together). Checked before [`Admitted::Full`]: a client at its own cap hears
    /// that, whether or not the store is full too.
    ClientFull,
    /// A live session has this id already. Checked first.
    Duplicate,
}

/// The caps a [`SessionStore`] creates a session under, and how long it lives unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Live sessions in all (every instance together).
    pub max_sessions: usize,
    /// Live sessions of one client.
    pub max_per_client: usize,
    /// How long a record lives without being used (the idle timeout).
    pub ttl: Duration,
}

/// Storage of handshake-era session records.
///
/// - A record lives for `ttl` from its last [`create`](SessionStore::create) or
///   [`touch`](SessionStore::touch) (idle expiry); an expired record is gone for every call.
/// - The caps of [`create`](SessionStore::create) hold for all instances together: the total
///   (`max_sessions`) and each client's share (`max_per_client` live records with the same
///   `client`). Both checks and the insert are one step that cannot interleave with another
///   instance's, and cost the same however many sessions there are (no scan of all records).
/// - A record stops counting, in the total and for its client, when it is deleted or expires.
/// - `create` of an id that is live already overwrites nothing ([`Admitted::Duplicate`]).
/// - `get`, `update`, `touch`, `delete` of an id never created (or expired) write nothing.
pub trait SessionStore: std::fmt::Debug + Send + Sync + 'static {
    /// Keep `record` for `limits.ttl` as a session of `client`, unless `limits.max_sessions`
    /// live records exist already, or `limits.max_per_client` of `client`'s (see [`Admitted`]
    /// for which answer wins). `client` names who the session counts against (the HTTP layer gives the verified
    /// caller's binding, or `peer:<ip address>`; `None` when neither is known: then only
    /// `limits.max_sessions` applies). The store keeps it as the record's
    /// [`client`](SessionRecord::client), replacing what the field held. It is client input
    /// (an address, a token subject): an implementation that names a key after it hashes or
    /// escapes it.
    fn create(&self, record: SessionRecord, client: Option<String>, limits: SessionLimits) -> BackendFuture<Admitted>;
    /// The live record `id`.
    fn get(&self, id: &str) -> BackendFuture<Option<SessionRecord>>;
    /// Apply `change` to the live record `id` (see [`SessionRecord::apply`]); `false` when
    /// there is none.
    fn update(&self, id: &str, change: SessionUpdate) -> BackendFuture<bool>;
    /// The session is in use: its TTL starts again (and `last_seen_ms` is now); `false` when it
    /// is gone.
    fn touch(&self, id: &str, ttl: Duration) -> BackendFuture<bool>;
    /// End the session (its place in the total and in its client's share goes back); `false`
    /// when there was none.
    fn delete(&self, id: &str) -> BackendFuture<bool>;
    /// How many live sessions there are (all instances).
    fn count(&self) -> BackendFuture<usize>;
    /// The live records of all instances, in no particular order (at most the cap of
    /// [`create`](SessionStore::create)): whom a catalogue-wide notification is for, wherever
    /// their GET stream is and whether or not its instance is alive.
    fn live(&self) -> BackendFuture<Vec<SessionRecord>>;
    /// Whether the store answers (`/readyz`).
    fn ready(&self) -> BackendFuture<()> {
        super::ready(Ok(()))
    }
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
