//! The in-memory backends: one process's state, as fast as plain maps behind a lock. Every
//! operation does its work inside the call and returns a ready future.

mod bus;
mod events;
mod keys;
mod sessions;
mod switches;

pub use crate::server::extensions::tasks::MemoryTaskStore;
pub use bus::MemoryBus;
pub use events::MemoryEventStore;
pub use keys::MemoryKeyRing;
pub use sessions::MemorySessionStore;
pub use switches::MemorySwitchStore;
