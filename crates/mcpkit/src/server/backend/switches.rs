//! The switch store: which switchable catalogue items are on, shared so that a switch made on
//! one instance changes the catalogue of every instance.
//!
//! A switchable item (`ToolDef::switched_off`, `PromptDef::switchable`, …) is declared in code on
//! every instance: its handler is there, only whether it is listed and callable is shared. The
//! store keeps the states that were set, and a version that every change bumps, so an instance
//! knows with one cheap read whether its catalogue is behind.

use std::collections::BTreeMap;

use super::BackendFuture;

/// Every state set so far, and the version they make.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Switches {
    /// How many changes the store has seen: 0 for a fresh store, one more per change.
    pub version: u64,
    /// The states set, by item (`tool:NAME`, `prompt:NAME`); an item never set keeps the
    /// state its declaration gives.
    pub states: BTreeMap<String, bool>,
}

/// What a [`SwitchStore::set`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switched {
    /// The store's version after the set (unchanged when the item already had that state).
    pub version: u64,
    /// The state stored before (`None`: never set).
    pub previous: Option<bool>,
}

/// Storage of the on/off states of switchable catalogue items.
///
/// - [`set`](SwitchStore::set) is atomic: it stores the state and, when that changed what was
///   stored, bumps the version by exactly one, in one step that no concurrent set can split.
/// - [`version`](SwitchStore::version) is one cheap read (an HTTP server asks it on list
///   requests while it serves switchable items); [`load`](SwitchStore::load) returns the states
///   and the version they belong to, read together.
/// - Item names are non-empty and made by the server from names declared in code, never from
///   client input; the store holds at most one entry per declared item, so it is bounded by
///   the catalogue and needs no expiry.
pub trait SwitchStore: std::fmt::Debug + Send + Sync + 'static {
    /// Store `on` for `item`.
    fn set(&self, item: &str, on: bool) -> BackendFuture<Switched>;
    /// The current version.
    fn version(&self) -> BackendFuture<u64>;
    /// Every state set, with its version.
    fn load(&self) -> BackendFuture<Switches>;
    /// Whether the store answers (`/readyz`).
    fn ready(&self) -> BackendFuture<()> {
        super::ready(Ok(()))
    }
}
