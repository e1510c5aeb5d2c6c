//! The server role (spec: `server/*`, `basic/lifecycle`): register tools, resources, templates
//! and prompts on a [`ServerBuilder`], then [`Server::serve`] a transport.
//!
//! Capabilities are derived from what is registered. Lists are paginated with opaque cursors,
//! and each list page is serialized once when the catalogue changes, not per request.

#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __macro_support;
pub mod backend;
mod call;
mod completion;
mod context;
mod extension;
pub mod extensions;
mod extract;
mod handshake;
#[cfg(feature = "http-server")]
pub mod http;
mod listen;
mod live_sessions;
mod prompt;
#[cfg(feature = "http-server")]
mod relay;
mod resource;
mod router;
mod routes;
mod session;
mod stateless;
mod switches;
mod tool;
mod toolbox;
pub mod uri_template;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use mcpkit_types::schema::{
    Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PromptsCapability, ResourceUpdatedParams, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use serde::Serialize;
use serde_json::value::RawValue;

pub use completion::{from_list, Completer, CompletionInput};
pub use context::IntoInputRequest;
pub use context::RequestContext;
pub(crate) use context::{ProgressObserver, ProgressSink};
pub use extract::{object_schema, schema_object, Args, FromRequest, HandlerRequest, RawArgs, Rejection, State, Uri};
pub use prompt::{IntoPromptResult, PromptDef, PromptHandler, PromptRequest};
pub use resource::{IntoResourceResult, ResourceDef, ResourceHandler, ResourceRequest, ResourceTemplateDef};
pub use stateless::CacheHint;
pub use stateless::{RequestStateKeys, StateError};
pub use switches::SwitchError;
/// The cancellation extractor: fires when the client cancels the request.
pub use tokio_util::sync::CancellationToken;
pub use tool::{IntoToolResult, Json, ToolCall, ToolDef, ToolHandler};
pub use toolbox::ToolBox;

use listen::Change;
use mcpkit_types::schema::CacheScope;

use crate::engine::{self, Connection, PeerOptions};
use crate::error::Result;
use crate::transport::Transport;
use session::Session;

/// The negotiated state of a session that skips the handshake (sessionless HTTP).
#[derive(Debug, Clone)]
struct Preset {
    /// The protocol revision in use.
    version: mcpkit_types::ProtocolVersion,
    /// What the client can do.
    capabilities: mcpkit_types::schema::ClientCapabilities,
    /// Who the client is.
    client_info: Implementation,
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    catalog: Catalog,
    page_size: usize,
    peer_options: PeerOptions,
    state: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    always_tools: bool,
    on_roots_changed: Option<RootsChanged>,
    cache: CacheHints,
    state_keys: Option<RequestStateKeys>,
    extensions: extension::ExtensionSet,
}

/// Caching hints put on cacheable stateless-era results that do not set their own
/// (spec: 2026-07-28 `server/utilities/caching`).
#[derive(Debug, Clone, Copy)]
struct CacheHints {
    /// `server/discover` and the list methods.
    lists: CacheHint,
    /// `resources/read`.
    reads: CacheHint,
}

impl Default for CacheHints {
    fn default() -> Self {
        // Fresh on every use unless the server says otherwise: correct for any server, and list
        // results are the same for everyone, so shared caches may keep them.
        CacheHints {
            lists: CacheHint {
                ttl_ms: 0,
                scope: CacheScope::Public,
            },
            reads: CacheHint {
                ttl_ms: 0,
                scope: CacheScope::Private,
            },
        }
    }
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

type RootsChanged = Arc<dyn Fn(RequestContext) + Send + Sync>;
/// What a catalogue change is also handed to (instances sharing a bus; see `relay.rs`).
type Relay = Arc<dyn Fn(&Change) + Send + Sync>;

/// A server: its catalogue and its live sessions. Cheap to clone.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

struct Inner {
    info: Implementation,
    instructions: Option<String>,
    page_size: usize,
    /// Shared by every session's engine.
    peer_options: Arc<PeerOptions>,
    state: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    always_tools: bool,
    catalog: RwLock<Arc<Snapshot>>,
    sessions: Arc<live_sessions::LiveSessions>,
    on_roots_changed: Option<RootsChanged>,
    /// `serverInfo` serialized once, for the `_meta` of every stateless-era result.
    info_json: Box<RawValue>,
    cache: CacheHints,
    /// Replaced when instances share a key ring (see `relay.rs`).
    state_keys: RwLock<RequestStateKeys>,
    /// Where catalogue changes also go when instances share a bus (see `relay.rs`).
    relay: RwLock<Option<Relay>>,
    /// Where the switch states live when instances share backends (see `switches.rs`).
    switch_store: RwLock<Option<Arc<dyn backend::SwitchStore>>>,
    /// The method tables, one per era.
    routers: router::Routers,
    /// The extensions declared in each era.
    extensions: extension::Declared,
    /// Catalogue changes, for `subscriptions/listen` streams.
    changes: tokio::sync::broadcast::Sender<Change>,
    /// Fires when the server ends its subscriptions (shutdown).
    ending: CancellationToken,
}

/// What the server offers, as registered.
#[derive(Debug, Default, Clone)]
struct Catalog {
    tools: Vec<ToolDef>,
    resources: Vec<ResourceDef>,
    templates: Vec<ResourceTemplateDef>,
    prompts: Vec<PromptDef>,
    /// The states of switchable items set so far (see `switches.rs`).
    switches: backend::Switches,
}

/// An immutable view of the catalogue with its lookup maps and pre-serialized list pages.
///
/// The maps and pages ([`Derived`], reached through `Deref`) are built on first use, once per
/// catalogue change: a server answers `initialize` without serializing its lists first.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    catalog: Catalog,
    page_size: usize,
    derived: std::sync::OnceLock<Derived>,
}

impl std::ops::Deref for Snapshot {
    type Target = Derived;
    fn deref(&self) -> &Derived {
        self.derived
            .get_or_init(|| Derived::build(&self.catalog, self.page_size))
    }
}

/// The lookup maps and list pages of a [`Snapshot`].
#[derive(Debug, Default)]
pub(crate) struct Derived {
    tool_index: HashMap<String, usize>,
    resource_index: HashMap<String, usize>,
    prompt_index: HashMap<String, usize>,
    tool_pages: Vec<Box<RawValue>>,
    resource_pages: Vec<Box<RawValue>>,
    template_pages: Vec<Box<RawValue>>,
    prompt_pages: Vec<Box<RawValue>>,
    /// Tool parameters mirrored into `Mcp-Param-*` headers (2026-07-28), by tool name; a tool
    /// whose annotations are invalid has none.
    tool_headers: HashMap<String, Vec<mcpkit_types::headers::HeaderParam>>,
    /// Whether any tool or prompt is switchable (only then do lists ask a switch store).
    switchable: bool,
    /// The switchable items that are off, by switch key (`tool:NAME`, `prompt:NAME`).
    switched_off: std::collections::HashSet<String>,
}

fn pages<T: Clone, R: Serialize>(
    items: &[T],
    size: usize,
    build: impl Fn(Vec<T>, Option<String>) -> R,
) -> Vec<Box<RawValue>> {
    let chunks: Vec<&[T]> = if items.is_empty() {
        vec![&[]]
    } else {
        items.chunks(size.max(1)).collect()
    };
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .filter_map(|(i, chunk)| {
            let next = (i + 1 < n).then(|| cursor_for(i + 1));
            serde_json::value::to_raw_value(&build(chunk.to_vec(), next)).ok()
        })
        .collect()
}

pub(crate) fn cursor_for(page: usize) -> String {
    format!("mcpkit:{page}")
}

pub(crate) fn page_of(cursor: &str) -> Option<usize> {
    cursor.strip_prefix("mcpkit:")?.parse().ok()
}

impl Snapshot {
    /// The tool's parameters mirrored into `Mcp-Param-*` headers (none for most tools).
    #[cfg(feature = "http-server")]
    pub(crate) fn tool_header_params(&self, tool: &str) -> &[mcpkit_types::headers::HeaderParam] {
        self.tool_headers.get(tool).map_or(&[], Vec::as_slice)
    }

