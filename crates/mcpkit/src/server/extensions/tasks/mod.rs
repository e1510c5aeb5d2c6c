//! The Tasks extension, server side (`io.modelcontextprotocol/tasks`, SEP-2663): served by a
//! server built with `.extension(Tasks::new(config))`, a tool marked task-capable
//! ([`ToolDef::task_support`](crate::server::ToolDef::task_support)) called by a client
//! that declares the extension is answered at once with a task handle; the tool runs detached
//! from the request, with the same [`RequestContext`](crate::server::RequestContext), and the client
//! polls `tasks/get`, answers input requests with `tasks/update` and stops it with
//! `tasks/cancel`.
//!
//! - Elicitation, sampling and roots asked by a task become the task's `inputRequests` (in both
//!   eras): the task parks in `input_required`, and once `tasks/update` has answered every one
//!   the handler runs again and finds its answers, as handlers of the stateless wire do.
//! - Progress a task reports is kept on the task: `statusMessage` and `_meta["dev.mcpkit/progress"]`
//!   of `tasks/get`.
//! - A task belongs to its caller: the whole verified identity (issuer, user and client) when
//!   the request was authenticated,
//!   otherwise the handshake-era session, otherwise (stateless wire or sessionless HTTP, no
//!   authentication) its unguessable id alone. A task of another caller is unknown (-32602),
//!   like one that never existed.
//! - Tasks are kept for their TTL from creation, then `tasks/get` says they expired (-32602).
//!   Each counts against its client's share of the store ([`TaskLimits`](crate::server::backend::TaskLimits): the verified caller,
//!   else the client's address); nothing live is dropped to make room for another's.
//! - Status changes are pushed as `notifications/tasks` to a client that declared the
//!   extension: on a `subscriptions/listen` stream naming the task (stateless era), or to the
//!   session the task runs for (handshake era); see `notify`. Clients may always poll.

mod methods;
mod notify;
mod runner;

use std::sync::Arc;
use std::time::Duration;

use mcpkit_types::ext::{self, tasks::ID};
use mcpkit_types::schema::{ClientCapabilities, JsonObject, RequestMeta, META_CLIENT_CAPABILITIES};
use mcpkit_types::{Era, ProtocolVersion};

use crate::server::backend::memory::MemoryTaskStore;
use crate::server::backend::tasks::TaskOwner;
use crate::server::backend::TaskStore;

use super::{Extension, MethodTable};
use crate::server::Call;

/// `_meta` key of `tasks/get` results carrying the task's latest progress.
pub const META_PROGRESS: &str = "dev.mcpkit/progress";

/// How a server runs tasks (the settings of [`Tasks::new`]).
#[derive(Debug, Clone)]
pub struct TasksConfig {
    /// How long a task is kept from its creation, result included (its `ttlMs`). A task still
    /// running then is stopped. Default 10 minutes.
    pub ttl: Duration,
    /// The polling interval suggested to clients (`pollIntervalMs`). Default 500 ms.
    pub poll_interval: Duration,
    /// Where tasks are kept. Default: a [`MemoryTaskStore`] within
    /// [`TaskLimits::default`](crate::server::backend::TaskLimits::default)
    /// (10 000 tasks; 100 tasks and 16 MiB per client).
    pub store: Arc<dyn TaskStore>,
}

impl Default for TasksConfig {
    fn default() -> Self {
        TasksConfig {
            ttl: Duration::from_secs(600),
            poll_interval: Duration::from_millis(500),
            store: Arc::new(MemoryTaskStore::default()),
        }
    }
}

impl TasksConfig {
    /// Sets the TTL.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets the suggested polling interval.
    pub fn poll_interval(mut self, every: Duration) -> Self {
        self.poll_interval = every;
        self
    }

    /// Sets the store.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Arc::new(store);
        self
    }
}

