//! The in-memory backends: one process's state, as fast as plain maps behind a lock. Every
//! operation does its work inside the call and returns a ready future.

mod bus;
mod cache;
mod events;
mod keys;
mod rates;
mod sessions;
mod switches;
mod tasks;

pub use bus::MemoryBus;
pub use cache::MemoryCacheStore;
pub use events::MemoryEventStore;
pub use keys::MemoryKeyRing;
pub use rates::MemoryRateStore;
pub use sessions::MemorySessionStore;
pub use switches::MemorySwitchStore;
pub use tasks::MemoryTaskStore;

use std::sync::Arc;

use super::{random_instance_id, Backends};

impl Default for Backends {
    /// [`Backends::memory`].
    fn default() -> Self {
        Backends::memory()
    }
}

impl Backends {
    /// Fresh in-memory backends with default bounds and a random instance id. Clone the
    /// bundle (changing `instance_id`) to make several servers of one process share them.
    pub fn memory() -> Backends {
        Backends {
            sessions: Arc::new(MemorySessionStore::new()),
            events: Arc::new(MemoryEventStore::default()),
            bus: Arc::new(MemoryBus::default()),
            keys: Arc::new(MemoryKeyRing::default()),
            tasks: Arc::new(MemoryTaskStore::default()),
            switches: Arc::new(MemorySwitchStore::default()),
            instance_id: random_instance_id(),
        }
    }
}
