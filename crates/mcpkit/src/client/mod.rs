//! The client role (spec: `client/*`, `basic/lifecycle`): connect to a server, negotiate, then
//! call it with typed methods. Handlers answer the server's own requests (sampling, elicitation,
//! roots); server notifications arrive on a broadcast stream.
//!
//! - [`ClientBuilder`] and [`ConnectMode`] (in `connect`): the handshake or the stateless wire.
//! - `stateless`: the per-request `_meta` and the input-round loop of the 2026-07-28 wire.
//! - [`Subscription`] (in `subscription`): `subscriptions/listen`.
//! - `output_schema`: structured tool results checked against the listed output schemas.
//! - `dispatch`: the client's handler table; `cache`: stateless-era response caching.
//! - `skills`: the Skills extension (list, get, load and read skills, verified).
//! - [`tasks`]: the Tasks extension (call as a task, poll, answer, cancel).
//! - [`generated`]: what the clients written by `mcpkit codegen` call.

mod cache;
mod connect;
mod dispatch;
pub mod generated;
mod output_schema;
mod skills;
mod stateless;
mod subscription;
pub mod tasks;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mcpkit_types::method::{
    CallTool, Complete, Discover, GetPrompt, ListPrompts, ListResourceTemplates, ListResources, ListTools, Method,
    NotificationMethod, Ping, ReadResource, RootsListChanged, SetLevel, Subscribe, Unsubscribe,
};
use mcpkit_types::schema::{
    CallToolParams, CallToolResult, ClientCapabilities, CompleteParams, CompleteResult, CompletionArgument,
    CompletionReference, CreateMessageParams, CreateMessageResult, DiscoverResult, ElicitParams, ElicitResult,
    GetPromptParams, GetPromptResult, Implementation, InitializeResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel, PaginatedParams, ProgressParams,
    ProgressToken, Prompt, ReadResourceParams, ReadResourceResult, RequestMeta, Resource, ResourceTemplate, Root,
    ServerCapabilities, SetLevelParams, SubscribeParams, Tool, UnsubscribeParams,
};
use mcpkit_types::{ErrorObject, ProtocolVersion};
use serde::Serialize;
use tokio::sync::{broadcast, mpsc};

pub use connect::{ClientBuilder, ConnectMode};
pub use dispatch::ServerNotification;
pub use skills::LoadedSkill;
use stateless::{Handlers, Stateless};
pub use subscription::Subscription;

use crate::engine::{BoxFuture, Connection, Peer, RequestOptions};
use crate::error::{Error, Result};