    /// Whether the resources capability is declared.
    pub(crate) fn offers_resources(&self) -> bool {
        !self.catalog.resources.is_empty() || !self.catalog.templates.is_empty()
    }

    /// Whether the prompts capability is declared.
    pub(crate) fn offers_prompts(&self) -> bool {
        !self.catalog.prompts.is_empty()
    }

    fn build(catalog: Catalog, page_size: usize) -> Self {
        Snapshot {
            catalog,
            page_size,
            derived: std::sync::OnceLock::new(),
        }
    }
}

impl Derived {
    fn build(catalog: &Catalog, page_size: usize) -> Self {
        let index = |names: Vec<&str>| names.into_iter().enumerate().map(|(i, n)| (n.to_owned(), i)).collect();
        // Switched-off items are neither listed nor found; their places in the catalogue stay.
        let live = switches::Live::of(catalog);
        let tools: Vec<_> = live.tools.iter().map(|(_, t)| t.tool.clone()).collect();
        let resources: Vec<_> = catalog.resources.iter().map(|r| r.resource.clone()).collect();
        let templates: Vec<_> = catalog.templates.iter().map(|t| t.template.clone()).collect();
        let prompts: Vec<_> = live.prompts.iter().map(|(_, p)| p.prompt.clone()).collect();
        let tool_headers = live
            .tools
            .iter()
            .filter_map(|(_, t)| {
                let params = mcpkit_types::headers::header_params(&t.tool.input_schema).ok()?;
                (!params.is_empty()).then(|| (t.tool.name.clone(), params))
            })
            .collect();
        Derived {
            tool_headers,
            tool_index: live.tools.iter().map(|(i, t)| (t.tool.name.clone(), *i)).collect(),
            resource_index: index(catalog.resources.iter().map(|r| r.resource.uri.as_str()).collect()),
            prompt_index: live.prompts.iter().map(|(i, p)| (p.prompt.name.clone(), *i)).collect(),
            switchable: live.switchable,
            switched_off: live.switched_off,
            tool_pages: pages(&tools, page_size, |tools, next_cursor| ListToolsResult {
                tools,
                next_cursor,
                ..Default::default()
            }),
            resource_pages: pages(&resources, page_size, |resources, next_cursor| ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            }),
            template_pages: pages(&templates, page_size, |resource_templates, next_cursor| {
                ListResourceTemplatesResult {
                    resource_templates,
                    next_cursor,
                    ..Default::default()
                }
            }),
            prompt_pages: pages(&prompts, page_size, |prompts, next_cursor| ListPromptsResult {
                prompts,
                next_cursor,
                ..Default::default()
            }),
        }
    }
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            info: Implementation::new("mcpkit-server", env!("CARGO_PKG_VERSION")),
            instructions: None,
            catalog: Catalog::default(),
            page_size: 100,
            peer_options: PeerOptions::default(),
            state: HashMap::new(),
            always_tools: false,
            on_roots_changed: None,
            cache: CacheHints::default(),
            state_keys: None,
            extensions: extension::ExtensionSet::default(),
        }
    }
}

