//! The MCP side of `mcpkit dev`: a client whose every frame is shown in Messages and whose
//! sampling and elicitation requests become the page's dialogs; tool calls with progress and
//! cancellation.

use std::sync::Arc;

use mcpkit::apps::host::AppBridge;
use mcpkit::client::tasks::{task_progress, ToolOutcome};
use mcpkit::client::{CallOptions, ConnectMode};
use mcpkit::transport::inspect::{inspect, Direction, Observed};
use mcpkit::types::schema::{
    CallToolResult, CreateMessageResult, ElicitAction, ElicitResult, JsonObject, ProgressParams,
};
use mcpkit::types::{ErrorCode, ErrorObject};
use mcpkit::Client;
use serde_json::{json, Value};

use super::hub::{timestamp, Hub};
use crate::target::{one_line, ConnectOptions, Failure, Target};

/// (Re)connect to `target` as the hub's options say: the old connection, if any, is closed
/// first; a failure is said in the page and on stderr. Whether it connected.
pub(super) async fn restart(target: &Target, hub: &Arc<Hub>) -> bool {
    if let Some(old) = hub.disconnected("reconnecting".to_owned()) {
        let _ = old.close().await;
    }
    match connect(target, hub.options(), hub).await {
        Ok(client) => {
            // The level the page chose holds for every connection.
            if let Some(level) = hub.log_level() {
                if let Err(e) = client.set_log_level(level).await {
                    hub.publish(json!({"kind": "note", "text": format!("logging/setLevel failed: {}", one_line(&e.to_string()))}));
                }
            }
            let peer = client.peer().clone();
            let (old, generation) = hub.connected(client);
            if let Some(old) = old {
                let _ = old.close().await;
            }
            // A server that exits (or a stream that ends) is said in the page at once, not at
            // the next call.
            let hub = hub.clone();
            tokio::spawn(async move {
                peer.closed().await;
                hub.lost(generation, "the server closed the connection (did it exit?)".to_owned());
            });
            true
        }
        Err(f) => {
            eprintln!("mcpkit dev: {}", crate::terminal::err(&one_line(&f.message)));
            hub.disconnected(f.message);
            false
        }
    }
}

/// The `--protocol` spelling of `mode`.
pub(super) fn mode_name(mode: ConnectMode) -> String {
    match mode {
        ConnectMode::Handshake => "handshake".to_owned(),
        ConnectMode::Auto => "auto".to_owned(),
        ConnectMode::Pinned(v) => v.to_string(),
        // A mode added later: named as its Debug form, which the page shows as is.
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Connect to `target`, the traffic shown to the page through `hub`.
async fn connect(target: &Target, options: ConnectOptions, hub: &Arc<Hub>) -> Result<Client, Failure> {
    let transport = target.open(options.timeout, options.oauth_port)?;
    let wire = hub.clone();
    let transport = inspect(transport, move |direction, observed| {
        let dir = match direction {
            Direction::Outgoing => "out",
            Direction::Incoming => "in",
        };
        let text = match observed {
            Observed::Message(m) => String::from_utf8_lossy(m).trim_end().to_owned(),
            Observed::Oversized(n) => format!("(a frame of {n} bytes, over the limit, dropped)"),
        };
        wire.publish(json!({"kind": "message", "dir": dir, "at": timestamp(), "text": text}));
    });
    let (sampling, elicitation) = (hub.clone(), hub.clone());
    // A host that renders MCP Apps views, offering the page's roots.
    let builder = Client::builder()
        .name("mcpkit-dev", env!("CARGO_PKG_VERSION"))
        .extension(mcpkit::apps::EXTENSION_ID, mcpkit::apps::settings())
        .roots(hub.roots())
        .on_sampling(move |p| {
            let hub = sampling.clone();
            async move {
                let params = serde_json::to_value(&p).unwrap_or(Value::Null);
                let answer = hub.ask("sampling/createMessage", params).await;
                match answer.as_ref().and_then(|a| a.get("text")).and_then(Value::as_str) {
                    Some(text) => Ok(CreateMessageResult::text("mcpkit-dev-user", text)),
                    None => Err(ErrorObject::new(
                        ErrorCode(-1),
                        "the user rejected the sampling request",
                    )),
                }
            }
        })
        .on_elicitation(move |p| {
            let hub = elicitation.clone();
            async move {
                let params = serde_json::to_value(&p).unwrap_or(Value::Null);
                match hub.ask("elicitation/create", params).await {
                    Some(answer) => serde_json::from_value::<ElicitResult>(answer)
                        .map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, format!("the page's answer: {e}"))),
                    None => {
                        let mut cancelled = ElicitResult::decline();
                        cancelled.action = ElicitAction::Cancel;
                        Ok(cancelled)
                    }
                }
            }
        });
    target.connect_over(builder, options, transport).await
}

