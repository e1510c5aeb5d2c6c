//! What the extension adds to each era's method table: `tasks/get`, `tasks/update`,
//! `tasks/cancel`, and a `tools/call` that answers with a task handle when the tool and the
//! client allow it (SEP-2663). `tasks/result` and `tasks/list` are not part of the extension
//! and stay not found.

use std::future::ready;
use std::sync::Arc;

use mcpkit_types::ext::tasks::{
    CancelTask, CreateTaskResult, GetTask, GetTaskResult, TaskAck, TaskParams, UpdateTask, UpdateTaskParams, ID,
    RESULT_TASK,
};
use mcpkit_types::method::{CallTool, Method, SubscriptionsListen};
use mcpkit_types::schema::{CallToolParams, JsonObject, RequestMeta, TaskStatus, TaskSupport, RESULT_COMPLETE};
use mcpkit_types::{ErrorCode, ErrorObject};
use serde_json::{json, Value};

use super::runner::{self, Parts};
use super::{negotiated, negotiated_in, new_id, owner_of, plausible_id, Runtime, META_PROGRESS};
use crate::engine::{BoxFuture, HandlerResult};
use crate::server::backend::tasks::{
    now_ms, Applied, Lookup, TaskChange, TaskOwner, TaskRecord, TaskRequest, TaskStoreError,
};
use crate::server::call::finish_for;
use crate::server::extensions::MethodTable;
use crate::server::handshake;
use crate::server::middleware::{Middleware, Next};
use crate::server::{Call, Item};
use crate::wire::{member_str, params, to_raw};

/// Add the extension to one era's table, through the public extension API.
pub(crate) fn register(table: &mut MethodTable<'_>, runtime: &Arc<Runtime>) {
    let (g, u, c) = (runtime.clone(), runtime.clone(), runtime.clone());
    table
        .request::<GetTask, _, _>(move |call, p| get(call, p, g.clone()))
        .request::<UpdateTask, _, _>(move |call, p| update(call, p, u.clone()))
        .request::<CancelTask, _, _>(move |call, p| cancel(call, p, c.clone()))
        .wrap::<CallTool>(TaskCalls(runtime.clone()))
        .wrap::<SubscriptionsListen>(super::notify::TaskListens(runtime.clone()));
}

/// The layer around `tools/call` (see [`call_tool`]).
struct TaskCalls(Arc<Runtime>);

impl Middleware for TaskCalls {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        call_tool(call, next, &self.0)
    }
}

/// SEP-2663 "Capability Negotiation" and SEP-2575 "Missing Required Capabilities": -32021
/// naming the extension.
pub(super) fn not_negotiated(what: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("{what} needs the {ID} extension, which the client did not declare"),
    )
    .with_data(json!({ "requiredCapabilities": { "extensions": { ID: {} } } }))
}

/// A `tasks/*` request is served only to a client that declared the extension (SEP-2663
/// "Capability Negotiation"; SEP-2575 "Missing Required Capabilities").
fn admit(call: &Call, meta: Option<&RequestMeta>, method: &str) -> Result<(), ErrorObject> {
    if negotiated_in(call, meta) {
        Ok(())
    } else {
        Err(not_negotiated(method))
    }
}

/// Who asks about task `id`, once the request is admitted (the extension negotiated) and `id`
/// could name a task (one that cannot is unknown without asking the store).
fn caller(call: &Call, meta: Option<&RequestMeta>, method: &str, id: &str) -> Result<TaskOwner, ErrorObject> {
    admit(call, meta, method)?;
    if !plausible_id(id) {
        return Err(unknown(id));
    }
    Ok(owner_of(call))
}

fn unknown(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Failed to retrieve task: Task not found: {id}"))
        .with_data(json!({ "taskId": id }))
}

fn expired(id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Failed to retrieve task: Task has expired: {id}"))
        .with_data(json!({ "taskId": id }))
}