impl ServerBuilder {
    /// The `serverInfo` sent at initialization.
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Shorthand for [`ServerBuilder::info`] with a name and version.
    pub fn name(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info(Implementation::new(name, version))
    }

    /// Instructions for the model, sent at initialization.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Register a tool.
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.catalog.tools.push(tool);
        self
    }

    /// Declare the tools capability even when no tool is registered yet (tools added later).
    pub fn enable_tools(mut self) -> Self {
        self.always_tools = true;
        self
    }

    /// Register a resource.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.catalog.resources.push(resource);
        self
    }

    /// Register a resource template.
    pub fn resource_template(mut self, template: ResourceTemplateDef) -> Self {
        self.catalog.templates.push(template);
        self
    }

    /// Register a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.catalog.prompts.push(prompt);
        self
    }

    /// Items per list page (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Connection limits (concurrency, timeouts for server→client requests). Metrics set with
    /// [`ServerBuilder::telemetry`] are kept unless `options` names its own.
    pub fn peer_options(mut self, options: PeerOptions) -> Self {
        let telemetry = std::mem::take(&mut self.peer_options.telemetry);
        self.peer_options = options;
        if !self.peer_options.telemetry.records_metrics() {
            self.peer_options.telemetry = telemetry;
        }
        self
    }

    /// Record this server's metrics (`mcp.server.operation.duration`, session durations, open
    /// sessions and streams, …) with `telemetry` (see [`crate::telemetry`]). Spans go through
    /// `tracing` with or without it.
    pub fn telemetry(mut self, telemetry: crate::telemetry::Telemetry) -> Self {
        self.peer_options.telemetry = telemetry;
        self
    }

    /// Shared state for handlers, one value per type: [`State<T>`] extracts a clone of it,
    /// [`RequestContext::state`] lends it. Register an `Arc<T>` for state the handlers share
    /// (the extractor is then `State<Arc<T>>`); registering a type again replaces it.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(TypeId::of::<T>(), Box::new(value));
        self
    }

    /// Called when a client sends `notifications/roots/list_changed`.
    pub fn on_roots_changed(mut self, f: impl Fn(RequestContext) + Send + Sync + 'static) -> Self {
        self.on_roots_changed = Some(Arc::new(f));
        self
    }

    /// Caching hints for `server/discover` and list results on the stateless wire (default:
    /// `ttlMs` 0, `public`).
    pub fn list_cache_hint(mut self, hint: CacheHint) -> Self {
        self.cache.lists = hint;
        self
    }

    /// Caching hints for `resources/read` results that set none themselves (default: `ttlMs` 0,
    /// `private`).
    pub fn read_cache_hint(mut self, hint: CacheHint) -> Self {
        self.cache.reads = hint;
        self
    }

    /// The keys that seal `requestState` in multi round-trip requests. Servers behind one load
    /// balancer share them so any instance can continue a request. Default: a random key of
    /// this server's own.
    pub fn request_state_keys(mut self, keys: RequestStateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Serve `extension` (see [`extensions`]): it adds what it serves through the core methods
    /// now, registers its own methods when the server is built, and is declared in
    /// `capabilities.extensions`. Adding an extension with the same identifier again replaces it.
    pub fn extension(self, extension: impl extension::Extension) -> Self {
        let extension = Arc::new(extension);
        let mut builder = extension.extend(self);
        builder.extensions.add(extension);
        builder
    }

    /// Finish.
    pub fn build(self) -> Server {
        let snapshot = Snapshot::build(self.catalog, self.page_size);
        let info_json = serde_json::value::to_raw_value(&self.info).unwrap_or_default();
        Server {
            inner: Arc::new(Inner {
                info: self.info,
                instructions: self.instructions,
                page_size: self.page_size,
                peer_options: Arc::new(PeerOptions {
                    telemetry: self
                        .peer_options
                        .telemetry
                        .clone()
                        .for_side(crate::telemetry::Side::Server),
                    ..self.peer_options
                }),
                state: self.state,
                always_tools: self.always_tools,
                catalog: RwLock::new(Arc::new(snapshot)),
                sessions: Arc::default(),
                on_roots_changed: self.on_roots_changed,
                info_json,
                cache: self.cache,
                state_keys: RwLock::new(self.state_keys.unwrap_or_else(|| {
                    RequestStateKeys::random().unwrap_or_else(|e| {
                        tracing::error!("{e}; this server will refuse to serve");
                        RequestStateKeys::unusable()
                    })
                })),
                relay: RwLock::new(None),
                switch_store: RwLock::new(None),
                routers: router::Routers::build(&self.extensions),
                extensions: self.extensions.declared(),
                changes: tokio::sync::broadcast::channel(256).0,
                ending: CancellationToken::new(),
            }),
        }
    }
}

