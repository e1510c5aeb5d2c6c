//! Interop with the official Python SDK (PyPI `mcp`, pinned in tests-interop/python):
//! its client drives `mcpkit serve` over stdio, and the mcpkit client calls a Python server.
//!
//! `scripts/test.sh` installs the SDK and sets `MCPKIT_INTEROP_PYTHON`; without it these tests
//! fail (they never skip silently).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::Client;
use support::HttpServer;

mod support;

fn python() -> PathBuf {
    let p = std::env::var_os("MCPKIT_INTEROP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/interop-venv/bin/python"));
    assert!(
        p.exists(),
        "{} not found: run scripts/setup-interop.sh (scripts/test.sh does)",
        p.display()
    );
    p
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Run the Python client checks with `args` and assert every check passed.
fn run_checks(args: &[&str]) {
    let out = Command::new(python())
        .arg(repo().join("tests-interop/python/client_checks.py"))
        .args(args)
        .output()
        .expect("run client_checks.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(" 0 failed"),
        "the Python SDK client reported failures: {last}"
    );
    assert!(!last.starts_with("0 passed"), "no check ran");
    assert!(out.status.success());
}

#[test]
fn python_sdk_client_over_stdio() {
    run_checks(&["stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
}

#[test]
fn python_sdk_client_over_streamable_http() {
    let server = HttpServer::start();
    run_checks(&["http", &format!("{}/mcp", server.base)]);
}

#[test]
fn python_sdk_client_over_legacy_sse() {
    let server = HttpServer::start();
    run_checks(&["sse", &format!("{}/sse", server.base)]);
}

#[tokio::test]
async fn mcpkit_client_calls_a_python_sdk_server() {
    let mut cmd = tokio::process::Command::new(python());
    cmd.arg(repo().join("tests-interop/python/echo_server.py"));
    let transport = ChildTransport::from_command(cmd, Stderr::Trace).unwrap();
    let client = tokio::time::timeout(Duration::from_secs(30), Client::builder().connect(transport))
        .await
        .expect("connect timed out")
        .expect("connect");
    assert_eq!(client.protocol_version(), mcpkit::types::ProtocolVersion::V2025_11_25);
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"echo") && names.contains(&"add"), "{names:?}");

    let r = client
        .call_tool("echo", serde_json::json!({"message": "hi from rust"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi from rust"));
    assert!(!r.is_error());

    // `add` declares an output schema; the client validates structuredContent against it.
    let r = client
        .call_tool("add", serde_json::json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(serde_json::json!({"result": 5})));

    let r = client.call_tool("fail", ()).await.unwrap();
    assert!(r.is_error());

    let calls = (0..20).map(|i| {
        let c = client.clone();
        async move {
            c.call_tool("echo", serde_json::json!({"message": format!("m{i}")}))
                .await
        }
    });
    for (i, r) in futures_util::future::join_all(calls).await.into_iter().enumerate() {
        assert_eq!(r.unwrap().content[0].as_text(), Some(format!("m{i}").as_str()));
    }
    client.ping().await.unwrap();
    client.close().await.unwrap();
}
