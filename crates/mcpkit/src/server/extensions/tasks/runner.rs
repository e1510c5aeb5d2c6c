//! Running a task: the tool's handler, detached from the request that made the task, with that
//! request's context (session, connection, `_meta`, what the transport attached); its input
//! requests become the task's `inputRequests`, and each time they are all answered it runs again
//! and finds its answers.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use mcpkit_types::method::{CallTool, Method};
use mcpkit_types::schema::{CallToolResult, RequestMeta, TaskStatus};
use mcpkit_types::{ErrorObject, RequestId};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Runtime;
use crate::engine::Peer;
use crate::server::backend::tasks::{now_ms, Applied, TaskChange, TaskOutcome, TaskProgress, TaskRecord};
use crate::server::client_state::ClientState;
use crate::server::context::RequestContext;
use crate::server::stateless::InputState;
use crate::server::tool::ToolCall;
use crate::server::{ProgressObserver, ProgressSink, Server};
use crate::sync::lock;
use crate::transport::Extensions;

/// What a task's handler runs on: the session, connection and transport extensions of the
/// request that made it (or of the `tasks/update` that resumed it on another instance).
#[derive(Clone)]
pub(crate) struct Parts {
    pub(crate) session: Arc<ClientState>,
    pub(crate) peer: Peer,
    pub(crate) extensions: Extensions,
    pub(crate) request_id: RequestId,
}

/// The tasks of this instance that have not ended: how to stop them, and what to run them on.
#[derive(Default)]
pub(crate) struct Running(Mutex<HashMap<String, Local>>);

struct Local {
    cancel: CancellationToken,
    parts: Parts,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("tasks", &lock(&self.0).len()).finish()
    }
}

impl Running {
    /// Keep `id` (or keep it again, when it resumes): its token and the parts to run it on.
    fn start(&self, id: &str, parts: Parts) -> CancellationToken {
        let mut map = lock(&self.0);
        let local = map.entry(id.to_owned()).or_insert_with(|| Local {
            cancel: CancellationToken::new(),
            parts: parts.clone(),
        });
        local.cancel.clone()
    }

    /// The parts task `id` runs on here, if it lives on this instance.
    pub(crate) fn parts(&self, id: &str) -> Option<Parts> {
        lock(&self.0).get(id).map(|l| l.parts.clone())
    }

    /// Stop task `id` if it runs here.
    pub(crate) fn cancel(&self, id: &str) {
        if let Some(local) = lock(&self.0).remove(id) {
            local.cancel.cancel();
        }
    }

    fn forget(&self, id: &str) {
        lock(&self.0).remove(id);
    }
}

/// The latest progress of a running task, and its message.
type Latest = Option<(TaskProgress, Option<String>)>;

/// Put into a task's [`RequestContext`]: progress goes to the task, not only to the client.
#[derive(Debug)]
pub(crate) struct TaskLink {
    progress: watch::Sender<Latest>,
}

impl ProgressSink for TaskLink {
    /// Record progress (the latest wins; the store sees it shortly after).
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.progress
            .send_replace(Some((TaskProgress { progress, total }, message.map(str::to_owned))));
    }
}

/// Run task `record` in the background until it ends or parks for input.
pub(crate) fn spawn(tasks: Arc<Runtime>, server: Server, parts: Parts, record: TaskRecord) {
    tokio::spawn(run(tasks, server, parts, record));
}

async fn run(tasks: Arc<Runtime>, server: Server, parts: Parts, mut record: TaskRecord) {
    let id = record.id.clone();
    let cancel = tasks.running.start(&id, parts.clone());
    loop {
        let Some(change) = run_once(&tasks, &server, &parts, &record, &cancel).await else {
            // Cancelled (the cancel request set the status) or expired (the store drops it).
            tasks.running.forget(&id);
            return;
        };
        let applied = tasks.config.store.update(&id, None, change).await;
        if let Ok(Applied::Changed(r)) = &applied {
            tasks.changed(r);
        }
        match applied {
            // Every input was answered while the handler ran: run it again with the answers.
            Ok(Applied::Changed(r)) if r.status == TaskStatus::Working => record = *r,
            Ok(Applied::Changed(r)) if r.status == TaskStatus::InputRequired => return,
            Ok(_) => {
                tasks.running.forget(&id);
                return;
            }
            Err(e) => {
                tracing::warn!(task = %id, "task store update failed: {e}");
                tasks.running.forget(&id);
                return;
            }
        }
    }
}

