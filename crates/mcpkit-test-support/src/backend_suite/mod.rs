//! The behaviour every implementation of the backend traits (`mcpkit::server::backend`) must
//! have, as async functions a test calls with two instances of one fresh deployment: the
//! in-memory backends (two servers of one process sharing them) and the Redis backends (two
//! connections to one Redis) run the same checks. Each check panics, naming the broken rule,
//! on the first difference. The Tasks store has its own suite ([`check_task_store`]), which
//! [`check_backends`]' callers run beside it.
//!
//! Timing: the expiry checks wait for real TTLs of under a second; the whole suite takes a few
//! seconds.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use mcpkit::server::backend::{
    Address, Admitted, Backends, Bus, EventStore, KeyRing, SealingKey, SessionLimits, SessionRecord, SessionStore,
    SessionUpdate, Subscription, SwitchStore, Switched,
};
use mcpkit::server::RequestStateKeys;
use mcpkit::types::schema::LoggingLevel;

use crate::within;

mod bus;
mod events;
mod keys;
mod sessions;
mod switches;
mod tasks;

pub use bus::check_bus;
pub use events::check_event_store;
pub use keys::check_key_ring;
pub use sessions::{check_per_client_cap, check_session_store};
pub use switches::check_switch_store;
pub use tasks::check_task_store;

/// The bounds the suite gives the event store under test.
#[derive(Debug, Clone, Copy)]
pub struct EventBounds {
    /// Events kept per stream.
    pub events_per_stream: usize,
    /// Streams kept per session.
    pub streams_per_session: usize,
    /// How long a stream is kept after its last event.
    pub ttl: Duration,
}

/// The bounds [`check_backends`] asks for: 3 events per stream, 2 streams per session, 600 ms.
pub const SUITE_BOUNDS: EventBounds = EventBounds {
    events_per_stream: 3,
    streams_per_session: 2,
    ttl: Duration::from_millis(600),
};

/// Run every check against two instances made by `make`: a fresh, empty deployment whose event
/// store has the given bounds, seen through two instances (`Backends` with instance ids `"a"`
/// and `"b"`). `make` is called once per check.
pub async fn check_backends<F>(make: F)
where
    F: AsyncFn(EventBounds) -> (Backends, Backends),
{
    let (a, b) = make(SUITE_BOUNDS).await;
    check_session_store(&*a.sessions, &*b.sessions).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_per_client_cap(&*a.sessions, &*b.sessions).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_event_store(&*a.events, &*b.events, SUITE_BOUNDS).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_bus(&*a.bus, &*b.bus, &b.instance_id).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_key_ring(&*a.keys, &*b.keys).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_switch_store(&*a.switches, &*b.switches).await;
}
