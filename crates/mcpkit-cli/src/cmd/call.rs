//! `mcpkit call`: call one tool, its arguments typed by the tool's input schema, and print the
//! result readably (see [`crate::render`]) or as raw JSON.

use mcpkit::client::tasks::{task_progress, ToolOutcome};
use mcpkit::client::{CallOptions, ServerNotification};
use mcpkit::Client;
use serde_json::{Map, Value};

use std::sync::{Arc, Mutex};

use super::interrupt::{connect_or_interrupt, run_stop_then_close, Interrupt, INTERRUPTED};
use super::Globals;
use crate::args::json_object;
use crate::render::{print_json, print_text, render_result, Saver};
use crate::target::{one_line, Failure, TargetArgs};
use crate::terminal;

/// Call a tool: `mcpkit call echo message=hi`. Values are typed by the tool's input schema
/// and checked before the call. Exit code 0 on success, 1 when the tool reports an error
/// (isError), 2 on usage or protocol errors, 130 after Ctrl-C (which cancels the call and
/// ends the session).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The tool.
    tool: String,
    /// Arguments as key=value (numbers, booleans, arrays and objects as JSON).
    #[arg(value_name = "KEY=VALUE")]
    pairs: Vec<String>,
    /// Arguments as a JSON object (key=value pairs override its members).
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// Print the raw JSON result.
    #[arg(long)]
    json: bool,
    /// Run the tool as a task (the Tasks extension, io.modelcontextprotocol/tasks): the task id
    /// goes to stderr, its progress to the progress bar, and its result is printed when it ends.
    #[arg(long)]
    task: bool,
    /// Print the trace id of the call and its span tree (each span's start and duration) on
    /// stderr, to see where a slow call spent its time.
    #[arg(long)]
    trace: bool,
    /// Save images, audio and binary resources here (default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// `--trace`.
    pub fn print_trace(&self) -> bool {
        self.trace
    }

    /// Connect (answering the server's sampling and elicitation requests, see
    /// [`crate::interact`]), call the tool, print the result, disconnect. Ctrl-C cancels the
    /// call and disconnects (exit code 130, see [`super::interrupt`]).
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let base = self.args.as_deref().map(json_object).transpose()?.unwrap_or_default();
        let t = self.target.resolve()?;
        let bar = progress_bar();
        let builder = crate::interact::install(
            Client::builder().name("mcpkit-call", env!("CARGO_PKG_VERSION")),
            crate::interact::interactive(),
            bar.clone(),
        );
        let mut interrupt = Interrupt::listen();
        let connecting = t.connect(builder, globals.connect_options(&self.target));
        let client = match connect_or_interrupt(&mut interrupt, connecting).await {
            Ok(c) => c,
            Err(Some(failure)) => return Err(failure),
            Err(None) => return Ok(INTERRUPTED),
        };
        // The task a `--task` call made, for Ctrl-C to cancel (`tasks/cancel`): dropping the
        // call stops waiting for the task, not the task.
        let task = RunningTask::default();
        let stop = || {
            let id = task
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()?;
            let client = client.clone();
            Some(async move {
                let shown = terminal::err(&id);
                match client.cancel_task(&id).await {
                    Ok(()) => eprintln!("mcpkit call: task {shown} cancelled (tasks/cancel)"),
                    Err(e) => eprintln!(
                        "mcpkit call: task {shown} could not be cancelled: {}",
                        terminal::err(&one_line(&e.to_string()))
                    ),
                }
            })
        };
        let work = self.call(&client, base, &bar, &task);
        let outcome = run_stop_then_close("call", &client, &mut interrupt, work, stop).await;
        bar.finish_and_clear();
        outcome
    }

    /// Look up the tool, type and check the arguments, call it, print the result. Exit code 0, or
    /// 1 when the tool reported an error.
    async fn call(
        &self,
        client: &Client,
        base: Map<String, Value>,
        bar: &indicatif::ProgressBar,
        task: &RunningTask,
    ) -> Result<u8, Failure> {
        let tools = match client.list_all_tools().await {
            Ok(tools) => tools,
            // A server without the capability may still answer; when it does not, say what it
            // declared rather than pass on its -32601.
            Err(_) if client.server_capabilities().tools.is_none() => {
                return Err(Failure::usage(format!(
                    "the server declares no tools (no `tools` capability), so there is no {:?} to call; see `mcpkit inspect`",
                    self.tool
                )))
            }
            Err(e) => return Err(e.into()),
        };
        let Some(tool) = tools.iter().find(|t| t.name == self.tool) else {
            let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            names.sort_unstable();
            return Err(Failure::usage(format!(
                "the server has no tool {:?} (it has: {}); see `mcpkit inspect`",
                self.tool,
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        };
        let what = format!("tool {:?}", tool.name);
        let args = crate::args::typed_arguments(&self.pairs, base, &tool.input_schema, &what)?;
        crate::args::validate(&args, &tool.input_schema, &what)?;

        let (ptx, mut prx) = tokio::sync::mpsc::unbounded_channel::<mcpkit::types::schema::ProgressParams>();
        let progress_bar = bar.clone();
        let progress = tokio::spawn(async move {
            let mut shown = false;
            while let Some(p) = prx.recv().await {
                // The bar is drawn only on a terminal: the message is shown escaped (and the
                // note that says so, if it comes now, before the bar is drawn).
                let message = p.message.map(|m| terminal::err(&m).into_owned());
                if !shown && super::stderr_is_terminal() {
                    progress_bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    shown = true;
                }
                if let Some(total) = p.total {
                    progress_bar.set_length(total.max(0.0) as u64);
                }
                progress_bar.set_position(p.progress.max(0.0) as u64);
                if let Some(m) = message {
                    progress_bar.set_message(m);
                }
            }
        });
        let logs = forward_logs(client);
        let options = CallOptions {
            timeout: Some(self.target.timeout),
            reset_timeout_on_progress: true,
            progress: Some(ptx),
        };
        let outcome = if self.task {
            call_as_task(client, &tool.name, Value::Object(args), options, bar, task).await
        } else {
            client.call_tool_with(&tool.name, Value::Object(args), options).await
        };
        progress.abort();
        logs.abort();
        bar.finish_and_clear();
        let result = outcome.map_err(|e| Failure::usage(format!("{what}: {}", one_line(&e.to_string()))))?;
        if self.json {
            print_json(&result);
        } else {
            let mut saver = Saver::new(self.out.clone(), &tool.name);
            print_text(&render_result(&result, &mut saver));
        }
        if result.is_error == Some(true) {
            eprintln!("mcpkit call: {what} reported an error (isError)");
            return Ok(1);
        }
        Ok(0)
    }
}

/// The task a call is waiting for, while it waits.
#[derive(Default, Clone)]
struct RunningTask(Arc<Mutex<Option<String>>>);

impl RunningTask {
    fn set(&self, id: Option<String>) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = id;
    }
}

/// Call a tool as a task and wait for it, the bar following the task's progress; `running`
/// names the task while it is waited for.
async fn call_as_task(
    client: &Client,
    tool: &str,
    args: Value,
    options: CallOptions,
    bar: &indicatif::ProgressBar,
    running: &RunningTask,
) -> mcpkit::Result<mcpkit::types::schema::CallToolResult> {
    let handle = match client.call_tool_as_task(tool, args, options).await? {
        ToolOutcome::Task(handle) => handle,
        ToolOutcome::Result(r) => {
            eprintln!("mcpkit call: the server answered at once (no task)");
            return Ok(r);
        }
        other => return Err(mcpkit::Error::InvalidResponse(format!("unexpected answer {other:?}"))),
    };
    let id = handle.task.task_id.clone();
    eprintln!("mcpkit call: task {} ({:?})", terminal::err(&id), handle.task.status);
    running.set(Some(id.clone()));
    let bar = bar.clone();
    let mut shown = false;
    let outcome = client
        .wait_task(&id, move |task| {
            let progress = task_progress(task);
            if progress.is_some() && !shown && super::stderr_is_terminal() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                shown = true;
            }
            if let Some(p) = progress {
                if let Some(total) = p.total {
                    bar.set_length(total.max(0.0) as u64);
                }
                bar.set_position(p.progress.max(0.0) as u64);
            }
            if let Some(m) = &task.task.task.status_message {
                bar.set_message(terminal::err(m).into_owned());
            }
        })
        .await;
    running.set(None);
    outcome
}

/// Print the server's log messages on stderr while a request runs.
fn forward_logs(client: &Client) -> tokio::task::JoinHandle<()> {
    let mut rx = client.notifications();
    tokio::spawn(async move {
        while let Ok(n) = rx.recv().await {
            if let ServerNotification::Log(m) = n {
                let level = serde_json::to_value(m.level)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let text = match &m.data {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let line = match &m.logger {
                    Some(l) => format!("[server {level} {l}] {text}"),
                    None => format!("[server {level}] {text}"),
                };
                eprintln!("{}", terminal::err(&line));
            }
        }
    })
}

/// A progress bar for a call: hidden until the server reports progress, and drawn only when
/// stderr is a terminal.
fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::hidden();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    bar
}
