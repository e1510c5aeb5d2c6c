//! The server role (spec: `server/*`, `basic/lifecycle`): register tools, resources, templates
//! and prompts on a [`ServerBuilder`], then [`Server::serve`] a transport.
//!
//! Capabilities are derived from what is registered. Lists are paginated with opaque cursors,
//! and each list page is serialized once when the catalogue changes, not per request.

pub mod backend;
mod client_state;
mod completion;
pub mod compose;
mod context;
mod core_methods;
mod direct;
mod extension;
pub mod extensions;
mod extract;
mod handshake;
#[cfg(feature = "http-server")]
pub mod http;
mod layer;
mod listen;
mod live_sessions;
mod methods;
pub mod middleware;
mod prompt;
#[cfg(feature = "http-server")]
mod relay;
mod resource;
mod stack;
mod stateless;
mod switches;
mod tool;
mod toolbox;
pub mod uri_template;

mod access;
mod builder;
mod call;
mod catalog;
mod registrations;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

#[cfg(feature = "http-server")]
use mcpkit_types::Era;

use mcpkit_types::schema::{
    Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PromptsCapability, ResourceUpdatedParams, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use serde::Serialize;
use serde_json::value::RawValue;

pub use access::{Item, Select};
pub use builder::{ClientLimits, ServerBuilder};
pub use call::Call;
pub use completion::{from_list, Completer, CompletionInput};
pub use context::IntoInputRequest;
pub use context::{elicitation_schema, Elicited, RequestContext};
pub(crate) use context::{ProgressObserver, ProgressSink};
pub use extract::{object_schema, schema_object, Args, FromRequest, HandlerRequest, RawArgs, Rejection, State, Uri};
pub use prompt::{IntoPromptResult, PromptDef, PromptHandler, PromptRequest};
pub use registrations::BuildError;
pub use resource::{IntoResourceResult, ResourceDef, ResourceHandler, ResourceRequest, ResourceTemplateDef};
pub use stateless::CacheHint;
pub use stateless::{RequestStateKeys, StateError};
pub use switches::SwitchError;
/// The cancellation extractor: fires when the client cancels the request.
pub use tokio_util::sync::CancellationToken;
pub use tool::{IntoToolResult, Json, ToolCall, ToolDef, ToolHandler};
pub use toolbox::ToolBox;

use builder::CacheHints;
pub(crate) use catalog::{cursor_for, page_of, Snapshot};
use catalog::{remove, Catalog};
pub(crate) use listen::Change;
use mcpkit_types::schema::CacheScope;

use crate::engine::{self, Connection, PeerOptions};
use crate::error::Result;
use crate::transport::Transport;
use client_state::ClientState;

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

type RootsChanged = Arc<dyn Fn(RequestContext) + Send + Sync>;
/// What a catalogue change is also handed to (instances sharing a bus; see `relay.rs`).
type Relay = Arc<dyn Fn(&Change) + Send + Sync>;
/// What else hears this server's catalogue changes (a server it is mounted in): `false` when
/// it no longer listens, and is then forgotten.
pub(crate) type Watcher = Arc<dyn Fn(&Change) -> bool + Send + Sync>;
/// Says why a tool or prompt of that name is not there when something knows (an upstream that
/// is not connected): the error to answer instead of "Unknown tool".
pub(crate) type Explainer = Arc<dyn Fn(&str) -> Option<mcpkit_types::ErrorObject> + Send + Sync>;
/// Run once on the server a builder built (what composition attaches to it).
pub(crate) type OnBuild = Box<dyn FnOnce(&Server) + Send>;

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
    methods: methods::EraMethods,
    /// The extensions declared in each era.
    extensions: extension::Declared,
    /// Catalogue changes, for `subscriptions/listen` streams.
    changes: tokio::sync::broadcast::Sender<Change>,
    /// Fires when the server ends its subscriptions (shutdown).
    ending: CancellationToken,
    /// What one client may keep on its session.
    client_limits: ClientLimits,
    /// A layer counts per client: the HTTP front end names the client of every request.
    names_every_client: bool,
    /// Who sees and uses each item beyond scopes ([`ServerBuilder::authorize`]).
    authorize: Option<access::Hook>,
    /// Whether a request may be refused by a layer or for want of scopes (HTTP then maps the
    /// refusal to 429 or 403): set at build, and when an item requiring scopes is added.
    may_refuse: std::sync::atomic::AtomicBool,
    /// Catalogue changes heard so far (here or relayed): what the response cache checks.
    changes_seen: std::sync::atomic::AtomicU64,
    /// What else hears the catalogue changes (servers this one is mounted in).
    watchers: RwLock<Vec<Watcher>>,
    /// What explains a name that is not there (see [`Explainer`]).
    explainers: RwLock<Vec<Explainer>>,
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
    fn stateless_service(&self) -> Arc<methods::ServerService> {
        Arc::new(methods::ServerService {
            server: self.clone(),
            session: Arc::new(ClientState::stateless_only()),
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
    fn start_direct(&self, sink: engine::DirectSink, preset: Option<Preset>) -> (engine::Dispatcher, Arc<ClientState>) {
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
    fn session_service(&self, preset: Option<Preset>) -> (Arc<dyn engine::Role>, Arc<ClientState>) {
        let session = Arc::new(ClientState::default());
        if let Some(p) = preset {
            session.negotiate(p.version, p.capabilities, p.client_info);
            session.initialized.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.inner.sessions.register(&session);
        let service = Arc::new(methods::ServerService {
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

    /// Whether this server keeps per-client quotas beyond sessions (the Tasks extension's
    /// per-client task limits): the HTTP front end then names the client of each request that
    /// can make a task ([`client_state::QuotaKey`]), and only then.
    #[cfg(feature = "http-server")]
    pub(crate) fn counts_clients(&self) -> bool {
        [Era::Handshake, Era::Stateless].into_iter().any(|era| {
            self.inner
                .extensions
                .of(era)
                .is_some_and(|declared| declared.contains_key(mcpkit_types::ext::tasks::ID))
        })
    }

    /// Whether a layer of middleware counts per client ([`middleware::Middleware::counts_clients`]):
    /// the HTTP front end then names the client of every request, not only those that can
    /// make a task.
    pub(crate) fn names_every_client(&self) -> bool {
        self.inner.names_every_client
    }

    /// Whether a request may be refused by a layer (HTTP 429) or for want of scopes (403):
    /// only then does the HTTP front end look at a reply's error.
    #[cfg(feature = "http-server")]
    pub(crate) fn may_refuse(&self) -> bool {
        self.inner.may_refuse.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many catalogue changes this server heard (its own, and other instances' relayed).
    pub(crate) fn changes_seen(&self) -> u64 {
        self.inner.changes_seen.load(std::sync::atomic::Ordering::Acquire)
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
        if catalog.requires_scopes() {
            self.inner.may_refuse.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        *guard = Arc::new(Snapshot::build(catalog, self.inner.page_size));
    }

    fn broadcast(&self, change: Change, params: Option<&serde_json::Value>, filter: impl Fn(&ClientState) -> bool) {
        if let Some(relay) = crate::sync::read(&self.inner.relay).as_ref() {
            relay(&change);
        }
        self.fan_out(change, params, filter);
    }

    /// Tell this process's listeners and sessions about `change`.
    fn fan_out(&self, change: Change, params: Option<&serde_json::Value>, filter: impl Fn(&ClientState) -> bool) {
        let method = change.method();
        self.inner
            .changes_seen
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        self.tell_watchers(&change);
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

    /// Hand `change` to the watchers (no lock held while they run), forgetting those that no
    /// longer listen.
    fn tell_watchers(&self, change: &Change) {
        let watchers = crate::sync::read(&self.inner.watchers).clone();
        if watchers.is_empty() {
            return;
        }
        let gone: Vec<Watcher> = watchers.into_iter().filter(|w| !w(change)).collect();
        if !gone.is_empty() {
            crate::sync::write(&self.inner.watchers).retain(|w| !gone.iter().any(|g| Arc::ptr_eq(g, w)));
        }
    }

    /// The error for a request naming tool or prompt `name`, which is not there, when an
    /// explainer knows why.
    pub(crate) fn explain_unknown(&self, name: &str) -> Option<mcpkit_types::ErrorObject> {
        let explainers = crate::sync::read(&self.inner.explainers);
        explainers.iter().find_map(|e| e(name))
    }

    /// Have `explainer` say why a name is not there from now on.
    #[cfg(feature = "client")]
    pub(crate) fn add_explainer(&self, explainer: Explainer) {
        crate::sync::write(&self.inner.explainers).push(explainer);
    }

    /// Have `watcher` hear every later catalogue change of this server.
    pub(crate) fn watch(&self, watcher: Watcher) {
        crate::sync::write(&self.inner.watchers).push(watcher);
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
