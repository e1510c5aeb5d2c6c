//! The [`ServerBuilder`]: what a server offers and how it behaves, set before it is built.

use super::*;

/// Builds a [`Server`].
pub struct ServerBuilder {
    pub(super) info: Implementation,
    pub(super) instructions: Option<String>,
    pub(super) catalog: Catalog,
    pub(super) page_size: usize,
    pub(super) peer_options: PeerOptions,
    pub(super) state: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    pub(super) always_tools: bool,
    pub(super) on_roots_changed: Option<RootsChanged>,
    pub(super) cache: CacheHints,
    pub(super) state_keys: Option<RequestStateKeys>,
    pub(super) extensions: extension::ExtensionSet,
    pub(super) client_limits: ClientLimits,
    pub(super) registrations: registrations::Registrations,
    pub(super) middleware: stack::Stack,
    pub(super) authorize: Option<access::Hook>,
    /// Run on the built server, in order (composition attaches its sources here).
    pub(super) on_build: Vec<OnBuild>,
}

/// What one client may keep on a handshake-era session (a stdio connection, an HTTP
/// `Mcp-Session-Id`): its subscriptions and what it declares at `initialize`. Everything a
/// session stores, in memory and in a shared session store, is bounded by these. Set with
/// [`ServerBuilder::client_limits`]; `mcpkit serve` has a flag for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientLimits {
    /// At most this many resources subscribed at once per session (default 100);
    /// `resources/subscribe` beyond it is refused with invalid request (-32600). Subscribing
    /// again to a URI already subscribed is always accepted.
    pub max_subscriptions: usize,
    /// The longest URI `resources/subscribe` accepts, in bytes (default 4096); a longer one
    /// is refused with invalid params (-32602).
    pub max_subscription_uri_bytes: usize,
    /// The most JSON `initialize`'s `clientInfo` and `capabilities` may take together, in bytes
    /// as serialized (default 16384); more is refused with invalid params (-32602) and no
    /// session is negotiated.
    pub max_client_declaration_bytes: usize,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            max_subscriptions: 100,
            max_subscription_uri_bytes: 4096,
            max_client_declaration_bytes: 16 * 1024,
        }
    }
}

/// Caching hints put on cacheable stateless-era results that do not set their own
/// (spec: 2026-07-28 `server/utilities/caching`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheHints {
    /// `server/discover` and the list methods.
    pub(crate) lists: CacheHint,
    /// `resources/read`.
    pub(super) reads: CacheHint,
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
            client_limits: ClientLimits::default(),
            registrations: registrations::Registrations::default(),
            middleware: stack::Stack::default(),
            authorize: None,
            on_build: Vec::new(),
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

    /// Register a tool. Its name must be unique and follow the spec's rules (checked by
    /// [`ServerBuilder::try_build`]).
    #[track_caller]
    pub fn tool(mut self, tool: ToolDef) -> Self {
        let at = std::panic::Location::caller();
        self.registrations.add(registrations::Kind::Tool, &tool.tool.name, at);
        self.registrations
            .add_needs(registrations::Kind::Tool, &tool.tool.name, &tool.needs, at);
        let extension = tool.needs.extension.clone();
        self.catalog.tools.push(tool);
        self.with_needed(extension)
    }

    /// Declare the tools capability even when no tool is registered yet (tools added later).
    pub fn enable_tools(mut self) -> Self {
        self.always_tools = true;
        self
    }

    /// Register a resource (a [`ResourceDef`], or what converts into one, such as an MCP App's
    /// `UiResource`).
    #[track_caller]
    pub fn resource(mut self, resource: impl Into<ResourceDef>) -> Self {
        let resource = resource.into();
        let at = std::panic::Location::caller();
        self.registrations
            .add(registrations::Kind::Resource, &resource.resource.uri, at);
        self.registrations.add_needs(
            registrations::Kind::Resource,
            &resource.resource.uri,
            &resource.needs,
            at,
        );
        let extension = resource.needs.extension.clone();
        self.catalog.resources.push(resource);
        self.with_needed(extension)
    }

    /// Serve the extension an item needs, once (an item of an extension already served adds
    /// nothing).
    fn with_needed(self, extension: Option<Arc<dyn extension::Extension>>) -> Self {
        match extension {
            Some(e) if !self.extensions.serves(e.id()) => self.extension_arc(e),
            _ => self,
        }
    }

    /// Register a resource template.
    #[track_caller]
    pub fn resource_template(mut self, template: ResourceTemplateDef) -> Self {
        let at = std::panic::Location::caller();
        self.registrations
            .add(registrations::Kind::Template, &template.template.uri_template, at);
        self.catalog.templates.push(template);
        self
    }

    /// Register a prompt.
    #[track_caller]
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        let at = std::panic::Location::caller();
        self.registrations
            .add(registrations::Kind::Prompt, &prompt.prompt.name, at);
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
        self.extension_arc(Arc::new(extension))
    }

    fn extension_arc(self, extension: Arc<dyn extension::Extension>) -> Self {
        let mut builder = extension.extend(self);
        builder.extensions.add(extension);
        builder
    }

    /// Add a layer of middleware around every request method (see [`middleware`]): layers run
    /// in the order added, the first outermost.
    pub fn middleware(mut self, layer: impl middleware::Middleware) -> Self {
        self.middleware.push(Arc::new(layer));
        self
    }

    /// What one client may keep on its session (default [`ClientLimits::default`]: 100
    /// subscriptions, URIs of 4 KiB, 16 KiB of `clientInfo` and capabilities).
    pub fn client_limits(mut self, limits: ClientLimits) -> Self {
        self.client_limits = limits;
        self
    }

    /// Finish.
    ///
    /// # Panics
    ///
    /// When the catalogue breaks a rule [`ServerBuilder::try_build`] checks (an item registered
    /// twice, a tool name outside the spec's rules): a mistake in the program, reported with
    /// where it was made, before the server serves anyone. Use `try_build` to handle it.
    #[track_caller]
    pub fn build(self) -> Server {
        match self.try_build() {
            Ok(server) => server,
            Err(e) => panic!("mcpkit: cannot build the server: {e}"),
        }
    }

    /// Finish, or say which catalogue rule is broken: every tool, prompt, resource (by URI) and
    /// resource template (by URI template) registered once, every tool name 1 to 128 of
    /// `A-Z a-z 0-9 _ - .` (spec: "Tool Names"), no item defined wrong (an MCP App view outside
    /// `ui://`), and every resource an item links to registered (an MCP App tool's view).
    pub fn try_build(self) -> Result<Server, BuildError> {
        self.registrations.check()?;
        Ok(self.finish())
    }

    fn finish(mut self) -> Server {
        let on_build = std::mem::take(&mut self.on_build);
        let server = self.assemble();
        for hook in on_build {
            hook(&server);
        }
        server
    }

    fn assemble(self) -> Server {
        let requires_scopes = self.catalog.requires_scopes();
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
                methods: methods::EraMethods::build(&self.extensions, &self.middleware),
                names_every_client: self.middleware.counts_clients(),
                may_refuse: std::sync::atomic::AtomicBool::new(
                    !self.middleware.is_empty() || self.authorize.is_some() || requires_scopes,
                ),
                authorize: self.authorize,
                changes_seen: std::sync::atomic::AtomicU64::new(0),
                watchers: RwLock::new(Vec::new()),
                explainers: RwLock::new(Vec::new()),
                extensions: self.extensions.declared(),
                client_limits: self.client_limits,
                changes: tokio::sync::broadcast::channel(256).0,
                ending: CancellationToken::new(),
            }),
        }
    }
}
