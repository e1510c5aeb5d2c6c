//! Ctrl-C (SIGINT) during `mcpkit call --task`: the task the call made is stopped with
//! `tasks/cancel` naming it (dropping the wait would leave it running on the server), before the
//! client closes, and mcpkit exits with 130. Real processes: `mcpkit call --task` against an
//! HTTP server in this test that records every request it gets, in both eras.
#![cfg(unix)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::Response;
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::http::HttpServer;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::types::schema::TaskSupport;
use mcpkit::Server;
use serde_json::Value;
use tokio::sync::mpsc;

/// What the HTTP server was sent, in order: `(HTTP method, body)`.
type Log = Arc<Mutex<Vec<(String, String)>>>;

async fn record(State(log): State<Log>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    log.lock()
        .unwrap()
        .push((parts.method.to_string(), String::from_utf8_lossy(&bytes).into_owned()));
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// `block`, a task-only tool: tells `started` it runs, then waits until its task is stopped,
/// which `stopped` hears.
fn server(started: mpsc::UnboundedSender<()>, stopped: mpsc::UnboundedSender<()>) -> Server {
    Server::builder()
        .name("blocking-tasks", "1.0.0")
        .extension(Tasks::new(TasksConfig::default()))
        .tool(
            ToolDef::new("block", move |cx: RequestContext| {
                let (started, stopped) = (started.clone(), stopped.clone());
                let token = cx.cancellation().clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    let _ = stopped.send(());
                });
                async move {
                    let _ = started.send(());
                    std::future::pending::<()>().await;
                    "never"
                }
            })
            .task_support(TaskSupport::Required),
        )
        .build()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

async fn interrupt_a_task_call(protocol: &str) {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (stopped_tx, mut stopped) = mpsc::unbounded_channel();
    let log: Log = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = HttpServer::new(server(started_tx, stopped_tx)).layer(from_fn_with_state(log.clone(), record));
    tokio::spawn(http.serve(listener));

    let call = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .env_remove("RUST_LOG")
        .args(["call", "block", "--task", "--protocol", protocol, "--server", &url])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), started.recv())
        .await
        .expect("the task never started");
    // The call has its handle (the task runs) and waits; give it a moment to be waiting.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !log
        .lock()
        .unwrap()
        .iter()
        .any(|(_, b)| json(b)["method"] == "tasks/get")
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the call never looked at its task"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(call.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::time::timeout(Duration::from_secs(20), call.wait_with_output())
        .await
        .expect("mcpkit call --task did not exit after Ctrl-C")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{stderr}");

    let was_stopped = tokio::time::timeout(Duration::from_secs(5), stopped.recv()).await;
    let log = log.lock().unwrap().clone();
    assert!(was_stopped.is_ok(), "the task was never stopped: {stderr}\n{log:#?}");
    let task_id = log
        .iter()
        .map(|(_, body)| json(body))
        .find(|m| m["method"] == "tasks/get")
        .map(|m| m["params"]["taskId"].clone())
        .unwrap();
    let cancel = log
        .iter()
        .position(|(_, b)| json(b)["method"] == "tasks/cancel" && json(b)["params"]["taskId"] == task_id);
    assert!(cancel.is_some(), "no tasks/cancel of {task_id}: {stderr}\n{log:#?}");
    assert!(
        stderr.contains(&format!("task {} cancelled", task_id.as_str().unwrap())),
        "{stderr}"
    );
    if let Some(delete) = log.iter().position(|(method, _)| method == "DELETE") {
        assert!(cancel < Some(delete), "the session ended before the cancel: {log:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_the_task_of_a_handshake_call_then_exits_130() {
    interrupt_a_task_call("handshake").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_the_task_of_a_stateless_call_then_exits_130() {
    interrupt_a_task_call("2026-07-28").await;
}