fn store_error(e: TaskStoreError) -> ErrorObject {
    ErrorObject::internal(e.to_string())
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
fn ack(call: &Call) -> HandlerResult {
    let raw = to_raw(&TaskAck {
        result_type: Some(RESULT_COMPLETE.to_owned()),
        meta: None,
    })?;
    call.finish(raw, None)
}

/// `tasks/get`: the task with what its status carries (SEP-2663 "Task Polling").
async fn get(call: Call, p: TaskParams, tasks: Arc<Runtime>) -> HandlerResult {
    let owner = caller(&call, p.meta.as_ref(), GetTask::NAME, &p.task_id)?;
    let record = match tasks.config.store.get(&p.task_id, &owner).await.map_err(store_error)? {
        Lookup::Found(r) => r,
        Lookup::Missing => return Err(unknown(&p.task_id)),
        Lookup::Expired => return Err(expired(&p.task_id)),
    };
    let meta = record.progress.as_ref().map(|progress| {
        let mut m = JsonObject::new();
        m.insert(META_PROGRESS.to_owned(), json!(progress));
        m
    });
    let raw = to_raw(&GetTaskResult {
        result_type: Some(RESULT_COMPLETE.to_owned()),
        task: record.detailed(),
        meta,
    })?;
    call.finish(raw, None)
}

/// `tasks/update`: answers to the task's input requests. Answers to keys that are not pending
/// are ignored; once every pending key is answered the task runs again (SEP-2663 "Task Input
/// Requests").
async fn update(call: Call, p: UpdateTaskParams, tasks: Arc<Runtime>) -> HandlerResult {
    let owner = caller(&call, p.meta.as_ref(), UpdateTask::NAME, &p.task_id)?;
    let store = &tasks.config.store;
    match store
        .update(&p.task_id, Some(&owner), TaskChange::Answer(p.input_responses))
        .await
        .map_err(store_error)?
    {
        Applied::Missing => return Err(unknown(&p.task_id)),
        Applied::Expired => return Err(expired(&p.task_id)),
        Applied::Unchanged(_) => {}
        Applied::Changed(record) => {
            tasks.changed(&record);
            if record.status == TaskStatus::Working {
                let parts = tasks.running.parts(&record.id).unwrap_or_else(|| parts_of(&call));
                runner::spawn(tasks.clone(), call.server.clone(), parts, *record);
            }
        }
    }
    ack(&call)
}

/// `tasks/cancel`: stop the task. A task that already ended stays as it ended, and the answer
/// is the same acknowledgement (SEP-2663 "Task Cancellation").
async fn cancel(call: Call, p: TaskParams, tasks: Arc<Runtime>) -> HandlerResult {
    let owner = caller(&call, p.meta.as_ref(), CancelTask::NAME, &p.task_id)?;
    match tasks
        .config
        .store
        .update(&p.task_id, Some(&owner), TaskChange::Cancel)
        .await
        .map_err(store_error)?
    {
        Applied::Missing => return Err(unknown(&p.task_id)),
        Applied::Expired => return Err(expired(&p.task_id)),
        Applied::Unchanged(_) => {}
        Applied::Changed(record) => {
            tasks.changed(&record);
            tasks.running.cancel(&p.task_id);
        }
    }
    ack(&call)
}

fn parts_of(call: &Call) -> Parts {
    Parts {
        session: call.session.clone(),
        peer: call.peer.clone(),
        extensions: call.extensions.clone(),
        request_id: call.id.clone(),
    }
}

/// `tools/call` with the extension: a task-capable tool called by a client that declared the
/// extension becomes a task; a task-required tool called by one that did not is refused
/// (-32021); everything else is the plain `tools/call`.
fn call_tool(call: Call, plain: Next, tasks: &Arc<Runtime>) -> BoxFuture<HandlerResult> {
    {
        if handshake::admit(&call.session, CallTool::NAME).is_err() {
            return plain.run(call);
        }
        // Read up to the name only: the plain call decodes the params once more anyway.
        let Some(name) = member_str(call.params.as_deref(), "name") else {
            return plain.run(call);
        };
        let snap = call.snapshot();
        let def = snap.tool_index.get(name.as_ref()).map(|&i| &snap.catalog.tools[i]);
        let support = def.and_then(|d| d.tool.execution.as_ref()).and_then(|e| e.task_support);
        let at_detach = def.is_some_and(|d| d.task_at_detach);
        // A tool this caller may not use is refused by the plain call, as without the extension.
        let usable = |d: &crate::server::ToolDef| {
            call.check_access(Item::Tool(&d.tool), &d.guard, || ErrorObject::internal(""))
                .is_ok()
        };
        match support {
            Some(TaskSupport::Optional | TaskSupport::Required) if def.is_some_and(|d| !usable(d)) => {
                drop((name, snap));
                plain.run(call)
            }
            Some(TaskSupport::Optional | TaskSupport::Required) if negotiated(&call) => {
                drop((name, snap));
                if at_detach {
                    at_detach_call(call, plain, tasks.clone())
                } else {
                    Box::pin(create(call, tasks.clone()))
                }
            }
            Some(TaskSupport::Required) => Box::pin(ready(Err(not_negotiated(&format!(
                "Tool {name:?} runs only as a task, and calling it"
            ))))),
            _ => {
                drop((name, snap));
                plain.run(call)
            }
        }
    }
}

/// A call of a tool that becomes a task when its handler detaches: the plain `tools/call` runs
/// (input rounds and all) until then; at that point the task is made and its handle is the
/// answer, and the rest of the plain call runs as the task.
fn at_detach_call(mut call: Call, plain: Next, tasks: Arc<Runtime>) -> BoxFuture<HandlerResult> {
    let record = params::<CallToolParams>(call.params.as_deref()).and_then(|p| new_record(&call, &tasks, &p));
    let record = match record {
        Ok(r) => r,
        Err(_) => return plain.run(call),
    };
    // The parts the task keeps are taken before the signal and the progress link go in: they
    // must not keep the link alive after the handler is done.
    let (era, server, parts) = (call.era, call.server.clone(), parts_of(&call));
    let (detach, detached) = runner::Detach::new();
    let (link, progress) = runner::link();
    call.extensions.insert(detach);
    call.extensions.insert(link);
    let mut rest = plain.run(call);
    Box::pin(async move {
        tokio::select! {
            biased;
            Ok(()) = detached => {
                tasks.config.store.create(record.clone()).await.map_err(store_error)?;
                let handle = handle_of(&record)?;
                runner::spawn_rest(tasks, parts, record, progress, rest);
                finish_for(era, &server, handle, None)
            }
            r = &mut rest => r,
        }
    })
}

/// The handle of a new task.
fn handle_of(record: &TaskRecord) -> HandlerResult {
    to_raw(&CreateTaskResult {
        result_type: RESULT_TASK.to_owned(),
        task: record.task(),
        meta: None,
    })
}

/// A new task for the call `p`, owned by its caller.
fn new_record(call: &Call, tasks: &Runtime, p: &CallToolParams) -> Result<TaskRecord, ErrorObject> {
    let id = new_id().ok_or_else(|| ErrorObject::internal("no randomness for a task id"))?;
    let now = now_ms();
    let ttl = u64::try_from(tasks.config.ttl.as_millis()).unwrap_or(u64::MAX);
    let arguments = match p.arguments.as_deref() {
        Some(a) => {
            Some(serde_json::from_str::<Value>(a.get()).map_err(|e| ErrorObject::invalid_params(e.to_string()))?)
        }
        None => None,
    };
    Ok(TaskRecord {
        id,
        owner: owner_of(call),
        client: call
            .extensions
            .get::<crate::server::client_state::QuotaKey>()
            .map(|k| k.0.clone()),
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        expires_ms: Some(now.saturating_add(ttl)),
        poll_interval_ms: u64::try_from(tasks.config.poll_interval.as_millis()).unwrap_or(1000),
        progress: None,
        pending: Default::default(),
        answers: JsonObject::new(),
        handler_state: None,
        outcome: None,
        request: TaskRequest {
            tool: p.name.clone(),
            arguments,
            meta: p.meta.as_ref().and_then(|m| serde_json::to_value(m).ok()),
        },
    })
}

/// Make the task, durably, start it, and answer with its handle (SEP-2663 "Task Creation").
async fn create(mut call: Call, tasks: Arc<Runtime>) -> HandlerResult {
    let p: CallToolParams = params(call.params.take().as_deref())?;
    if p.arguments.as_deref().is_some_and(|a| !a.get().starts_with('{')) {
        return Err(
            ErrorObject::invalid_params("Invalid params: `arguments` must be an object")
                .with_data(json!({ "path": "arguments" })),
        );
    }
    let snap = call.take_snapshot();
    let Some(def) = snap.tool_index.get(&p.name).map(|&i| &snap.catalog.tools[i]) else {
        return Err(ErrorObject::invalid_params(format!("Unknown tool: {}", p.name)));
    };
    if let Some(invalid) = def.check_arguments(p.arguments.as_deref()) {
        let raw = to_raw(&invalid.for_version(call.session.version()))?;
        return call.finish(raw, None);
    }
    let record = new_record(&call, &tasks, &p)?;
    tasks.config.store.create(record.clone()).await.map_err(store_error)?;
    let handle = handle_of(&record)?;
    runner::spawn(tasks, call.server.clone(), parts_of(&call), record);
    call.finish(handle, None)
}
