//! The extension API the server core offers: the [`Extension`] trait, the [`MethodTable`] an
//! extension registers into, and the set of a server's extensions. The official extensions
//! (`extensions/`) are built on it as an outside crate would be; the public path of these items
//! is `server::extensions`.

use std::sync::Arc;

use std::future::Future;

use mcpkit_types::ext;
use mcpkit_types::method::{Method, NotificationMethod};
use mcpkit_types::schema::JsonObject;
use mcpkit_types::Era;

use super::layer::Middleware;
use super::methods::Methods;
use super::{Call, RequestContext, ServerBuilder};
use crate::engine::HandlerResult;

/// An extension a server can serve. The official ones (Tasks, Skills) are built on this API
/// alone; one of your own declares its settings, adds tools, resources and middleware
/// ([`Extension::extend`]), and registers methods of its own or wraps core ones in either era's
/// table ([`Extension::register`], [`MethodTable`]).
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
    router: &'a mut Methods,
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

    /// Serve request `M` (a method of the extension's own, with a [`Method`] descriptor it
    /// defines, or a core one it replaces) with `handler`, given the [`Call`] and the params
    /// decoded as `M::Params`. The era's admission applies first (a handshake-era session must
    /// be initialized); answer with [`Call::reply`], which completes the result for the era.
    pub fn request<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Call, M::Params) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        self.router.request::<M, F, Fut>(handler);
        self
    }

    /// Handle notification `N` (one whose params do not decode is dropped).
    pub fn notification<N, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        N: NotificationMethod,
        F: Fn(Call, N::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.router.notification::<N, F, Fut>(handler);
        self
    }

    /// Put `layer` around request `M` alone (registered so far: core methods, and those of
    /// extensions added before this one), to decide before it or decorate its result; a
    /// method the table does not hold is left alone. Layers for every method go on the
    /// builder ([`ServerBuilder::middleware`]), which an extension reaches in
    /// [`Extension::extend`].
    pub fn wrap<M: Method>(&mut self, layer: impl Middleware) -> &mut Self {
        self.router
            .wrap_one(M::NAME, |entry| super::stack::around(entry, layer));
        self
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

    /// Whether an extension with identifier `id` is served.
    pub(crate) fn serves(&self, id: &str) -> bool {
        self.list.iter().any(|e| e.id() == id)
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
    pub(crate) fn register(&self, era: Era, router: &mut Methods) {
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
