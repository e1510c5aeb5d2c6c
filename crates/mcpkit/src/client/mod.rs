//! The client role (spec: `client/*`, `basic/lifecycle`): connect to a server, negotiate, then
//! call it with typed methods. Handlers answer the server's own requests (sampling, elicitation,
//! roots); server notifications arrive on a broadcast stream.

mod cache;
mod dispatch;
mod modern;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcpkit_types::method::{
    CallTool, Complete, Discover, GetPrompt, Initialize, ListPrompts, ListResourceTemplates, ListResources, ListTools,
    Method, Ping, ReadResource, SetLevel, Subscribe, Unsubscribe,
};
use mcpkit_types::schema::{
    CallToolParams, CallToolResult, ClientCapabilities, CompleteParams, CompleteResult, CompletionArgument,
    CompletionReference, CreateMessageParams, CreateMessageResult, DiscoverResult, ElicitParams, ElicitResult,
    ElicitationCapability, GetPromptParams, GetPromptResult, Implementation, InitializeParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel,
    PaginatedParams, ProgressParams, ProgressToken, Prompt, ReadResourceParams, ReadResourceResult, RequestMeta,
    Resource, ResourceTemplate, Root, RootsCapability, SamplingCapability, ServerCapabilities, SetLevelParams,
    SubscribeParams, SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams, Tool,
    UnsubscribeParams,
};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use serde::Serialize;
use tokio::sync::{broadcast, mpsc};

pub use dispatch::ServerNotification;
pub use modern::ConnectMode;
use modern::{Handlers, Modern, Round};

use crate::engine::{self, BoxFuture, Connection, Peer, PeerOptions, RequestOptions};
use crate::error::{Error, Result};
use crate::transport::Transport;

type SamplingFn = Arc<dyn Fn(CreateMessageParams) -> BoxFuture<Result<CreateMessageResult, ErrorObject>> + Send + Sync>;
type ElicitFn = Arc<dyn Fn(ElicitParams) -> BoxFuture<Result<ElicitResult, ErrorObject>> + Send + Sync>;

/// Builds a [`Client`] and connects it.
pub struct ClientBuilder {
    info: Implementation,
    version: ProtocolVersion,
    mode: ConnectMode,
    max_input_rounds: usize,
    probe_timeout: Duration,
    capabilities: ClientCapabilities,
    sampling: Option<SamplingFn>,
    elicitation: Option<ElicitFn>,
    roots: Option<Vec<Root>>,
    peer_options: PeerOptions,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            info: Implementation::new("mcpkit-client", env!("CARGO_PKG_VERSION")),
            version: ProtocolVersion::LATEST_HANDSHAKE,
            mode: ConnectMode::default(),
            max_input_rounds: 8,
            probe_timeout: modern::PROBE_TIMEOUT,
            capabilities: ClientCapabilities::default(),
            sampling: None,
            elicitation: None,
            roots: None,
            peer_options: PeerOptions::default(),
        }
    }
}

impl ClientBuilder {
    /// The `clientInfo` sent at initialization.
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Shorthand for [`ClientBuilder::info`].
    pub fn name(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info(Implementation::new(name, version))
    }

