//! The real `mcpkit` binary: `mcpkit serve` speaks MCP over stdio to a client that spawned it,
//! writes nothing but JSON-RPC lines on stdout, and exits 0 when its stdin closes;
//! `mcpkit inspect` lists what the reference server offers, as a table or as JSON.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::{within, REFERENCE_TOOL_NAMES};
use mcpkit::transport::child::ChildTransport;
use mcpkit::Client;
use mcpkit_cli::reference;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

fn initialize_line(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "stdio-test", "version": "0"}
    }})
    .to_string()
}

/// `mcpkit <args>` with `env` and all three pipes, killed on drop.
fn spawn(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Child {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn mcpkit")
}

/// Run `mcpkit <args>` with `input` on stdin (then closed); its exit status, stdout and stderr.
async fn run(args: &[&str], input: &str, env: &[(&str, &str)]) -> (std::process::ExitStatus, String, String) {
    let mut child = spawn(args, env);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
    drop(stdin);
    let out = within(&format!("mcpkit {args:?} to exit"), child.wait_with_output())
        .await
        .unwrap();
    (
        out.status,
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every stdout line is one JSON-RPC message.
fn json_rpc_lines(stdout: &str) -> Vec<Value> {
    assert!(
        stdout.is_empty() || stdout.ends_with('\n'),
        "stdout does not end with a newline"
    );
    stdout
        .lines()
        .map(|line| {
            let v: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout has a non-JSON line ({e}): {line:?}"));
            assert_eq!(v["jsonrpc"], "2.0", "stdout has a non-JSON-RPC line: {line}");
            v
        })
        .collect()
}

#[tokio::test]
async fn a_client_talks_to_mcpkit_serve_over_stdio() {
    let transport = ChildTransport::spawn(BIN, ["serve"]).expect("spawn mcpkit serve");
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    assert_eq!(client.server_info().name, reference::SERVER_NAME);

    let tools = within("tools", client.list_all_tools()).await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, REFERENCE_TOOL_NAMES);

    let r = within("echo", client.call_tool("echo", json!({"message": "over stdio"})))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.content).unwrap(),
        json!([{"type": "text", "text": "over stdio"}])
    );

    let r = within("read", client.read_resource("test://static-text"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.contents).unwrap()[0]["text"],
        reference::STATIC_TEXT
    );

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..50 {
        let c = client.clone();
        calls.spawn(async move {
            let message = format!("message {i}");
            let r = c.call_tool("echo", json!({"message": message})).await.unwrap();
            (message, serde_json::to_value(&r.content).unwrap())
        });
    }
    let mut answered = 0;
    while let Some(done) = within("50 concurrent echoes", calls.join_next()).await {
        let (message, content) = done.unwrap();
        assert_eq!(
            content,
            json!([{"type": "text", "text": message}]),
            "answers got mixed up"
        );
        answered += 1;
    }
    assert_eq!(answered, 50);

    within("close", client.close()).await.expect("a clean shutdown");
}

/// Closing the client closes the child's stdin, and `mcpkit serve` exits on its own at once:
/// the shutdown never has to wait out the grace period and fall back to SIGTERM.
#[tokio::test]
async fn closing_the_client_lets_mcpkit_serve_exit_by_itself() {
    let transport = ChildTransport::spawn(BIN, ["serve"])
        .expect("spawn mcpkit serve")
        .shutdown_grace(Duration::from_secs(30));
    let pid = transport.id().expect("a pid");
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    within("ping", client.ping()).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(5), client.close()).await {
        Ok(r) => r.expect("a clean shutdown"),
        Err(_) => panic!(
            "closing took more than 5 s: mcpkit serve (pid {pid}) never saw end of file on its stdin, \
             so the shutdown waits for the grace period and then signals it"
        ),
    }
}

/// The shutdown the spec describes for stdio: the client closes the server's stdin and the
/// server exits with status 0.
#[tokio::test]
async fn mcpkit_serve_exits_0_when_stdin_closes() {
    let mut child = spawn(&["serve"], &[]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdin
        .write_all(format!("{}\n", initialize_line(1)).as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let mut line = String::new();
    within("the initialize reply", stdout.read_line(&mut line))
        .await
        .unwrap();
    let reply: Value = serde_json::from_str(&line).expect("a JSON reply");
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(reply["result"]["serverInfo"]["name"], reference::SERVER_NAME);
    drop(stdin);
    let status = within("mcpkit serve to exit", child.wait()).await.unwrap();
    assert!(status.success(), "mcpkit serve exited with {status}");
    let mut rest = String::new();
    within(
        "stdout to close",
        tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut rest),
    )
    .await
    .unwrap();
    assert_eq!(rest, "", "mcpkit serve wrote more after the initialize reply");
}

/// `printf '…requests…' | mcpkit serve`: requests read before stdin closed are still answered
/// (stdin closing ends the input, not the work already accepted), then the server exits 0.
#[tokio::test]
async fn mcpkit_serve_answers_requests_read_before_stdin_closed() {
    let input = [
        initialize_line(1),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        // Takes about 100 ms.
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_reconnection"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_owned(),
    ]
    .join("\n")
        + "\n";
    let (status, stdout, stderr) = run(&["serve"], &input, &[]).await;
    assert!(status.success(), "mcpkit serve exited with {status}; stderr:\n{stderr}");
    let lines = json_rpc_lines(&stdout);
    for id in 1..=3 {
        assert_eq!(
            lines.iter().filter(|l| l["id"] == id).count(),
            1,
            "request {id} was read but never answered: {lines:?}"
        );
    }
    let reply = lines.iter().find(|l| l["id"] == 2).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], reference::RECONNECTION_TEXT);
}

