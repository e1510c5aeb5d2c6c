//! Interop with the official Python SDK (PyPI `mcp`, pinned in tests-interop/python):
//! its client drives `mcpkit serve` over stdio, and the mcpkit client calls a Python server.
//!
//! `scripts/test.sh` installs the SDK and sets `MCPKIT_INTEROP_PYTHON`; without it these tests
//! fail (they never skip silently).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

use mcpkit::client::ConnectMode;
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::Client;
use support::{connect_http, connect_http_mode, exercise_echo_server, HttpServer, PeerServer};

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

/// Run the Python SDK client checks with `args` and assert every check passed.
fn run_checks(args: &[&str]) {
    support::run_client_checks(
        "Python",
        &python(),
        &repo().join("tests-interop/python/client_checks.py"),
        args,
    );
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
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_python_sdk_server_over_streamable_http() {
    let script = repo().join("tests-interop/python/echo_server.py");
    let server = PeerServer::start(&python(), &[script.to_str().unwrap(), "http"]);
    let client = connect_http(&format!("{}/mcp", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_python_sdk_server_over_legacy_sse() {
    let script = repo().join("tests-interop/python/echo_server.py");
    let server = PeerServer::start(&python(), &[script.to_str().unwrap(), "sse"]);
    let client = connect_http(&format!("{}/sse", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// The Python SDK's server is dual-era: the mcpkit client in auto mode finds the stateless era
/// there (`server/discover`) and speaks 2026-07-28 to it.
#[tokio::test]
async fn mcpkit_client_in_auto_mode_speaks_2026_07_28_to_a_python_sdk_server_over_stdio() {
    let mut cmd = tokio::process::Command::new(python());
    cmd.arg(repo().join("tests-interop/python/echo_server.py"));
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
    assert!(client.is_stateless());
    assert_eq!(client.protocol_version(), mcpkit::types::ProtocolVersion::V2026_07_28);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_in_auto_mode_speaks_2026_07_28_to_a_python_sdk_server_over_streamable_http() {
    let script = repo().join("tests-interop/python/echo_server.py");
    let server = PeerServer::start(&python(), &[script.to_str().unwrap(), "http"]);
    let client = connect_http_mode(&format!("{}/mcp", server.base), ConnectMode::Auto).await;
    assert!(client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[test]
fn cli_inspects_and_calls_a_python_sdk_server_over_stdio() {
    let py = python();
    let script = repo().join("tests-interop/python/echo_server.py");
    support::cli_against_echo_server(&["--", py.to_str().unwrap(), script.to_str().unwrap()]);
}

#[test]
fn cli_inspects_and_calls_a_python_sdk_server_over_streamable_http() {
    let script = repo().join("tests-interop/python/echo_server.py");
    let server = PeerServer::start(&python(), &[script.to_str().unwrap(), "http"]);
    support::cli_against_echo_server(&["--server", &format!("{}/mcp", server.base)]);
}

#[test]
fn python_sdk_client_through_proxy_listen_to_a_stdio_reference_server() {
    let proxy = support::Proxy::start();
    run_checks(&["http", &proxy.url]);
}

#[test]
fn python_sdk_stdio_client_through_proxy_server_to_the_http_reference_server() {
    let server = HttpServer::start();
    let url = format!("{}/mcp", server.base);
    run_checks(&["stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "proxy", "--server", &url]);
}