/// The Tasks extension, to serve with
/// [`ServerBuilder::extension`](crate::server::ServerBuilder::extension). It is declared in
/// both eras with empty settings (SEP-2663 "Capability Negotiation").
///
/// ```
/// use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
/// use mcpkit::server::ToolDef;
/// use mcpkit::types::schema::TaskSupport;
///
/// let slow = ToolDef::new("slow", || async { "done" }).task_support(TaskSupport::Optional);
/// let server = mcpkit::Server::builder()
///     .extension(Tasks::new(TasksConfig::default()))
///     .tool(slow)
///     .build();
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
pub struct Tasks {
    runtime: Arc<Runtime>,
}

impl Tasks {
    /// The extension, running tasks as `config` says.
    pub fn new(config: TasksConfig) -> Tasks {
        Tasks {
            runtime: Arc::new(Runtime {
                config,
                running: runner::Running::default(),
                events: notify::Events::default(),
            }),
        }
    }
}

impl Extension for Tasks {
    fn id(&self) -> &str {
        ID
    }

    fn register(&self, table: &mut MethodTable<'_>) {
        methods::register(table, &self.runtime);
    }
}

/// The extension's runtime, one per server.
#[derive(Debug)]
pub(crate) struct Runtime {
    pub(crate) config: TasksConfig,
    /// Tasks running on this instance: how to stop them.
    running: runner::Running,
    /// Changes of tasks, for `subscriptions/listen` streams (see `notify`).
    events: notify::Events,
}

/// Whether these client capabilities declare the extension (at our revision: the initial one).
pub(crate) fn declares_tasks(caps: &ClientCapabilities) -> bool {
    ext::negotiated(&JsonObject::new(), caps.extension(ID))
}

/// Whether this request may be answered with a task: it speaks 2025-11-25 or later (no task
/// handle under older revisions, SEP-2663 "Backward Compatibility"), and the client declared
/// the extension for it,
/// in its session (handshake era) or in the request's own `_meta` (SEP-2663: per-request
/// capabilities). Reads the request's raw params (before they are decoded).
pub(crate) fn negotiated(call: &Call) -> bool {
    if call.session.version() < ProtocolVersion::V2025_11_25 {
        return false;
    }
    if declares_tasks(&call.session.client_capabilities()) {
        return true;
    }
    crate::server::stateless::read_meta(call.params.as_deref())
        .ok()
        .flatten()
        .and_then(|m| m.client_capabilities())
        .is_some_and(|c| declares_tasks(&c))
}

/// [`negotiated`] for a request whose params were decoded, with their `_meta`.
pub(crate) fn negotiated_in(call: &Call, meta: Option<&RequestMeta>) -> bool {
    if call.session.version() < ProtocolVersion::V2025_11_25 {
        return false;
    }
    if declares_tasks(&call.session.client_capabilities()) {
        return true;
    }
    meta.and_then(|m| m.extra.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| serde_json::from_value::<ClientCapabilities>(c.clone()).ok())
        .is_some_and(|c| declares_tasks(&c))
}

/// Who owns the tasks this request makes or reads: the whole verified identity, as sessions
/// and `requestState` are bound to it.
pub(crate) fn owner_of(call: &Call) -> TaskOwner {
    if let Some(c) = call.extensions.get::<crate::transport::VerifiedCaller>() {
        return TaskOwner(format!("caller:{}", c.binding()));
    }
    // A sessionless request's session is its own and ends with it: like the stateless wire,
    // its tasks are bound to nothing but their unguessable id (SEP-2663 "Security
    // Implications": task ids as bearer capabilities).
    let sessionless = call
        .extensions
        .get::<crate::server::client_state::SessionlessRequest>()
        .is_some();
    match call.era {
        Era::Handshake if !sessionless => TaskOwner(format!("session:{}", call.session.scope())),
        _ => TaskOwner("anonymous".into()),
    }
}

/// A new task id: 128 random bits, hex.
pub(crate) fn new_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `id` could be one of ours (anything else is unknown without a lookup).
pub(crate) fn plausible_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}