type SamplingFn = Arc<dyn Fn(CreateMessageParams) -> BoxFuture<Result<CreateMessageResult, ErrorObject>> + Send + Sync>;
type ElicitFn = Arc<dyn Fn(ElicitParams) -> BoxFuture<Result<ElicitResult, ErrorObject>> + Send + Sync>;
type RootsFn = Arc<dyn Fn() -> BoxFuture<Result<mcpkit_types::schema::ListRootsResult, ErrorObject>> + Send + Sync>;

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
    /// The listed tools that declare an output schema (compiled, with `validation`).
    output_schemas: RwLock<HashMap<String, output_schema::Check>>,
    next_progress: AtomicI64,
    /// Stateless era: what every request carries (`None` on a handshake-era session).
    stateless: Option<Stateless>,
    handlers: Handlers,
    /// Stateless era: fresh results of cacheable methods (shared with the notification handler,
    /// which invalidates them).
    cache: Arc<cache::ResponseCache>,
    /// One `subscriptions/listen` opening at a time, so each acknowledgement is matched to its
    /// request.
    listening: tokio::sync::Mutex<()>,
    /// What this client declared.
    capabilities: ClientCapabilities,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.init.server_info)
            .field("version", &self.inner.version)
            .finish_non_exhaustive()
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

    /// The settings the server declared for extension `id` (`capabilities.extensions[id]`),
    /// if it declared it.
    pub fn server_extension(&self, id: &str) -> Option<&JsonObject> {
        self.inner.init.capabilities.extension(id)
    }

    /// Whether extension `id` is in use on this connection: this client declared it
    /// ([`ClientBuilder::extension`]) and the server declared it, at the same revision.
    pub fn uses_extension(&self, id: &str) -> bool {
        match self.inner.capabilities.extension(id) {
            Some(ours) => mcpkit_types::ext::negotiated(ours, self.server_extension(id)),
            None => false,
        }
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

    /// Whether this connection speaks the stateless era (2026-07-28: protocol `_meta` on every
    /// request, no session); `false` on a handshake-era session.
    pub fn is_stateless(&self) -> bool {
        self.inner.stateless.is_some()
    }

    /// `params` (any serializable object) as this connection sends a request's params: unchanged
    /// on a handshake-era session; on the stateless wire, with the protocol `_meta` fields
    /// (revision, client capabilities and info, log level) added, members already in `_meta`
    /// kept. What the typed methods send, for callers that send raw requests with
    /// [`Peer::request_raw`] or write request frames themselves.
    ///
    /// ```no_run
    /// # async fn demo(client: mcpkit::Client) -> mcpkit::Result<()> {
    /// use mcpkit::types::method::{CallTool, Method};
    /// use mcpkit::types::schema::CallToolParams;
    ///
    /// let params = client.wire_params(&CallToolParams::new("echo"))?;
    /// let raw = client
    ///     .peer()
    ///     .request_raw(CallTool::NAME, Some(&*params), Default::default())
    ///     .await?;
    /// # let _ = raw;
    /// # Ok(())
    /// # }
    /// ```
    pub fn wire_params(&self, params: impl Serialize) -> Result<Box<serde_json::value::RawValue>> {
        let raw = match &self.inner.stateless {
            None => serde_json::value::to_raw_value(&params),
            Some(stateless) => {
                let value = serde_json::to_value(&params).map_err(|e| Error::Serialize(e.to_string()))?;
                serde_json::value::to_raw_value(&stateless.params(value)?)
            }
        };
        raw.map_err(|e| Error::Serialize(e.to_string()))
    }

    /// `server/discover` (stateless era; spec: 2026-07-28 `server/discover`).
    pub async fn discover(&self) -> Result<DiscoverResult> {
        if self.inner.stateless.is_none() {
            return Err(Error::Protocol(format!(
                "{} belongs to the stateless era; this is a handshake-era session",
                Discover::NAME
            )));
        }
        self.call::<Discover>(&Default::default(), RequestOptions::default())
            .await
    }

    /// `ping` (handshake era). On the stateless wire, where `ping` was removed, a
    /// `server/discover` round trip checks the server instead.
    pub async fn ping(&self) -> Result<()> {
        if self.inner.stateless.is_some() {
            return self.discover().await.map(|_| ());
        }
        self.inner.peer.request::<Ping>(&Default::default()).await.map(|_| ())
    }

    /// One page of `tools/list`. Remembers output schemas to validate later calls.
    pub async fn list_tools(&self, cursor: Option<String>) -> Result<ListToolsResult> {
        let mut r = self
            .call::<ListTools>(&paginated(cursor), RequestOptions::default())
            .await?;
        if self.inner.stateless.is_some() {
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
    ///
    /// Tasks extension: when the client declared it ([`ClientBuilder::extension`]) the server
    /// may answer with a task, which this waits for; when the server says the tool runs only
    /// as a task (-32021 naming the extension), the call is made again as a task and waited
    /// for. Either way the caller gets the tool's result.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let args = serde_json::to_value(&arguments).map_err(|e| Error::Serialize(e.to_string()))?;
        if self
            .inner
            .capabilities
            .extension(mcpkit_types::ext::tasks::ID)
            .is_some()
        {
            return self.call_tool_in_task(name, &args, options, |_| {}).await;
        }
        let (timeout, reset) = (options.timeout, options.reset_timeout_on_progress);
        match self.call_tool_plain(name, &args, options).await {
            Err(e) if tasks::needs_task(&e) => {
                let options = CallOptions {
                    timeout,
                    reset_timeout_on_progress: reset,
                    progress: None,
                };
                self.call_tool_in_task(name, &args, options, |_| {}).await
            }
            other => other,
        }
    }

    /// A `tools/call` without the Tasks extension.
    async fn call_tool_plain(
        &self,
        name: &str,
        args: &serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let mut params = CallToolParams::new(name);
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

    /// `completion/complete` with the params as given (the reference, the argument, and the
    /// `context` of the arguments already chosen).
    pub async fn complete_with(&self, params: &CompleteParams) -> Result<CompleteResult> {
        self.call::<Complete>(params, RequestOptions::default()).await
    }

    /// `logging/setLevel`. On the stateless wire the level travels in every later request's
    /// `_meta` instead (`io.modelcontextprotocol/logLevel`).
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<()> {
        if let Some(stateless) = &self.inner.stateless {
            *crate::sync::write(&stateless.log_level) = Some(level);
            return Ok(());
        }
        let p = SetLevelParams { level, meta: None };
        self.inner.peer.request::<SetLevel>(&p).await.map(|_| ())
    }

    /// Replace the roots offered to the server and tell it (`notifications/roots/list_changed`;
    /// on the stateless wire the server asks for roots when it needs them).
    pub fn set_roots(&self, roots: Vec<Root>) -> Result<()> {
        *crate::sync::write(&self.inner.roots) = roots;
        if self.inner.stateless.is_some() {
            return Ok(());
        }
        self.inner.peer.notify_raw(RootsListChanged::NAME, None::<&()>)
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
