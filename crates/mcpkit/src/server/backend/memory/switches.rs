//! [`MemorySwitchStore`]: the switch states of the servers of one process.

use std::sync::Mutex;

use crate::server::backend::{ready, BackendFuture, SwitchStore, Switched, Switches};
use crate::sync::lock;

/// Switch states in memory.
#[derive(Debug, Default)]
pub struct MemorySwitchStore {
    switches: Mutex<Switches>,
}

impl SwitchStore for MemorySwitchStore {
    fn set(&self, item: &str, on: bool) -> BackendFuture<Switched> {
        let mut switches = lock(&self.switches);
        let previous = switches.states.insert(item.to_owned(), on);
        if previous != Some(on) {
            switches.version += 1;
        }
        ready(Ok(Switched {
            version: switches.version,
            previous,
        }))
    }

    fn version(&self) -> BackendFuture<u64> {
        ready(Ok(lock(&self.switches).version))
    }

    fn load(&self) -> BackendFuture<Switches> {
        ready(Ok(lock(&self.switches).clone()))
    }
}