impl Server {
    /// Start building a server.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// Serve one connection until the client goes away. `Ok` on a clean end of stream; an
    /// error at once if the server has no `requestState` key (the OS random source failed).
    pub async fn serve<T: Transport>(&self, transport: T) -> Result<()> {
        self.check_keys()?;
        self.start(transport).closed().await
    }

    /// Refuse to serve without a sealing key rather than seal with a guessable one.
    pub(crate) fn check_keys(&self) -> Result<()> {
        if crate::sync::read(&self.inner.state_keys).can_seal() {
            Ok(())
        } else {
            Err(crate::Error::Protocol(StateError::NoRandomness.to_string()))
        }
    }

    /// Start serving one connection and return at once.
    pub fn start<T: Transport>(&self, transport: T) -> Connection {
        self.start_with(transport)
    }

    /// The handler table for stateless-era requests served one at a time without a connection
    /// (HTTP POSTs that declared 2026-07-28): no handshake is accepted.
    #[cfg(feature = "http-server")]
    fn stateless_service(&self) -> Arc<router::ServerService> {
        Arc::new(router::ServerService {
            server: self.clone(),
            session: Arc::new(Session::stateless_only()),
        })
    }

    /// Connection limits of this server's connections.
    #[cfg(feature = "http-server")]
    fn peer_options(&self) -> Arc<PeerOptions> {
        self.inner.peer_options.clone()
    }

