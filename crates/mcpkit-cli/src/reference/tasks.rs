//! The reference server's Tasks extension fixtures (`io.modelcontextprotocol/tasks`, SEP-2663):
//! the tools the conformance suite's `tasks-*` scenarios call, by the names and with the
//! behaviour they expect.

use std::sync::Arc;
use std::time::Duration;

use mcpkit::server::backend::TaskStore;
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::{Args, RequestContext, ServerBuilder, ToolDef};
use mcpkit::types::schema::{InputRequest, InputResponse, TaskSupport};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{field_text, one_field_form};

/// The server with the extension on and its fixtures; its tasks in `store` when given.
pub(super) fn with_tasks(builder: ServerBuilder, store: Option<Arc<dyn TaskStore>>) -> ServerBuilder {
    let mut config = TasksConfig::default().poll_interval(Duration::from_millis(200));
    if let Some(store) = store {
        config.store = store;
    }
    builder
        .extension(Tasks::new(config))
        .tool(greet())
        .tool(slow_compute())
        .tool(failing_job())
        .tool(protocol_error_job())
        .tool(confirm_delete())
        .tool(multi_input())
        .tool(test_tool_with_task())
}

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// `greet` → `Hello, {name}!`, never a task.
fn greet() -> ToolDef {
    ToolDef::new("greet", |Args(a): Args<GreetArgs>| async move {
        format!("Hello, {}!", a.name)
    })
    .description("Greets someone (never runs as a task)")
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in seconds.
    #[serde(default)]
    seconds: f64,
    /// A label to put in the result.
    #[serde(default)]
    label: Option<String>,
}

/// `slow_compute` → works for `seconds`, reporting progress every tenth of a second; a task
/// for clients that declare the extension.
fn slow_compute() -> ToolDef {
    ToolDef::new(
        "slow_compute",
        |cx: RequestContext, Args(a): Args<SlowArgs>| async move {
            let ticks = (a.seconds.max(0.0) * 10.0).round() as u64;
            for i in 0..ticks {
                let message = format!("step {} of {ticks}", i + 1);
                cx.progress(i as f64, Some(ticks as f64), Some(&message));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            cx.progress(ticks as f64, Some(ticks as f64), Some("done"));
            let label = a.label.unwrap_or_else(|| "slow_compute".into());
            format!("Computed {label} in {}s", a.seconds)
        },
    )
    .description("Works for `seconds` seconds with progress; runs as a task when it can")
    .task_support(TaskSupport::Optional)
}

/// `failing_job` → a tool execution error after about a second; runs only as a task.
fn failing_job() -> ToolDef {
    ToolDef::new("failing_job", || async {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        Err::<String, _>("the job failed, as it always does")
    })
    .description("Fails with a tool error after a second (runs only as a task)")
    .task_support(TaskSupport::Required)
}

/// `protocol_error_job` → the handler panics: the task fails with a JSON-RPC error.
fn protocol_error_job() -> ToolDef {
    ToolDef::new("protocol_error_job", || async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if std::hint::black_box(true) {
            panic!("protocol_error_job fails at the protocol level on purpose");
        }
        "unreachable"
    })
    .description("Fails with a protocol error (the task ends failed)")
    .task_support(TaskSupport::Optional)
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to delete.
    filename: String,
}

/// `confirm_delete` → asks for confirmation (one elicitation), then reports what it did.
fn confirm_delete() -> ToolDef {
    ToolDef::new(
        "confirm_delete",
        |cx: RequestContext, Args(a): Args<DeleteArgs>| async move {
            let answer = cx
                .elicit(one_field_form(&format!("Delete {}?", a.filename), "confirm", "boolean"))
                .await?;
            let confirmed = answer
                .content
                .as_ref()
                .and_then(|c| c.get("confirm"))
                .and_then(|v| v.as_bool());
            Ok::<_, mcpkit::Error>(if confirmed == Some(true) {
                format!("Deleted {}", a.filename)
            } else {
                format!("Kept {}", a.filename)
            })
        },
    )
    .description("Asks for confirmation, then deletes (pretends to)")
    .task_support(TaskSupport::Optional)
}

/// `multi_input` → asks two questions at once (two keys pending together).
fn multi_input() -> ToolDef {
    ToolDef::new("multi_input", |cx: RequestContext| async move {
        let answers = cx
            .inputs(vec![
                (
                    "name".to_owned(),
                    InputRequest::Elicit(one_field_form("Your name?", "name", "string")),
                ),
                (
                    "confirm".to_owned(),
                    InputRequest::Elicit(one_field_form("Go ahead?", "confirm", "boolean")),
                ),
            ])
            .await?;
        let name = match answers.first() {
            Some(InputResponse::Elicit(r)) => field_text(r, "name"),
            _ => "(no name)".into(),
        };
        Ok::<_, mcpkit::Error>(format!("Hello, {name}, both inputs received"))
    })
    .description("Asks two questions at once")
    .task_support(TaskSupport::Optional)
}

/// `test_tool_with_task` → asks for `user_name` first (an input round on the stateless wire),
/// then detaches: the answer is a task whose result greets that name.
fn test_tool_with_task() -> ToolDef {
    ToolDef::new("test_tool_with_task", |cx: RequestContext| async move {
        let answer = cx
            .input(
                Some("user_name"),
                one_field_form("What is your name?", "name", "string"),
            )
            .await?;
        cx.detach().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok::<_, mcpkit::Error>(format!("Hello, {}!", field_text(&answer, "name")))
    })
    .description("Gathers a name first, then runs as a task (runs only as a task)")
    .task_support(TaskSupport::Required)
    .task_at_detach()
}