/// One run of the handler: the change it ends with, `None` when it was stopped.
async fn run_once(
    tasks: &Arc<Runtime>,
    server: &Server,
    parts: &Parts,
    record: &TaskRecord,
    cancel: &CancellationToken,
) -> Option<TaskChange> {
    let snap = server.snapshot();
    let Some(def) = snap
        .tool_index
        .get(&record.request.tool)
        .map(|&i| &snap.catalog.tools[i])
    else {
        let e = ErrorObject::invalid_params(format!("Unknown tool: {}", record.request.tool));
        return Some(TaskChange::Finished(TaskOutcome::Failed(e)));
    };
    let input = Arc::new(InputState::for_task(
        record.answers.clone(),
        record.handler_state.clone(),
    ));
    let (link, mut progress) = watch::channel(None);
    let mut extensions = parts.extensions.clone();
    extensions.insert(ProgressObserver(Arc::new(TaskLink { progress: link })));
    let meta: Option<RequestMeta> = record.request.meta.clone().and_then(|m| serde_json::from_value(m).ok());
    let arguments = record
        .request
        .arguments
        .as_ref()
        .and_then(|a| serde_json::value::to_raw_value(a).ok());
    let cx = RequestContext {
        peer: parts.peer.clone(),
        session: parts.session.clone(),
        server: server.clone(),
        id: parts.request_id.clone(),
        meta,
        cancel: cancel.clone(),
        method: CallTool::NAME,
        input: Some(input.clone()),
        extensions,
    };
    let version = parts.session.version();
    let handler = (def.handler)(ToolCall {
        name: record.request.tool.as_str().into(),
        arguments,
        cx,
    });
    let outcome = supervise(tasks, &record.id, record.expires_ms, cancel, &mut progress, handler).await;
    let outcome = match outcome? {
        Ok(r) => r,
        Err(_panic) => {
            let e = ErrorObject::internal("internal error: the tool panicked");
            return Some(TaskChange::Finished(TaskOutcome::Failed(e)));
        }
    };
    let pending = input.take_pending();
    if !pending.is_empty() {
        return Some(TaskChange::InputRequired {
            pending,
            handler_state: input.handler_state(),
        });
    }
    Some(TaskChange::Finished(task_outcome(outcome, &input, version)))
}

/// Run `work`, a handler's future, as task `id` until it ends (`Some`, with its panic caught as
/// `Err`) or the task is cancelled or expires at `expires_ms` (`None`); meanwhile its progress
/// goes to the store in order, the latest winning, until the handler is done (its context, and
/// with it the progress sender, is dropped).
async fn supervise<T>(
    tasks: &Runtime,
    id: &str,
    expires_ms: Option<u64>,
    cancel: &CancellationToken,
    progress: &mut watch::Receiver<Latest>,
    work: impl std::future::Future<Output = T>,
) -> Option<std::thread::Result<T>> {
    let until_expiry = expires_ms.map_or(Duration::MAX, |e| Duration::from_millis(e.saturating_sub(now_ms())));
    let outcome = async {
        tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            () = tokio::time::sleep(until_expiry) => None,
            r = AssertUnwindSafe(work).catch_unwind() => Some(r),
        }
    };
    let store = &tasks.config.store;
    let pump = async {
        while progress.changed().await.is_ok() {
            let latest = progress.borrow_and_update().clone();
            if let Some((p, message)) = latest {
                let tells = message.is_some();
                match store.update(id, None, TaskChange::Progress(p, message)).await {
                    // A new message is a change of the task's status; progress alone is not.
                    Ok(Applied::Changed(r)) if tells => tasks.changed(&r),
                    Ok(_) => {}
                    Err(e) => tracing::debug!(task = %id, "task progress not stored: {e}"),
                }
            }
        }
    };
    let (outcome, ()) = futures_util::join!(outcome, pump);
    outcome
}