    /// The handshake-era revision to ask for in `initialize` (default: the newest, 2025-11-25).
    pub fn protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.version = v;
        self
    }

    /// How to pick the protocol era: [`ConnectMode::Legacy`] (default, the `initialize`
    /// handshake), [`ConnectMode::Auto`] (probe with `server/discover`, stateless when the server
    /// speaks 2026-07-28, handshake otherwise) or a pinned stateless revision.
    pub fn mode(mut self, mode: ConnectMode) -> Self {
        self.mode = mode;
        self
    }

    /// [`ConnectMode::Auto`]: how long to wait for the `server/discover` probe before treating
    /// a silent server as a handshake-era one (default 10 s).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// Stateless era: how many `input_required` rounds one request may take before the client
    /// gives up (default 8).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Answer `sampling/createMessage` (declares the `sampling` capability).
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.capabilities.sampling = Some(SamplingCapability::default());
        self.sampling = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Answer `elicitation/create` (declares the `elicitation` capability, form and URL modes).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.capabilities.elicitation = Some(ElicitationCapability {
            form: Some(Default::default()),
            url: Some(Default::default()),
            ..Default::default()
        });
        self.elicitation = Some(Arc::new(move |p| Box::pin(f(p))));
        self
    }

    /// Offer these roots to the server (declares `roots` with `listChanged`).
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.capabilities.roots = Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        });
        self.roots = Some(roots);
        self
    }

    /// Connection limits and the default request timeout.
    pub fn peer_options(mut self, options: PeerOptions) -> Self {
        self.peer_options = options;
        self
    }

    /// Connect over a transport and run the `initialize` handshake.
    pub async fn connect<T: Transport>(self, transport: T) -> Result<Client> {
        let (notify_tx, _) = broadcast::channel(1024);
        let roots = Arc::new(RwLock::new(self.roots.clone().unwrap_or_default()));
        let response_cache = Arc::new(cache::ResponseCache::default());
        let service = Arc::new(dispatch::ClientService {
            cache: response_cache.clone(),
            sampling: self.sampling.clone(),
            elicitation: self.elicitation.clone(),
            roots: self.roots.is_some().then(|| roots.clone()),
            notifications: notify_tx.clone(),
        });
        let connection = engine::start(transport, service, self.peer_options.clone());
        let peer = connection.peer().clone();
        let handlers = Handlers {
            sampling: self.sampling.clone(),
            elicitation: self.elicitation.clone(),
            roots: self.roots.is_some().then(|| roots.clone()),
        };
        let shared = |init, version, modern| ClientInner {
            peer: peer.clone(),
            connection: Mutex::new(None),
            init,
            version,
            notifications: notify_tx.clone(),
            roots: roots.clone(),
            output_schemas: RwLock::new(HashMap::new()),
            next_progress: AtomicI64::new(1),
            modern,
            handlers: handlers.clone(),
            cache: response_cache.clone(),
            listening: tokio::sync::Mutex::new(()),
        };
        match self.discover(&peer).await {
            Ok(Some((modern, init))) => {
                let version = modern.version;
                let inner = shared(init, version, Some(modern));
                *crate::sync::lock(&inner.connection) = Some(connection);
                return Ok(Client { inner: Arc::new(inner) });
            }
            Ok(None) => {}
            Err(e) => {
                peer.close();
                return Err(e);
            }
        }
        let params = InitializeParams::new(self.version.as_str(), self.capabilities.clone(), self.info.clone());
        let init = match peer.request::<Initialize>(&params).await {
            Ok(r) => r,
            Err(e) => {
                peer.close();
                return Err(e);
            }
        };
        let version = match init.protocol_version.parse::<ProtocolVersion>() {
            Ok(v) if v.era() == mcpkit_types::Era::Handshake => v,
            _ => {
                // Spec: the client SHOULD disconnect when it does not support the server's version.
                peer.close();
                let _ = connection.closed().await;
                return Err(crate::error::unsupported(&init.protocol_version));
            }
        };
        peer.notify_raw("notifications/initialized", None::<&()>)?;
        let inner = shared(init, version, None);
        *crate::sync::lock(&inner.connection) = Some(connection);
        Ok(Client { inner: Arc::new(inner) })
    }

    /// The stateless-era opening (spec: 2026-07-28 `basic/versioning`): `server/discover` with
    /// the per-request `_meta`. `Ok(None)` means: use the handshake.
    async fn discover(&self, peer: &Peer) -> Result<Option<(Modern, InitializeResult)>> {
        let (version, auto) = match self.mode {
            ConnectMode::Legacy => return Ok(None),
            ConnectMode::Auto => (ProtocolVersion::LATEST, true),
            ConnectMode::Version(v) if v.era() == mcpkit_types::Era::Stateless => (v, false),
            ConnectMode::Version(v) => {
                return Err(Error::Protocol(format!(
                    "{v} is a handshake-era revision: use ConnectMode::Legacy with protocol_version({v})"
                )))
            }
        };
        let mut modern = Modern::new(version, &self.capabilities, &self.info, self.max_input_rounds);
        let mut retried = false;
        let outcome = loop {
            let params = modern.params(serde_json::Value::Null)?;
            let options = RequestOptions {
                timeout: auto.then_some(self.probe_timeout),
                ..Default::default()
            };
            let outcome = peer.request_raw(Discover::NAME, Some(&params), options).await;
            // Spec: 2026-07-28 `basic/transports/streamable-http` "Protocol Version Header": an
            // UnsupportedProtocolVersion answer lists what the server speaks; retry once with a
            // stateless revision from that list that this client accepts (only the pinned one
            // when pinned, the newest known one in auto mode).
            let retry = match &outcome {
                Err(e) if !retried && e.rpc().map(|e| e.code) == Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION) => {
                    modern::supported_of(e)
                        .iter()
                        .filter_map(|v| v.parse::<ProtocolVersion>().ok())
                        .filter(|v| v.era() == mcpkit_types::Era::Stateless && (auto || *v == version))
                        .max()
                }
                _ => None,
            };
            match retry {
                Some(v) => {
                    retried = true;
                    modern = Modern::new(v, &self.capabilities, &self.info, self.max_input_rounds);
                }
                None => break outcome,
            }
        };
        let version = modern.version;
        let speaks_handshake = |versions: &[String]| {
            versions.iter().any(|v| {
                v.parse::<ProtocolVersion>()
                    .is_ok_and(|v| v.era() == mcpkit_types::Era::Handshake)
            })
        };
        let discovered: DiscoverResult = match outcome {
            Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))?,
            Err(e @ (Error::ConnectionClosed | Error::Transport(_))) => return Err(e),
            Err(e) if modern::is_modern_error(&e) => {
                // A modern server that does not speak our revision: the handshake only if it
                // says it speaks a handshake-era one.
                if auto && speaks_handshake(&modern::supported_of(&e)) {
                    return Ok(None);
                }
                return Err(e);
            }
            Err(_) if auto => return Ok(None),
            Err(e) => return Err(e),
        };
        if !discovered.supported_versions.iter().any(|v| v == version.as_str()) {
            if auto && speaks_handshake(&discovered.supported_versions) {
                return Ok(None);
            }
            return Err(crate::error::unsupported(
                discovered.supported_versions.first().map_or("", String::as_str),
            ));
        }
        let info = discovered.server_info().unwrap_or_default();
        let mut init = InitializeResult::new(version.as_str(), discovered.capabilities, info);
        if let Some(i) = discovered.instructions {
            init = init.with_instructions(i);
        }
        Ok(Some((modern, init)))
    }
}

