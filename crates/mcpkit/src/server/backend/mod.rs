//! Backends: where the state that makes N instances one server lives (the "Scale-out" design).
//!
//! Eight small traits, each with an in-memory implementation (the default, one process) that
//! other crates implement over a shared database (`mcpkit-redis`):
//!
//! | trait | holds |
//! | --- | --- |
//! | [`SessionStore`] | handshake-era session records ([`SessionRecord`]), with the session cap and idle expiry |
//! | [`EventStore`] | the events of every SSE stream, for `Last-Event-ID` resumption on any instance |
//! | [`Bus`] | messages to a session, to an instance, or to every instance |
//! | [`KeyRing`] | the keys that seal `requestState` |
//! | [`SwitchStore`] | which switchable catalogue items are on, with a version bumped per change |
//! | [`TaskStore`] | the Tasks extension's tasks, with their owner and expiry |
//! | [`RateStore`] | the rate-limit layer's token buckets ([`crate::server::middleware::RateLimit`]) |
//! | [`CacheStore`] | the response cache's results ([`crate::server::middleware::ResponseCache`]) |
//!
//! [`Backends`] bundles one of each with the name of this instance; the [`RateStore`] and
//! [`CacheStore`] are handed to the layers that use them.
//!
//! # The contract every implementation keeps
//!
//! - **Object-safe and async**: every operation returns a [`BackendFuture`] (boxed, `Send`,
//!   `'static`: it owns what it needs, so a caller may spawn it). An in-memory implementation
//!   does its work inside the call and returns a ready future, so that a caller on a hot path
//!   can take the result without awaiting (`now_or_never`); an implementation doing I/O may
//!   issue its command when polled.
//! - **Failure is an answer**: an unreachable backend is [`BackendError::Unavailable`] with a
//!   reason a person can act on, never a panic and never a hang longer than the
//!   implementation's own timeout. Callers turn it into an HTTP 503 with a JSON-RPC error body
//!   where the request needs the state, and carry on where it does not. An implementation
//!   reconnects by itself.
//! - **Client input is data, not names**: session ids, stream names and addresses come from
//!   the HTTP layer after validation, but an implementation building key names from them must
//!   still escape them (or hash them): a key name never contains unescaped client input.
//! - **Bounded**: every store has a bound and an expiry (the TTLs passed in, or its own
//!   limits); nothing a client does grows one without limit.
//! - **One behaviour**: every implementation passes the shared behaviour suite, so the HTTP
//!   layer cannot tell them apart except by speed and by what survives a process.

mod bus;
mod cache;
mod events;
mod keys;
pub mod memory;
mod rates;
mod sessions;
mod switches;
pub(crate) mod tasks;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use bus::{Address, Bus, Subscription};
pub use cache::CacheStore;
pub use events::{valid_stream_name, EventId, EventStore};
pub use keys::{KeyRing, SealingKey};
pub use rates::{gcra, Bucket, Rate, RateStore, Taken};
pub use sessions::{Admitted, Negotiation, SessionLimits, SessionRecord, SessionStore, SessionUpdate, VisibilityRule};
pub use switches::{SwitchStore, Switched, Switches};

pub use tasks::{
    Applied, Lookup, StoreFuture, TaskChange, TaskLimits, TaskOutcome, TaskOwner, TaskProgress, TaskRecord,
    TaskRequest, TaskStore, TaskStoreError,
};

/// What a backend operation returns: boxed so the traits stay object-safe, `'static` so the
/// caller may spawn it.
pub type BackendFuture<T> = Pin<Box<dyn Future<Output = Result<T, BackendError>> + Send + 'static>>;

/// Why a backend could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend cannot be reached or failed (a database outage); the reason names it.
    #[error("backend unavailable: {0}")]
    Unavailable(String),
}

/// A ready [`BackendFuture`]: what in-memory implementations return.
pub fn ready<T: Send + 'static>(value: Result<T, BackendError>) -> BackendFuture<T> {
    Box::pin(std::future::ready(value))
}

/// One of each backend, and the name of this instance. Cheap to clone. Instances that share
/// the same backends (the same database) act as one server.
#[derive(Clone)]
pub struct Backends {
    /// Handshake-era sessions.
    pub sessions: Arc<dyn SessionStore>,
    /// SSE events for `Last-Event-ID` resumption.
    pub events: Arc<dyn EventStore>,
    /// Messages between instances.
    pub bus: Arc<dyn Bus>,
    /// The `requestState` sealing keys.
    pub keys: Arc<dyn KeyRing>,
    /// The Tasks extension's store (give the same one to `TasksConfig::store`).
    pub tasks: Arc<dyn TaskStore>,
    /// The on/off states of switchable catalogue items.
    pub switches: Arc<dyn SwitchStore>,
    /// This instance's name: unique among the instances sharing the backends, made of
    /// `[A-Za-z0-9_.-]` (it names bus addresses). Default: random.
    pub instance_id: Arc<str>,
}

impl std::fmt::Debug for Backends {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backends")
            .field("instance_id", &self.instance_id)
            .field("sessions", &self.sessions)
            .field("events", &self.events)
            .field("bus", &self.bus)
            .field("keys", &self.keys)
            .field("tasks", &self.tasks)
            .field("switches", &self.switches)
            .finish()
    }
}

impl Backends {
    /// The same backends under another instance name.
    pub fn with_instance_id(mut self, id: impl Into<Arc<str>>) -> Backends {
        self.instance_id = id.into();
        self
    }

    /// Whether every backend answers (the `/readyz` check): the first failure, named.
    pub async fn ready(&self) -> Result<(), BackendError> {
        let (s, e, b, k, w) = futures_util::join!(
            self.sessions.ready(),
            self.events.ready(),
            self.bus.ready(),
            self.keys.ready(),
            self.switches.ready()
        );
        s.and(e).and(b).and(k).and(w)
    }
}

/// 64 random bits as 16 hex digits (a time-derived name if the OS random source fails: an
/// instance name need not be secret, only unique).
pub(crate) fn random_instance_id() -> Arc<str> {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos as u64).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into()
}

/// Whether `id` is a usable instance id: 1 to 64 characters of `[A-Za-z0-9_.-]`.
pub fn valid_instance_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}
