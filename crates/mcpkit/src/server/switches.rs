//! Switchable catalogue items: tools and prompts declared in code on every instance
//! ([`ToolDef::switchable`](super::ToolDef::switchable), `switched_off`), listed and served only
//! while switched on ([`Server::set_tool_enabled`], [`Server::set_prompt_enabled`]).
//!
//! Alone, a server keeps the states itself. Instances sharing backends keep them in the
//! [`SwitchStore`]: a switch is written there first (the store bumps its version), applied to the
//! instance that made it, and announced as a catalogue change (the sessions of the deployment get
//! one `list_changed` each; every other instance reads the store and applies it). An instance
//! serving a list, or a call to an item that is off here, while it serves switchable items first
//! reads the store's version (one read; the states too when it is behind), so a client told of a
//! change never lists the old catalogue on an instance the announcement has not reached yet.
//! Nothing else asks the store: a call to an item that is on costs nothing.

use std::collections::HashSet;
use std::sync::Arc;

use super::backend::{BackendError, SwitchStore, Switches};
use super::call::Call;
use super::listen::Change;
use super::{Catalog, PromptDef, Server, Snapshot, ToolDef};

/// Why a switch could not be set or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SwitchError {
    /// No item of that kind and name is declared switchable.
    #[error("no switchable {kind} named {name:?} is declared")]
    NotSwitchable {
        /// `tool` or `prompt`.
        kind: &'static str,
        /// The name asked for.
        name: String,
    },
    /// The shared switch store failed (instances sharing backends).
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// The kinds of switchable items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
        }
    }

    fn change(self) -> Change {
        match self {
            Kind::Tool => Change::Tools,
            Kind::Prompt => Change::Prompts,
        }
    }

    /// The item's name in the switch store: `tool:NAME`, `prompt:NAME`.
    pub(crate) fn key(self, name: &str) -> String {
        format!("{}:{name}", self.word())
    }
}

/// Whether an item declared with `declared` (`None`: not switchable) is on under `switches`.
fn on(switches: &Switches, kind: Kind, name: &str, declared: Option<bool>) -> bool {
    declared.is_none_or(|d| switches.states.get(&kind.key(name)).copied().unwrap_or(d))
}