    /// Where this server's metrics go.
    #[cfg(feature = "http-server")]
    pub(crate) fn telemetry(&self) -> &crate::telemetry::Telemetry {
        &self.inner.peer_options.telemetry
    }

    /// End every `subscriptions/listen` stream with a graceful final result (for shutdown).
    pub fn end_subscriptions(&self) {
        self.inner.ending.cancel();
    }

    fn start_with<T: Transport>(&self, transport: T) -> Connection {
        let (service, session) = self.session_service(None);
        let conn = engine::start(transport, service, PeerOptions::clone(&self.inner.peer_options));
        conn.peer()
            .telemetry_scope()
            .set_transport(crate::telemetry::NetworkTransport::Pipe);
        let _ = session.peer.set(conn.peer().clone());
        conn
    }

    /// Serve a connection without a task of its own (HTTP sessions): the caller hands it each
    /// frame, and what it sends goes straight to `sink`.
    #[cfg(feature = "http-server")]
    fn start_direct(&self, sink: engine::DirectSink, preset: Option<Preset>) -> (engine::Dispatcher, Arc<Session>) {
        let version = preset.as_ref().map(|p| p.version);
        let (service, session) = self.session_service(preset);
        let dispatcher = engine::start_direct(service, self.inner.peer_options.clone(), sink);
        let scope = dispatcher.peer().telemetry_scope();
        scope.set_transport(crate::telemetry::NetworkTransport::Tcp);
        if let Some(v) = version {
            scope.set_version(v);
        }
        let _ = session.peer.set(dispatcher.peer().clone());
        (dispatcher, session)
    }

    /// A new session, registered for broadcasts, and the handler table serving it.
    fn session_service(&self, preset: Option<Preset>) -> (Arc<dyn engine::Role>, Arc<Session>) {
        let session = Arc::new(Session::default());
        if let Some(p) = preset {
            session.negotiate(p.version, p.capabilities, p.client_info);
            session.initialized.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.inner.sessions.register(&session);
        let service = Arc::new(router::ServerService {
            server: self.clone(),
            session: session.clone(),
        });
        (service, session)
    }

    /// The `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities declared in the handshake era, derived from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.capabilities_in(mcpkit_types::Era::Handshake)
    }