#[tokio::test]
async fn mcpkit_serve_exits_0_on_immediate_eof() {
    let (status, stdout, stderr) = run(&["serve"], "", &[]).await;
    assert!(status.success(), "mcpkit serve exited with {status}; stderr:\n{stderr}");
    assert_eq!(stdout, "");
}

/// With all logging turned on, stdout still carries nothing but JSON-RPC: logs go to stderr.
/// Driven like a real client: initialize, wait for the reply, then requests; stdin is closed
/// once every reply is in.
#[tokio::test]
async fn mcpkit_serve_writes_only_json_rpc_on_stdout() {
    let mut child = spawn(&["-vvv", "serve"], &[("RUST_LOG", "trace")]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let stderr = child.stderr.take().unwrap();
    let stderr = tokio::spawn(async move {
        let mut all = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut BufReader::new(stderr), &mut all).await;
        all
    });
    let mut raw = String::new();
    let mut read_until_reply = async |id: i64, raw: &mut String| loop {
        let mut line = String::new();
        let n = within(&format!("the reply to {id}"), stdout.read_line(&mut line))
            .await
            .unwrap();
        assert!(n > 0, "stdout closed before the reply to {id}");
        raw.push_str(&line);
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("a non-JSON stdout line ({e}): {line:?}"));
        if v["id"] == id {
            return;
        }
    };
    stdin
        .write_all(format!("{}\n", initialize_line(1)).as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    read_until_reply(1, &mut raw).await;
    let input = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        // Unknown notifications are logged (at debug) and otherwise ignored.
        r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"debug"}}"#,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":6,"method":"no/such/method"}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"test://nope"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
    ]
    .join("\n")
        + "\n";
    stdin.write_all(input.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
    read_until_reply(8, &mut raw).await;
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"test_tool_with_logging\"}}\n")
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    read_until_reply(5, &mut raw).await;
    drop(stdin);
    let mut rest = String::new();
    within(
        "stdout to close",
        tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut rest),
    )
    .await
    .unwrap();
    raw.push_str(&rest);
    let status = within("mcpkit serve to exit", child.wait()).await.unwrap();
    let stderr = within("stderr", stderr).await.unwrap();
    assert!(status.success(), "mcpkit serve exited with {status}; stderr:\n{stderr}");
    assert!(
        stderr.contains("notifications/unknown"),
        "with -vvv, mcpkit serve logs to stderr:\n{stderr}"
    );

    let lines = json_rpc_lines(&raw);
    for id in 1..=8 {
        assert_eq!(
            lines.iter().filter(|l| l["id"] == id).count(),
            1,
            "replies to request {id}: {lines:?}"
        );
    }
    assert!(
        lines.iter().any(|l| l["id"].is_null() && l["error"]["code"] == -32700),
        "{lines:?}"
    );
    let logs = lines.iter().filter(|l| l["method"] == "notifications/message").count();
    assert_eq!(logs, 3, "{lines:?}");
    let reply = lines.iter().find(|l| l["id"] == 5).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], reference::LOGGING_RESULT_TEXT);
}

#[tokio::test]
async fn mcpkit_inspect_prints_every_tool_name() {
    let (status, stdout, stderr) = run(&["inspect"], "", &[("COLUMNS", "200")]).await;
    assert!(
        status.success(),
        "mcpkit inspect exited with {status}; stderr:\n{stderr}"
    );
    for name in REFERENCE_TOOL_NAMES {
        assert!(stdout.contains(name), "{name} is missing from:\n{stdout}");
    }
    assert!(stdout.contains(reference::SERVER_NAME), "{stdout}");
    assert!(stdout.contains("test://static-text"), "{stdout}");
    assert!(stdout.contains("test_simple_prompt"), "{stdout}");
}

#[tokio::test]
async fn mcpkit_inspect_json_is_valid_json_with_tools() {
    let (status, stdout, stderr) = run(&["inspect", "--json"], "", &[]).await;
    assert!(
        status.success(),
        "mcpkit inspect --json exited with {status}; stderr:\n{stderr}"
    );
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"));
    let tools = v["tools"].as_array().expect("a tools array");
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, REFERENCE_TOOL_NAMES);
    assert_eq!(v["initialize"]["serverInfo"]["name"], reference::SERVER_NAME);
    // The three conformance fixtures, the seven files of the reference skills and the counter's
    // MCP App view.
    assert_eq!(v["resources"].as_array().map(Vec::len), Some(11));
    assert_eq!(v["resourceTemplates"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["prompts"].as_array().map(Vec::len), Some(5));
}

#[tokio::test]
async fn mcpkit_inspect_of_a_command_that_is_not_a_server_fails() {
    let (status, _stdout, stderr) = run(&["inspect", "--", "/bin/true"], "", &[]).await;
    assert!(!status.success(), "inspecting /bin/true succeeded; stderr:\n{stderr}");
    assert!(!stderr.is_empty(), "no explanation on stderr");
}