/// A connected client. Cheap to clone; all clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    peer: Peer,
    connection: Mutex<Option<Connection>>,
    init: InitializeResult,
    version: ProtocolVersion,
    notifications: broadcast::Sender<ServerNotification>,
    roots: Arc<RwLock<Vec<Root>>>,
    output_schemas: RwLock<HashMap<String, Arc<jsonschema::Validator>>>,
    next_progress: AtomicI64,
    /// Stateless era: what every request carries (`None` on a handshake-era session).
    modern: Option<Modern>,
    handlers: Handlers,
    /// Stateless era: fresh results of cacheable methods (shared with the notification handler,
    /// which invalidates them).
    cache: Arc<cache::ResponseCache>,
    /// One `subscriptions/listen` opening at a time, so each acknowledgement is matched to its
    /// request.
    listening: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.init.server_info)
            .field("version", &self.inner.version)
            .finish_non_exhaustive()
    }
}

/// An open `subscriptions/listen` stream; dropping it ends the subscription (the request is
/// cancelled: the stream is closed on HTTP, `notifications/cancelled` is sent on stdio).
#[derive(Debug)]
pub struct Subscription {
    acknowledged: SubscriptionFilter,
    request: tokio::task::AbortHandle,
}

impl Subscription {
    /// The notification kinds the server agreed to send.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.request.abort();
    }
}

