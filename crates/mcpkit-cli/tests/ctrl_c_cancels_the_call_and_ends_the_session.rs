//! Ctrl-C (SIGINT) during `mcpkit call`: the request in flight is cancelled with
//! `notifications/cancelled` naming its id, the connection is closed (over HTTP: `DELETE` of the
//! session, after the cancellation), and mcpkit exits with 130. Real processes: `mcpkit call`
//! against an HTTP server in this test that records every request it gets, and against a stdio
//! server written in sh that records what it reads.
#![cfg(unix)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::Response;
use mcpkit::server::http::HttpServer;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::Server;
use serde_json::Value;
use tokio::sync::mpsc;

/// What the HTTP server was sent, in order: `("POST", body)` or `("DELETE", session id)`.
type Log = Arc<Mutex<Vec<(String, String)>>>;

async fn record(State(log): State<Log>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    let what = match parts.method.as_str() {
        "DELETE" => parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned(),
        _ => String::from_utf8_lossy(&bytes).into_owned(),
    };
    log.lock().unwrap().push((parts.method.to_string(), what));
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// `block`: tells `started` it runs, then waits forever; `cancelled` hears when its
/// cancellation fires (the engine drops a cancelled handler, so a task beside it listens).
fn blocking_server(started: mpsc::UnboundedSender<()>, cancelled: mpsc::UnboundedSender<()>) -> Server {
    Server::builder()
        .name("blocking", "1.0.0")
        .tool(ToolDef::new("block", move |cx: RequestContext| {
            let (started, cancelled) = (started.clone(), cancelled.clone());
            let token = cx.cancellation().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                let _ = cancelled.send(());
            });
            async move {
                let _ = started.send(());
                std::future::pending::<()>().await;
                "never"
            }
        }))
        .build()
}

fn sigint(child: &tokio::process::Child) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
}

async fn exit_code(child: &mut tokio::process::Child) -> Option<i32> {
    tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("mcpkit call did not exit after Ctrl-C")
        .unwrap()
        .code()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_an_http_call_cancels_the_request_then_deletes_the_session_and_exits_130() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (cancelled_tx, mut cancelled) = mpsc::unbounded_channel();
    let log: Log = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http =
        HttpServer::new(blocking_server(started_tx, cancelled_tx)).layer(from_fn_with_state(log.clone(), record));
    tokio::spawn(http.serve(listener));

    let mut call = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .env_remove("RUST_LOG")
        .args(["call", "block", "--server", &url])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), started.recv())
        .await
        .expect("the tool never started");
    sigint(&call);
    assert_eq!(exit_code(&mut call).await, Some(130));
    let was_cancelled = tokio::time::timeout(Duration::from_secs(5), cancelled.recv()).await;
    let log = log.lock().unwrap().clone();
    assert!(was_cancelled.is_ok(), "the tool was never cancelled: {log:#?}");
    let call_id = log
        .iter()
        .map(|(_, body)| json(body))
        .find(|m| m["method"] == "tools/call")
        .map(|m| m["id"].clone())
        .expect("a tools/call POST");
    let cancel_at = log
        .iter()
        .position(|(method, body)| {
            let m = json(body);
            method == "POST" && m["method"] == "notifications/cancelled" && m["params"]["requestId"] == call_id
        })
        .unwrap_or_else(|| panic!("no notifications/cancelled for request {call_id}: {log:#?}"));
    let delete_at = log
        .iter()
        .position(|(method, session)| method == "DELETE" && !session.is_empty())
        .unwrap_or_else(|| panic!("no DELETE of the session: {log:#?}"));
    assert!(
        cancel_at < delete_at,
        "the DELETE came before the cancellation: {log:#?}"
    );
}

/// A stdio server in sh: answers the handshake and tools/list (one tool, `block`), never
/// answers tools/call, and appends to `$LOG` "called", then every later line it reads, then
/// "eof" when its stdin closes.
const SH_SERVER: &str = r#"
id() { echo "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
read -r l; echo '{"jsonrpc":"2.0","id":'"$(id "$l")"',"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"0"}}}'
read -r l
read -r l; echo '{"jsonrpc":"2.0","id":'"$(id "$l")"',"result":{"tools":[{"name":"block","inputSchema":{"type":"object"}}]}}'
read -r l; echo "called $l" >> "$LOG"
while read -r l; do echo "$l" >> "$LOG"; done
echo eof >> "$LOG"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_a_stdio_call_cancels_the_request_then_closes_the_server_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut call = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .env_remove("RUST_LOG")
        .env("LOG", &log)
        .args(["call", "block", "--", "sh", "-c", SH_SERVER])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !read().contains("called") {
        assert!(tokio::time::Instant::now() < deadline, "the tool was never called");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sigint(&call);
    assert_eq!(exit_code(&mut call).await, Some(130));

    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !read().contains("eof") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server's stdin was never closed: {}",
            read()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let text = read();
    let mut lines = text.lines();
    let called = json(lines.next().unwrap().trim_start_matches("called "));
    assert_eq!(called["method"], "tools/call", "{text}");
    let cancelled = json(lines.next().unwrap_or_default());
    assert_eq!(cancelled["method"], "notifications/cancelled", "{text}");
    assert_eq!(cancelled["params"]["requestId"], called["id"], "{text}");
    assert_eq!(lines.next(), Some("eof"), "{text}");
}
