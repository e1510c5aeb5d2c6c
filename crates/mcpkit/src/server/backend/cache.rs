//! [`CacheStore`]: where the response cache keeps results, in one process or shared by every
//! instance of a deployment.

use std::fmt;
use std::time::Duration;

use super::BackendFuture;

/// The response cache's store ([`crate::server::middleware::ResponseCache`]): serialized
/// results by key, each with its time to live. The in-memory store (`memory::MemoryCacheStore`)
/// keeps one process's; `mcpkit-redis` shares them between instances.
///
/// The contract: keys are built by the layer from client input (an implementation hashes them
/// before naming anything with them); [`CacheStore::get`] is one operation (one round trip);
/// [`CacheStore::clear`] makes every entry unreachable at once, for every instance sharing the
/// store (a catalogue change: `list_changed`, `resources/updated`); the store is bounded.
pub trait CacheStore: Send + Sync + fmt::Debug + 'static {
    /// The entry under `key`, if it is there and fresh.
    fn get(&self, key: &str) -> BackendFuture<Option<Vec<u8>>>;

    /// Keep `value` under `key` for `ttl`.
    fn put(&self, key: &str, value: Vec<u8>, ttl: Duration) -> BackendFuture<()>;

    /// Forget every entry.
    fn clear(&self) -> BackendFuture<()>;
}