/// The items of a catalogue that are on, with their places in it.
pub(super) struct Live<'a> {
    pub(super) tools: Vec<(usize, &'a ToolDef)>,
    pub(super) prompts: Vec<(usize, &'a PromptDef)>,
    pub(super) switchable: bool,
    pub(super) switched_off: HashSet<String>,
}

impl<'a> Live<'a> {
    pub(super) fn of(catalog: &'a Catalog) -> Live<'a> {
        let mut live = Live {
            tools: Vec::with_capacity(catalog.tools.len()),
            prompts: Vec::with_capacity(catalog.prompts.len()),
            switchable: false,
            switched_off: HashSet::new(),
        };
        for (i, t) in catalog.tools.iter().enumerate() {
            live.switchable |= t.switch.is_some();
            if on(&catalog.switches, Kind::Tool, &t.tool.name, t.switch) {
                live.tools.push((i, t));
            } else {
                live.switched_off.insert(Kind::Tool.key(&t.tool.name));
            }
        }
        for (i, p) in catalog.prompts.iter().enumerate() {
            live.switchable |= p.switch.is_some();
            if on(&catalog.switches, Kind::Prompt, &p.prompt.name, p.switch) {
                live.prompts.push((i, p));
            } else {
                live.switched_off.insert(Kind::Prompt.key(&p.prompt.name));
            }
        }
        live
    }
}

impl Catalog {
    /// How the item is declared: `Some(on until switched)` for a switchable one.
    fn declared(&self, kind: Kind, name: &str) -> Option<bool> {
        match kind {
            Kind::Tool => self.tools.iter().rev().find(|t| t.tool.name == name)?.switch,
            Kind::Prompt => self.prompts.iter().rev().find(|p| p.prompt.name == name)?.switch,
        }
    }
}

impl Snapshot {
    /// Whether the item is declared switchable and is off.
    pub(crate) fn is_switched_off(&self, kind: Kind, name: &str) -> bool {
        self.switchable && self.switched_off.contains(&kind.key(name))
    }
}

impl Server {
    /// Switch a tool declared with [`ToolDef::switchable`] or [`ToolDef::switched_off`] on or
    /// off: while off it is neither listed nor callable. When the switch changes the catalogue,
    /// initialized clients get `notifications/tools/list_changed`. Instances sharing backends
    /// ([`HttpServer::scale_out`](super::http::HttpServer::scale_out)) share the switch: when this
    /// returns, a list on any of them has the change, and each session of the deployment is
    /// told once. Returns whether the switch changed anything.
    pub async fn set_tool_enabled(&self, name: &str, on: bool) -> Result<bool, SwitchError> {
        self.set_enabled(Kind::Tool, name, on).await
    }

    /// [`Server::set_tool_enabled`] for a prompt declared with [`PromptDef::switchable`] or
    /// [`PromptDef::switched_off`] (`notifications/prompts/list_changed`).
    pub async fn set_prompt_enabled(&self, name: &str, on: bool) -> Result<bool, SwitchError> {
        self.set_enabled(Kind::Prompt, name, on).await
    }

    /// Whether a switchable tool is on, as the deployment has it (instances sharing backends
    /// read the switch store's version first).
    pub async fn tool_enabled(&self, name: &str) -> Result<bool, SwitchError> {
        self.enabled(Kind::Tool, name).await
    }

    /// Whether a switchable prompt is on (see [`Server::tool_enabled`]).
    pub async fn prompt_enabled(&self, name: &str) -> Result<bool, SwitchError> {
        self.enabled(Kind::Prompt, name).await
    }

    /// Keep the switch states in `store` from now on (instances sharing backends).
    #[cfg_attr(not(feature = "http-server"), allow(dead_code))]
    pub(crate) fn set_switch_store(&self, store: Option<Arc<dyn SwitchStore>>) {
        *crate::sync::write(&self.inner.switch_store) = store;
    }

    fn switch_store(&self) -> Option<Arc<dyn SwitchStore>> {
        crate::sync::read(&self.inner.switch_store).clone()
    }

    fn declared(&self, kind: Kind, name: &str) -> Result<bool, SwitchError> {
        self.snapshot()
            .catalog
            .declared(kind, name)
            .ok_or_else(|| SwitchError::NotSwitchable {
                kind: kind.word(),
                name: name.to_owned(),
            })
    }

    async fn enabled(&self, kind: Kind, name: &str) -> Result<bool, SwitchError> {
        let declared = self.declared(kind, name)?;
        if let Some(store) = self.switch_store() {
            self.catch_up_with(&*store).await?;
        }
        Ok(on(&self.snapshot().catalog.switches, kind, name, Some(declared)))
    }

    async fn set_enabled(&self, kind: Kind, name: &str, state: bool) -> Result<bool, SwitchError> {
        let declared = self.declared(kind, name)?;
        let key = kind.key(name);
        let before = match self.switch_store() {
            None => {
                let mut guard = crate::sync::write(&self.inner.catalog);
                let before = on(&guard.catalog.switches, kind, name, Some(declared));
                if before != state {
                    let mut catalog = guard.catalog.clone();
                    catalog.switches.states.insert(key, state);
                    catalog.switches.version += 1;
                    *guard = Arc::new(Snapshot::build(catalog, self.inner.page_size));
                }
                before
            }
            Some(store) => {
                let switched = store.set(&key, state).await?;
                if !self.apply_one(switched.version, key, state) {
                    // Other switches landed meanwhile: take them all.
                    self.catch_up_with(&*store).await?;
                }
                switched.previous.unwrap_or(declared)
            }
        };
        let changed = before != state;
        if changed {
            self.broadcast(kind.change(), None, |_| true);
        }
        Ok(changed)
    }

    /// Apply the set that made the store's `version`, if this instance had the one before it
    /// (or has it already); `false` when it is further behind.
    fn apply_one(&self, version: u64, key: String, state: bool) -> bool {
        let mut guard = crate::sync::write(&self.inner.catalog);
        let have = guard.catalog.switches.version;
        if have >= version {
            return true;
        }
        if have + 1 != version {
            return false;
        }
        let mut catalog = guard.catalog.clone();
        catalog.switches.states.insert(key, state);
        catalog.switches.version = version;
        *guard = Arc::new(Snapshot::build(catalog, self.inner.page_size));
        true
    }

    /// Bring the switch states up to the shared store's when this instance may be behind: no
    /// command without a store or without switchable items, one version read when up to date,
    /// and the states read when behind. Whether it asked the store (the catalogue may then be
    /// newer than a request's snapshot, also when another request installed it meanwhile). A
    /// failing store is logged and the catalogue kept as it is.
    pub(crate) async fn catch_up(&self) -> bool {
        let Some(store) = self.switch_store() else { return false };
        if !self.snapshot().switchable {
            return false;
        }
        if let Err(e) = self.catch_up_with(&*store).await {
            tracing::warn!("switch store: {e}; serving the catalogue as this instance has it");
        }
        true
    }

    async fn catch_up_with(&self, store: &dyn SwitchStore) -> Result<(), BackendError> {
        let have = self.snapshot().catalog.switches.version;
        let stored = store.version().await?;
        if stored == have {
            return Ok(());
        }
        let loaded = store.load().await?;
        // A store behind this instance was emptied (a Redis that lost its data): its word goes.
        let reset = stored < have;
        let mut guard = crate::sync::write(&self.inner.catalog);
        let current = &guard.catalog.switches;
        if (loaded.version > current.version || reset) && loaded != *current {
            let mut catalog = guard.catalog.clone();
            catalog.switches = loaded;
            *guard = Arc::new(Snapshot::build(catalog, self.inner.page_size));
        }
        Ok(())
    }
}

impl Call {
    /// Before a list: catch up with the shared switch states (see [`Server::catch_up`]); the
    /// request then sees the caught-up catalogue.
    pub(crate) async fn catch_up_switches(&mut self) {
        if self.server.catch_up().await {
            self.renew_snapshot();
        }
    }
}
