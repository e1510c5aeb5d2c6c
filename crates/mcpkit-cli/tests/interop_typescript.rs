//! Interop with the official TypeScript SDK (npm `@modelcontextprotocol/sdk`, pinned in
//! tests-interop/ts): its client drives `mcpkit serve` over stdio, Streamable HTTP and legacy
//! SSE, and the mcpkit client calls a TypeScript server over stdio.
//!
//! `scripts/test.sh` installs the SDK (scripts/setup-interop-ts.sh); without it these tests
//! fail (they never skip silently).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::Client;
use support::HttpServer;

mod support;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ts_dir() -> PathBuf {
    let dir = repo().join("tests-interop/ts");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").exists(),
        "the TypeScript SDK is not installed: run scripts/setup-interop-ts.sh (scripts/test.sh does)"
    );
    dir
}

/// Run the TS client checks with `args` and assert every check passed.
fn run_checks(args: &[&str]) {
    let out = Command::new("node")
        .arg(ts_dir().join("client_checks.mjs"))
        .args(args)
        .output()
        .expect("run node client_checks.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(" 0 failed"),
        "the TypeScript SDK client reported failures: {last}"
    );
    assert!(!last.starts_with("0 passed"), "no check ran");
    assert!(out.status.success());
}

#[test]
fn typescript_sdk_client_over_stdio() {
    run_checks(&["stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
}

#[test]
fn typescript_sdk_client_over_streamable_http() {
    let server = HttpServer::start();
    run_checks(&["http", &format!("{}/mcp", server.base)]);
}

#[test]
fn typescript_sdk_client_over_legacy_sse() {
    let server = HttpServer::start();
    run_checks(&["sse", &format!("{}/sse", server.base)]);
}

#[tokio::test]
async fn mcpkit_client_calls_a_typescript_sdk_server() {
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(ts_dir().join("echo_server.mjs")).arg("stdio");
    let transport = ChildTransport::from_command(cmd, Stderr::Trace).unwrap();
    let client = tokio::time::timeout(Duration::from_secs(30), Client::builder().connect(transport))
        .await
        .expect("connect timed out")
        .expect("connect");
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "add"),
        "{names:?}"
    );
    let r = client
        .call_tool("echo", serde_json::json!({"message": "hi from rust"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi from rust"));
    let r = client
        .call_tool("add", serde_json::json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(serde_json::json!({"result": 5})));
    assert!(client.call_tool("fail", ()).await.unwrap().is_error());
    client.ping().await.unwrap();
    client.close().await.unwrap();
}
