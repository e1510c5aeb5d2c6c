//! Interop with the official TypeScript SDK (npm `@modelcontextprotocol/sdk`, pinned in
//! tests-interop/ts): its client drives `mcpkit serve` over stdio, Streamable HTTP and legacy
//! SSE, and the mcpkit client calls a TypeScript server over stdio.
//!
//! `scripts/test.sh` installs the SDK (scripts/setup-interop-ts.sh); without it these tests
//! fail (they never skip silently).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

use mcpkit::client::ConnectMode;
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::Client;
use support::{connect_http, connect_http_mode, exercise_echo_server, HttpServer, PeerServer};

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

/// Run the TypeScript SDK client checks with `args` and assert every check passed.
fn run_checks(args: &[&str]) {
    support::run_client_checks(
        "TypeScript",
        std::path::Path::new("node"),
        &ts_dir().join("client_checks.mjs"),
        args,
    );
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
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

fn node() -> std::path::PathBuf {
    std::path::PathBuf::from("node")
}

#[tokio::test]
async fn mcpkit_client_calls_a_typescript_sdk_server_over_streamable_http() {
    let script = ts_dir().join("echo_server.mjs");
    let server = PeerServer::start(&node(), &[script.to_str().unwrap(), "http"]);
    let client = connect_http(&format!("{}/mcp", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_typescript_sdk_server_over_legacy_sse() {
    let script = ts_dir().join("echo_server.mjs");
    let server = PeerServer::start(&node(), &[script.to_str().unwrap(), "sse"]);
    let client = connect_http(&format!("{}/sse", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// The 1.x TypeScript SDK speaks only the handshake era: the mcpkit client in auto mode probes
/// with `server/discover`, gets an error (it does not speak the stateless era), and falls back to `initialize`.
#[tokio::test]
async fn mcpkit_client_in_auto_mode_falls_back_to_the_handshake_with_a_typescript_sdk_1x_server() {
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(ts_dir().join("echo_server.mjs")).arg("stdio");
    let transport = ChildTransport::from_command(cmd, Stderr::Trace).unwrap();
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        Client::builder()
            .mode(ConnectMode::Auto)
            .probe_timeout(Duration::from_secs(30))
            .connect(transport),
    )
    .await
    .expect("connect timed out")
    .expect("connect");
    assert!(!client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_in_auto_mode_falls_back_to_the_handshake_with_a_typescript_sdk_1x_server_over_http() {
    let script = ts_dir().join("echo_server.mjs");
    let server = PeerServer::start(&node(), &[script.to_str().unwrap(), "http"]);
    let client = connect_http_mode(&format!("{}/mcp", server.base), ConnectMode::Auto).await;
    assert!(!client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[test]
fn cli_inspects_and_calls_a_typescript_sdk_server_over_stdio() {
    let script = ts_dir().join("echo_server.mjs");
    support::cli_against_echo_server(&["--", "node", script.to_str().unwrap(), "stdio"]);
}

#[test]
fn cli_inspects_and_calls_a_typescript_sdk_server_over_streamable_http() {
    let script = ts_dir().join("echo_server.mjs");
    let server = PeerServer::start(&node(), &[script.to_str().unwrap(), "http"]);
    support::cli_against_echo_server(&["--server", &format!("{}/mcp", server.base)]);
}
