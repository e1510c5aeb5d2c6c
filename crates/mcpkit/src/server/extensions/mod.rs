//! Extensions (spec: 2026-07-28 `basic/versioning` "Extension negotiation"; SEP-2133, SEP-3392):
//! a server serves one only when it is added with [`ServerBuilder::extension`], and then
//! declares it in `capabilities.extensions` of `initialize` and `server/discover`.
//!
//! An [`Extension`] brings three things, all fixed when the server is built:
//! - its identifier and settings object (what the server declares);
//! - catalogue entries it serves through core methods (skill files as resources), added to the
//!   builder by [`Extension::extend`];
//! - its own methods and notifications, and decorations of core results, registered into each
//!   era's method table by [`Extension::register`], through the same `Router::add` /
//!   `Router::wrap` the core methods use.
//!
//! Negotiation is per request: the client's declaration comes from its `initialize`
//! capabilities (handshake era) or from the request's `_meta` (stateless era). An extension's
//! own methods are served whether or not the client declared it (a client that calls them knows
//! them); behaviour that changes a core result must check [`RequestContext::uses_extension`]
//! and fall back to the core behaviour otherwise.

pub mod skills;
pub mod tasks;

use std::sync::Arc;

use mcpkit_types::ext;
use mcpkit_types::schema::JsonObject;
use mcpkit_types::Era;

use super::router::Router;
use super::{RequestContext, ServerBuilder};

/// An extension a server can serve. The official ones are in this module; an implementation
/// of your own can declare an extension whose behaviour it provides through tools and
/// resources ([`Extension::extend`]).
pub trait Extension: Send + Sync + 'static {
    /// The identifier, `prefix/name` (for example `io.modelcontextprotocol/skills`); one that is
    /// not valid ([`mcpkit_types::ext::is_valid_id`]) is not served.
    fn id(&self) -> &str;

    /// The settings object declared under `capabilities.extensions[id]` (default `{}`: support
    /// without settings). A `revision` member names the revision served (SEP-3392).
    fn settings(&self) -> JsonObject {
        JsonObject::new()
    }

    /// Whether the extension is served in `era` (default: both). One that is not is neither
    /// declared nor registered in that era.
    fn serves(&self, era: Era) -> bool {
        let _ = era;
        true
    }

    /// Add what the extension serves through the core methods (tools, resources, prompts,
    /// state) to the server being built. Called once, by [`ServerBuilder::extension`].
    fn extend(&self, builder: ServerBuilder) -> ServerBuilder {
        builder
    }

    /// Register the extension's methods, notifications and result decorations into one era's
    /// method table (called once per era it [serves](Extension::serves)).
    fn register(&self, table: &mut MethodTable<'_>) {
        let _ = table;
    }
}

/// One era's method table, as an extension registers into it.
pub struct MethodTable<'a> {
    pub(crate) era: Era,
    pub(crate) router: &'a mut Router,
}

impl std::fmt::Debug for MethodTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MethodTable")
            .field("era", &self.era)
            .finish_non_exhaustive()
    }
}

impl MethodTable<'_> {
    /// The era this table serves.
    pub fn era(&self) -> Era {
        self.era
    }
}

/// The extensions of one server, in the order they were added.
#[derive(Default, Clone)]
pub(crate) struct ExtensionSet {
    list: Vec<Arc<dyn Extension>>,
}

impl std::fmt::Debug for ExtensionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.list.iter().map(|e| e.id())).finish()
    }
}

impl ExtensionSet {
    /// Add `extension`, replacing one with the same identifier. An invalid identifier is
    /// refused (logged), as no client could negotiate it.
    pub(crate) fn add(&mut self, extension: Arc<dyn Extension>) {
        if !ext::is_valid_id(extension.id()) {
            tracing::error!(
                "extension identifier {:?} is not prefix/name; the extension is not served",
                extension.id()
            );
            return;
        }
        self.list.retain(|e| e.id() != extension.id());
        self.list.push(extension);
    }

    /// What the server declares in each era, computed once.
    pub(crate) fn declared(&self) -> Declared {
        let map = |era| {
            let map: JsonObject = self
                .list
                .iter()
                .filter(|e| e.serves(era))
                .map(|e| (e.id().to_owned(), serde_json::Value::Object(e.settings())))
                .collect();
            (!map.is_empty()).then_some(map)
        };
        Declared {
            handshake: map(Era::Handshake),
            stateless: map(Era::Stateless),
        }
    }

    /// Let each extension served in `era` register into that era's table.
    pub(crate) fn register(&self, era: Era, router: &mut Router) {
        let mut table = MethodTable { era, router };
        for e in self.list.iter().filter(|e| e.serves(era)) {
            e.register(&mut table);
        }
    }
}

/// The `capabilities.extensions` map a server declares in each era (`None`: no extension).
#[derive(Debug, Default)]
pub(crate) struct Declared {
    handshake: Option<JsonObject>,
    stateless: Option<JsonObject>,
}

impl Declared {
    /// The map declared in `era`.
    pub(crate) fn of(&self, era: Era) -> Option<&JsonObject> {
        match era {
            Era::Handshake => self.handshake.as_ref(),
            Era::Stateless => self.stateless.as_ref(),
        }
    }

    /// The settings declared for `id` in `era`.
    pub(crate) fn settings(&self, era: Era, id: &str) -> Option<&JsonObject> {
        self.of(era)?.get(id)?.as_object()
    }
}

impl RequestContext {
    /// The settings the client declared for extension `id` (from its `initialize` capabilities,
    /// or this request's `_meta` on the stateless wire); `None` when it did not declare it.
    pub fn client_extension(&self, id: &str) -> Option<JsonObject> {
        self.client_capabilities().extension(id).cloned()
    }

    /// Whether extension `id` is in use for this request: this server serves it in the
    /// request's era and the client declared it at the same revision. Behaviour that changes
    /// a core result applies only then; otherwise the core behaviour stands.
    pub fn uses_extension(&self, id: &str) -> bool {
        let era = self.protocol_version().era();
        match self.server.inner.extensions.settings(era, id) {
            Some(ours) => ext::negotiated(ours, self.client_capabilities().extension(id)),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests;