    /// The capabilities declared in `era`: what is registered, and the extensions served there.
    pub fn capabilities_in(&self, era: mcpkit_types::Era) -> ServerCapabilities {
        let snap = self.snapshot();
        let mut caps = ServerCapabilities {
            logging: Some(JsonObject::new()),
            extensions: self.inner.extensions.of(era).cloned(),
            ..Default::default()
        };
        if self.offers_tools(&snap) {
            caps.tools = Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        if snap.offers_resources() {
            caps.resources = Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            });
        }
        if snap.offers_prompts() {
            caps.prompts = Some(PromptsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        if snap.offers_prompts() || !snap.catalog.templates.is_empty() {
            caps.completions = Some(JsonObject::new());
        }
        caps
    }

    /// Whether the tools capability is declared (cheap: no capability struct is built).
    pub(crate) fn offers_tools(&self, snap: &Snapshot) -> bool {
        self.inner.always_tools || !snap.catalog.tools.is_empty()
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.inner
            .catalog
            .read()
            .map(|g| g.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    pub(crate) fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.state.get(&TypeId::of::<T>())?.downcast_ref::<T>()
    }

    fn update(&self, change: impl FnOnce(&mut Catalog)) {
        let mut guard = crate::sync::write(&self.inner.catalog);
        let mut catalog = guard.catalog.clone();
        change(&mut catalog);
        *guard = Arc::new(Snapshot::build(catalog, self.inner.page_size));
    }

    fn broadcast(&self, change: Change, params: Option<&serde_json::Value>, filter: impl Fn(&Session) -> bool) {
        if let Some(relay) = crate::sync::read(&self.inner.relay).as_ref() {
            relay(&change);
        }
        self.fan_out(change, params, filter);
    }

    /// Tell this process's listeners and sessions about `change`.
    fn fan_out(&self, change: Change, params: Option<&serde_json::Value>, filter: impl Fn(&Session) -> bool) {
        let method = change.method();
        // Stateless-era listeners; no receiver is not an error.
        let _ = self.inner.changes.send(change);
        for s in self.inner.sessions.snapshot() {
            if s.initialized.load(std::sync::atomic::Ordering::Relaxed) && s.hears_broadcasts() && filter(&s) {
                if let Some(peer) = s.peer.get() {
                    let _ = peer.notify_raw(method, params);
                }
            }
        }
    }

    /// Apply a change to one list of the catalogue and, if it changed anything, tell every
    /// initialized client with `method` (a `list_changed` notification).
    fn change_list<T>(
        &self,
        change: Change,
        list: fn(&mut Catalog) -> &mut Vec<T>,
        edit: impl FnOnce(&mut Vec<T>) -> bool,
    ) -> bool {
        let mut changed = false;
        self.update(|c| changed = edit(list(c)));
        if changed {
            self.broadcast(change, None, |_| true);
        }
        changed
    }

    /// Add or replace a tool at run time; connected clients get `notifications/tools/list_changed`.
    pub fn add_tool(&self, tool: ToolDef) {
        self.change_list(
            Change::Tools,
            |c| &mut c.tools,
            |tools| {
                tools.retain(|t| t.tool.name != tool.tool.name);
                tools.push(tool);
                true
            },
        );
    }

    /// Remove a tool at run time. Returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.change_list(
            Change::Tools,
            |c| &mut c.tools,
            |tools| remove(tools, |t| t.tool.name == name),
        )
    }

    /// Add or replace a resource at run time (`notifications/resources/list_changed`).
    pub fn add_resource(&self, resource: ResourceDef) {
        self.change_list(
            Change::Resources,
            |c| &mut c.resources,
            |resources| {
                resources.retain(|r| r.resource.uri != resource.resource.uri);
                resources.push(resource);
                true
            },
        );
    }

    /// Remove a resource at run time. Returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.change_list(
            Change::Resources,
            |c| &mut c.resources,
            |resources| remove(resources, |r| r.resource.uri == uri),
        )
    }

    /// Add or replace a prompt at run time (`notifications/prompts/list_changed`).
    pub fn add_prompt(&self, prompt: PromptDef) {
        self.change_list(
            Change::Prompts,
            |c| &mut c.prompts,
            |prompts| {
                prompts.retain(|p| p.prompt.name != prompt.prompt.name);
                prompts.push(prompt);
                true
            },
        );
    }

    /// Remove a prompt at run time. Returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.change_list(
            Change::Prompts,
            |c| &mut c.prompts,
            |prompts| remove(prompts, |p| p.prompt.name == name),
        )
    }

    /// Tell every client subscribed to `uri` that it changed (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        let params = serde_json::to_value(ResourceUpdatedParams {
            uri: uri.to_owned(),
            meta: None,
        })
        .ok();
        self.broadcast(Change::ResourceUpdated(uri.into()), params.as_ref(), |s| {
            s.is_subscribed(uri)
        });
    }
}

/// Remove the items matching `hit`; whether any was removed.
fn remove<T>(items: &mut Vec<T>, hit: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|x| !hit(x));
    items.len() != before
}