/// Options for one tool call.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Give up after this long (a `notifications/cancelled` is sent).
    pub timeout: Option<Duration>,
    /// Restart the timeout whenever progress arrives.
    pub reset_timeout_on_progress: bool,
    /// Receive the server's progress notifications for this call.
    pub progress: Option<mpsc::UnboundedSender<ProgressParams>>,
}

impl Client {
    /// Start building a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// The server's `initialize` result.
    pub fn initialize_result(&self) -> &InitializeResult {
        &self.inner.init
    }

    /// Who the server said it is.
    pub fn server_info(&self) -> &Implementation {
        &self.inner.init.server_info
    }

    /// What the server said it can do.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.init.capabilities
    }

    /// The server's instructions for the model, if any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.init.instructions.as_deref()
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The underlying connection handle (for raw requests).
    pub fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// A stream of the server's notifications (progress, log messages, list changes, resource
    /// updates, …). Each receiver sees every notification sent after it subscribed.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.notifications.subscribe()
    }

    /// The stateless era this connection speaks, if it is not a handshake-era session.
    pub fn is_stateless(&self) -> bool {
        self.inner.modern.is_some()
    }

    /// `params` (any serializable object) as this connection sends a request's params: unchanged
    /// on a handshake-era session; on the stateless wire, with the protocol `_meta` fields
    /// (revision, client capabilities and info, log level) added, members already in `_meta`
    /// kept. What the typed methods send, for callers that send raw requests with
    /// [`Peer::request_raw`] or write request frames themselves.
    ///
    /// ```no_run
    /// # async fn demo(client: mcpkit::Client) -> mcpkit::Result<()> {
    /// use mcpkit::types::schema::CallToolParams;
    ///
    /// let params = client.wire_params(&CallToolParams::new("echo"))?;
    /// let raw = client
    ///     .peer()
    ///     .request_raw("tools/call", Some(&*params), Default::default())
    ///     .await?;
    /// # let _ = raw;
    /// # Ok(())
    /// # }
    /// ```
    pub fn wire_params(&self, params: impl Serialize) -> Result<Box<serde_json::value::RawValue>> {
        let raw = match &self.inner.modern {
            None => serde_json::value::to_raw_value(&params),
            Some(modern) => {
                let value = serde_json::to_value(&params).map_err(|e| Error::Serialize(e.to_string()))?;
                serde_json::value::to_raw_value(&modern.params(value)?)
            }
        };
        raw.map_err(|e| Error::Serialize(e.to_string()))
    }

    /// Send one request the way the connection's era wants: as is on a handshake-era session;
    /// with the protocol `_meta` on the stateless wire, answering `input_required` rounds with
    /// this client's handlers and retrying (a fresh request id each time).
    async fn call<M: Method>(&self, params: &M::Params, options: RequestOptions) -> Result<M::Result> {
        let Some(modern) = &self.inner.modern else {
            return self.inner.peer.request_with::<M>(params, options).await;
        };
        let value = serde_json::to_value(params).map_err(|e| Error::Serialize(e.to_string()))?;
        // Spec: 2026-07-28 `server/utilities/caching` "Cache Key": the method and the params
        // that shape the result (not `_meta`).
        let cache_key = cache::cacheable(M::NAME).then(|| value.to_string());
        if let Some(key) = &cache_key {
            if let Some(raw) = self.inner.cache.get(M::NAME, key) {
                return serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()));
            }
        }
        let mut params = modern.params(value)?;
        let may_ask = matches!(M::NAME, "tools/call" | "prompts/get" | "resources/read");
        for round in 0..=modern.max_rounds {
            let round_options = RequestOptions {
                timeout: options.timeout,
                reset_timeout_on_progress: options.reset_timeout_on_progress,
                progress: options.progress.clone(),
                related: None,
            };
            let raw = self
                .inner
                .peer
                .request_raw(M::NAME, Some(&params), round_options)
                .await?;
            match modern::round_of(&raw)? {
                Round::Complete => {
                    // A result that took input rounds depends on the answers: never cached.
                    if let (Some(key), 0) = (&cache_key, round) {
                        self.inner.cache.put(M::NAME, key, &raw);
                    }
                    return serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()));
                }
                Round::InputRequired { .. } if !may_ask => {
                    return Err(Error::InvalidResponse(format!(
                        "{} answered input_required, which only tools/call, prompts/get and resources/read may",
                        M::NAME
                    )))
                }
                Round::InputRequired { requests, state } => {
                    let answers = self.inner.handlers.answer(requests).await?;
                    params.insert("inputResponses".into(), serde_json::Value::Object(answers));
                    match state {
                        Some(s) => params.insert("requestState".into(), serde_json::Value::String(s)),
                        None => params.remove("requestState"),
                    };
                }
            }
        }
        Err(Error::Protocol(format!(
            "{} still needed input after {} rounds",
            M::NAME,
            modern.max_rounds
        )))
    }

    /// Open a `subscriptions/listen` stream (stateless era; spec: 2026-07-28
    /// `basic/patterns/subscriptions`). Returns once the server acknowledged it, with the part of
    /// `filter` it honours; the notifications then arrive on [`Client::notifications`], each
    /// tagged with the subscription id in `_meta`. Dropping the [`Subscription`] ends it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        let Some(modern) = &self.inner.modern else {
            return Err(Error::Protocol(
                "subscriptions/listen belongs to the stateless era; use subscribe() on this session".into(),
            ));
        };
        let _one_at_a_time = self.inner.listening.lock().await;
        let mut notes = self.notifications();
        let value = serde_json::to_value(SubscriptionsListenParams {
            notifications: filter,
            meta: None,
        })
        .map_err(|e| Error::Serialize(e.to_string()))?;
        let params = modern.params(value)?;
        let peer = self.inner.peer.clone();
        let mut request = tokio::spawn(async move {
            peer.request_raw("subscriptions/listen", Some(&params), RequestOptions::default())
                .await
        });
        let acknowledged = loop {
            tokio::select! {
                ended = &mut request => {
                    return Err(match ended {
                        Ok(Err(e)) => e,
                        _ => Error::Protocol("the subscription ended before it was acknowledged".into()),
                    });
                }
                note = notes.recv() => match note {
                    Ok(ServerNotification::Other { method, params })
                        if method == "notifications/subscriptions/acknowledged" =>
                    {
                        let ack: SubscriptionsAcknowledgedParams = params
                            .and_then(|p| serde_json::from_value(p).ok())
                            .ok_or_else(|| Error::InvalidResponse("malformed subscription acknowledgement".into()))?;
                        break ack.notifications;
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Err(Error::ConnectionClosed),
                },
            }
        };
        Ok(Subscription {
            acknowledged,
            request: request.abort_handle(),
        })
    }

    /// `server/discover` (stateless era; spec: 2026-07-28 `server/discover`).
    pub async fn discover(&self) -> Result<DiscoverResult> {
        if self.inner.modern.is_none() {
            return Err(Error::Protocol(
                "server/discover belongs to the stateless era; this is a handshake-era session".into(),
            ));
        }
        self.call::<Discover>(&Default::default(), RequestOptions::default())
            .await
    }

    /// `ping` (handshake era). On the stateless wire, where `ping` was removed, a
    /// `server/discover` round trip checks the server instead.
    pub async fn ping(&self) -> Result<()> {
        if self.inner.modern.is_some() {
            return self.discover().await.map(|_| ());
        }
        self.inner.peer.request::<Ping>(&Default::default()).await.map(|_| ())
    }

    /// One page of `tools/list`. Remembers output schemas to validate later calls.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult> {
        let mut r = self
            .call::<ListTools>(&paginated(cursor), RequestOptions::default())
            .await?;
        if self.inner.modern.is_some() {
            // Spec: 2026-07-28 `basic/transports/streamable-http` "Custom Headers from Tool
            // Parameters": a tool whose `x-mcp-header` annotations are invalid is left out.
            r.tools
                .retain(|t| match mcpkit_types::headers::header_params(&t.input_schema) {
                    Ok(_) => true,
                    Err(reason) => {
                        tracing::warn!("leaving out tool {:?}: {reason}", t.name);
                        false
                    }
                });
        }
        self.remember_output_schemas(&r.tools);
        Ok(r)
    }

    /// Every tool, following `nextCursor` to the end.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>> {
        collect_pages(|c| async move { self.list_tools(c).await.map(|r| (r.tools, r.next_cursor)) }).await
    }

    /// Call a tool with arguments (any serializable object, or `()` for none).
    pub async fn call_tool(&self, name: &str, arguments: impl Serialize) -> Result<CallToolResult> {
        self.call_tool_with(name, arguments, CallOptions::default()).await
    }

    /// Call a tool with options (timeout, progress).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let mut params = CallToolParams::new(name);
        let args = serde_json::to_value(&arguments).map_err(|e| Error::Serialize(e.to_string()))?;
        if !args.is_null() {
            params = params
                .with_arguments(&args)
                .map_err(|e| Error::Serialize(e.to_string()))?;
        }
        let mut request = RequestOptions {
            timeout: options.timeout,
            reset_timeout_on_progress: options.reset_timeout_on_progress,
            progress: None,
            related: None,
        };
        if let Some(sink) = options.progress {
            let token = ProgressToken::Number(self.inner.next_progress.fetch_add(1, Ordering::Relaxed));
            params = params.with_meta(RequestMeta::with_progress_token(token.clone()));
            request.progress = Some((token, sink));
        }
        let result = self.call::<CallTool>(&params, request).await?;
        self.check_output(name, &result)?;
        Ok(result)
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<String>) -> Result<ListResourcesResult> {
        self.call::<ListResources>(&paginated(cursor), RequestOptions::default())
            .await
    }

    /// Every resource.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>> {
        collect_pages(|c| async move { self.list_resources(c).await.map(|r| (r.resources, r.next_cursor)) }).await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(&self, cursor: Option<String>) -> Result<ListResourceTemplatesResult> {
        self.call::<ListResourceTemplates>(&paginated(cursor), RequestOptions::default())
            .await
    }

    /// Every resource template.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>> {
        collect_pages(|c| async move {
            self.list_resource_templates(c)
                .await
                .map(|r| (r.resource_templates, r.next_cursor))
        })
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult> {
        self.call::<ReadResource>(&ReadResourceParams::new(uri), RequestOptions::default())
            .await
    }

    /// `resources/subscribe`.
    pub async fn subscribe(&self, uri: &str) -> Result<()> {
        let p = SubscribeParams {
            uri: uri.to_owned(),
            meta: None,
        };
        self.inner.peer.request::<Subscribe>(&p).await.map(|_| ())
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe(&self, uri: &str) -> Result<()> {
        let p = UnsubscribeParams {
            uri: uri.to_owned(),
            meta: None,
        };
        self.inner.peer.request::<Unsubscribe>(&p).await.map(|_| ())
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<String>) -> Result<ListPromptsResult> {
        self.call::<ListPrompts>(&paginated(cursor), RequestOptions::default())
            .await
    }

    /// Every prompt.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>> {
        collect_pages(|c| async move { self.list_prompts(c).await.map(|r| (r.prompts, r.next_cursor)) }).await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt<I, K, V>(&self, name: &str, arguments: I) -> Result<GetPromptResult>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut p = GetPromptParams::new(name);
        for (k, v) in arguments {
            p = p.with_argument(k, v);
        }
        self.call::<GetPrompt>(&p, RequestOptions::default()).await
    }

    /// `completion/complete` for an argument of a prompt or resource template.
    pub async fn complete(
        &self,
        reference: CompletionReference,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult> {
        let p = CompleteParams {
            reference,
            argument: CompletionArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
            },
            context: None,
            meta: None,
        };
        self.call::<Complete>(&p, RequestOptions::default()).await
    }

    /// `logging/setLevel`. On the stateless wire the level travels in every later request's
    /// `_meta` instead (`io.modelcontextprotocol/logLevel`).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<()> {
        if let Some(modern) = &self.inner.modern {
            *crate::sync::write(&modern.log_level) = Some(level);
            return Ok(());
        }
        let p = SetLevelParams { level, meta: None };
        self.inner.peer.request::<SetLevel>(&p).await.map(|_| ())
    }

    /// Replace the roots offered to the server and tell it (`notifications/roots/list_changed`;
    /// on the stateless wire the server asks for roots when it needs them).
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<()> {
        *crate::sync::write(&self.inner.roots) = roots;
        if self.inner.modern.is_some() {
            return Ok(());
        }
        self.inner
            .peer
            .notify_raw("notifications/roots/list_changed", None::<&()>)
    }

    /// Close the connection (for a child process: close its stdin, then signal it) and wait.
    pub async fn close(&self) -> Result<()> {
        self.inner.peer.close();
        let conn = crate::sync::lock(&self.inner.connection).take();
        match conn {
            Some(c) => c.closed().await,
            None => Ok(()),
        }
    }

    fn remember_output_schemas(&self, tools: &[Tool]) {
        let mut map = crate::sync::write(&self.inner.output_schemas);
        for t in tools {
            match &t.output_schema {
                Some(schema) => {
                    if let Ok(v) = jsonschema::validator_for(&serde_json::Value::Object(schema.clone())) {
                        map.insert(t.name.clone(), Arc::new(v));
                    }
                }
                None => {
                    map.remove(&t.name);
                }
            }
        }
    }

    /// Spec: `server/tools` "Output Schema": clients SHOULD validate structured results.
    fn check_output(&self, name: &str, result: &CallToolResult) -> Result<()> {
        // Before 2025-06-18 there is no structuredContent on the wire to check.
        if result.is_error() || self.inner.version < ProtocolVersion::V2025_06_18 {
            return Ok(());
        }
        let validator = crate::sync::read(&self.inner.output_schemas).get(name).cloned();
        let Some(validator) = validator else { return Ok(()) };
        let Some(structured) = &result.structured_content else {
            return Err(Error::OutputSchema {
                tool: name.to_owned(),
                reason: "the tool declares an output schema but returned no structuredContent".into(),
            });
        };
        let first_error = validator.iter_errors(structured).next().map(|e| e.to_string());
        match first_error {
            None => Ok(()),
            Some(reason) => Err(Error::OutputSchema {
                tool: name.to_owned(),
                reason,
            }),
        }
    }
}

fn paginated(cursor: Option<String>) -> PaginatedParams {
    PaginatedParams {
        cursor,
        ..Default::default()
    }
}

/// Follow cursors until the server stops returning one (bounded, against a looping server).
async fn collect_pages<T, F, Fut>(mut fetch: F) -> Result<Vec<T>>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>)>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    for _ in 0..10_000 {
        let (items, next) = fetch(cursor.take()).await?;
        all.extend(items);
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
    Err(Error::Protocol("the server returned more than 10000 pages".into()))
}

/// The reference to a prompt, for [`Client::complete`].
pub fn prompt_ref(name: &str) -> CompletionReference {
    CompletionReference::Prompt(mcpkit_types::schema::PromptReference {
        name: name.to_owned(),
        title: None,
    })
}

/// The reference to a resource template, for [`Client::complete`].
pub fn resource_ref(uri_template: &str) -> CompletionReference {
    CompletionReference::Resource(mcpkit_types::schema::ResourceTemplateReference {
        uri: uri_template.to_owned(),
    })
}