/// What the page shows of the connection: server info, revision, capabilities, instructions,
/// and the lists.
pub(super) async fn describe(client: &Client, hub_roots: &[mcpkit::types::schema::Root]) -> Value {
    let init = client.initialize_result();
    let tools = list(
        client.list_all_tools().await,
        client.server_capabilities().tools.is_some(),
    );
    let resources = list(
        client.list_all_resources().await,
        client.server_capabilities().resources.is_some(),
    );
    let templates = list(
        client.list_all_resource_templates().await,
        client.server_capabilities().resources.is_some(),
    );
    let prompts = list(
        client.list_all_prompts().await,
        client.server_capabilities().prompts.is_some(),
    );
    let skills = match client.serves_skills() {
        true => list(client.list_all_skills().await, true),
        false => Value::Null,
    };
    json!({
        "connected": true,
        "skills": skills,
        "roots": hub_roots,
        "serverInfo": init.server_info,
        "protocolVersion": client.protocol_version().to_string(),
        "stateless": client.is_stateless(),
        "capabilities": client.server_capabilities(),
        "instructions": client.instructions(),
        "tools": tools,
        "resources": resources,
        "resourceTemplates": templates,
        "prompts": prompts,
    })
}

/// A list for the page: the items, or the error (only when the capability was declared: an
/// undeclared one is simply empty).
fn list<T: serde::Serialize>(r: mcpkit::Result<Vec<T>>, declared: bool) -> Value {
    match r {
        Ok(items) => json!({"items": items}),
        Err(e) if declared => json!({"items": [], "error": one_line(&e.to_string())}),
        Err(_) => json!({"items": []}),
    }
}

/// How the page asked for a call.
pub(super) struct CallPlan {
    /// The page's call id.
    pub(super) id: u64,
    /// The tool.
    pub(super) tool: String,
    /// Its arguments.
    pub(super) arguments: Value,
    /// Call it as a task (the Tasks extension): the server may answer with a task, which is
    /// then followed to its end.
    pub(super) as_task: bool,
    /// The view opened for it: sent the arguments, then the result.
    pub(super) view: Option<AppBridge>,
}

/// Call the tool for the page: progress (and a task's states) go to the page as events; the
/// result (or the error) is returned.
pub(super) async fn call_tool(hub: Arc<Hub>, client: Client, plan: CallPlan) -> Value {
    let CallPlan {
        id,
        tool,
        arguments,
        as_task,
        view,
    } = plan;
    let (ptx, mut prx) = tokio::sync::mpsc::unbounded_channel::<ProgressParams>();
    let progress_hub = hub.clone();
    let progress = tokio::spawn(async move {
        while let Some(p) = prx.recv().await {
            progress_hub.publish(json!({
                "kind": "progress",
                "call": id,
                "progress": p.progress,
                "total": p.total,
                "message": p.message,
            }));
        }
    });
    if let (Some(view), Value::Object(args)) = (&view, &arguments) {
        view.send_tool_input(args.clone().into_iter().collect::<JsonObject>());
    }
    // The page has "Cancel", and a call may wait on a dialog the user is still filling in: no
    // short timeout.
    let options = CallOptions {
        timeout: Some(std::time::Duration::from_secs(3600)),
        reset_timeout_on_progress: true,
        progress: Some(ptx),
    };
    let outcome = match as_task {
        true => call_as_task(&hub, &client, id, &tool, arguments, options).await,
        false => client.call_tool_with(&tool, arguments, options).await,
    };
    progress.abort();
    match outcome {
        Ok(result) => {
            if let Some(view) = &view {
                view.send_tool_result(&result);
            }
            json!({"result": result})
        }
        Err(e) => {
            if let Some(view) = &view {
                view.send_tool_cancelled(Some(one_line(&e.to_string())));
            }
            json!({"error": one_line(&e.to_string())})
        }
    }
}

/// Call `tool` as a task and follow the task to its end, each state it is seen in sent to the
/// page (`kind: task`); the server may also answer at once.
async fn call_as_task(
    hub: &Arc<Hub>,
    client: &Client,
    call: u64,
    tool: &str,
    arguments: Value,
    options: CallOptions,
) -> mcpkit::Result<CallToolResult> {
    let handle = match client.call_tool_as_task(tool, arguments, options).await? {
        ToolOutcome::Task(handle) => handle,
        ToolOutcome::Result(r) => {
            hub.publish(json!({"kind": "note", "text": format!("{tool}: the server answered at once (no task)")}));
            return Ok(r);
        }
        other => return Err(mcpkit::Error::InvalidResponse(format!("unexpected answer {other:?}"))),
    };
    let task_id = handle.task.task_id.clone();
    hub.publish(json!({"kind": "task", "call": call, "tool": tool, "task": handle.task}));
    hub.start_task(call, task_id.clone());
    let (seen, named) = (hub.clone(), tool.to_owned());
    let outcome = client
        .wait_task(&task_id, move |t| {
            seen.publish(json!({
                "kind": "task",
                "call": call,
                "tool": named,
                "task": t.task.task,
                "progress": task_progress(t),
            }));
        })
        .await;
    let end = match &outcome {
        Ok(_) => json!({"kind": "task-end", "call": call, "task": task_id, "status": "completed"}),
        Err(e) => json!({"kind": "task-end", "call": call, "task": task_id, "error": one_line(&e.to_string())}),
    };
    hub.publish(end);
    hub.end_task(call);
    outcome
}