/// How a handler's run ended, as the task's outcome: a result (tool errors included), or the
/// JSON-RPC error of the request (the error of a failed input call first).
fn task_outcome(
    outcome: Result<CallToolResult, ErrorObject>,
    input: &InputState,
    version: mcpkit_types::ProtocolVersion,
) -> TaskOutcome {
    let failed = outcome.as_ref().map_or(true, |r| r.is_error == Some(true));
    if failed {
        if let Some(e) = input.take_failure() {
            return TaskOutcome::Failed(e);
        }
    }
    match outcome {
        Ok(r) => match serde_json::to_value(r.for_version(version)) {
            Ok(Value::Object(o)) => TaskOutcome::Completed(o),
            _ => TaskOutcome::Failed(ErrorObject::internal("the tool result does not serialize")),
        },
        Err(e) => TaskOutcome::Failed(e),
    }
}

/// Put into the context of a call that becomes a task when its handler detaches.
#[derive(Debug)]
pub(crate) struct Detach(Mutex<Option<tokio::sync::oneshot::Sender<()>>>);

impl Detach {
    /// A signal, and what its receiver hears.
    pub(crate) fn new() -> (Detach, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (Detach(Mutex::new(Some(tx))), rx)
    }

    /// Fire it; `false` when it was fired before.
    pub(crate) fn fire(&self) -> bool {
        lock(&self.0).take().is_some_and(|tx| tx.send(()).is_ok())
    }
}

impl RequestContext {
    /// Tasks extension: continue as a task. On a call of a tool made with
    /// [`ToolDef::task_at_detach`](crate::server::ToolDef::task_at_detach) by a client that
    /// declared the extension, the client gets the task handle now and the rest of the handler
    /// runs as the task. Anywhere else it does nothing: the handler just carries on.
    pub async fn detach(&self) {
        if self.extensions.get::<Detach>().is_some_and(Detach::fire) {
            // Let the call answer with the handle before the handler goes on.
            tokio::task::yield_now().await;
        }
    }
}

/// The rest of a detached call, run as task `record`: its outcome is the task's.
pub(crate) fn spawn_rest(
    tasks: Arc<Runtime>,
    parts: Parts,
    record: TaskRecord,
    mut progress: watch::Receiver<Latest>,
    rest: crate::engine::BoxFuture<crate::engine::HandlerResult>,
) {
    tokio::spawn(async move {
        let id = record.id.as_str();
        let cancel = tasks.running.start(id, parts);
        let outcome = supervise(&tasks, id, record.expires_ms, &cancel, &mut progress, rest).await;
        let outcome = match outcome {
            None => None,
            Some(Err(_panic)) => Some(TaskOutcome::Failed(ErrorObject::internal(
                "internal error: the tool panicked",
            ))),
            Some(Ok(Err(e))) => Some(TaskOutcome::Failed(e)),
            Some(Ok(Ok(raw))) => Some(match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Object(mut o)) => {
                    if o.get("resultType").and_then(Value::as_str) == Some("input_required") {
                        TaskOutcome::Failed(ErrorObject::internal(
                            "the tool asked for input after it detached into a task",
                        ))
                    } else {
                        o.remove("resultType");
                        TaskOutcome::Completed(o)
                    }
                }
                _ => TaskOutcome::Failed(ErrorObject::internal("the tool result is not an object")),
            }),
        };
        if let Some(outcome) = outcome {
            match tasks.config.store.update(id, None, TaskChange::Finished(outcome)).await {
                Ok(Applied::Changed(r)) => tasks.changed(&r),
                Ok(_) => {}
                Err(e) => tracing::warn!(task = %id, "task store update failed: {e}"),
            }
        }
        tasks.running.forget(id);
    });
}

/// A progress link and its receiver, for a call that may detach.
pub(crate) fn link() -> (ProgressObserver, watch::Receiver<Latest>) {
    let (tx, rx) = watch::channel(None);
    (ProgressObserver(Arc::new(TaskLink { progress: tx })), rx)
}
