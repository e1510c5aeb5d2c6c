//! Interop with the official Python SDK (PyPI `mcp`, pinned in tests-interop/python):
//! its client drives `mcpkit serve` over stdio, and the mcpkit client calls a Python server.
//!
//! `scripts/test.sh` installs the SDK and sets `MCPKIT_INTEROP_PYTHON`; without it these tests
//! fail (they never skip silently).

use mcpkit::client::ConnectMode;
use support::peers::{connect_stdio, python, python_script};
use support::{connect_http, connect_http_mode, exercise_echo_server, HttpServer, PeerServer};

use crate::support;

/// Run the Python SDK client checks with `args` and assert every check passed.
fn run_checks(args: &[&str]) {
    support::run_client_checks(
        "Python",
        &python(),
        std::path::Path::new(&python_script("client_checks.py")),
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
    let client = connect_stdio(ConnectMode::Handshake, python(), &[&python_script("echo_server.py")]).await;
    assert_eq!(client.protocol_version(), mcpkit::types::ProtocolVersion::V2025_11_25);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_python_sdk_server_over_streamable_http() {
    let server = PeerServer::start(&python(), &[&python_script("echo_server.py"), "http"]);
    let client = connect_http(&format!("{}/mcp", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_python_sdk_server_over_legacy_sse() {
    let server = PeerServer::start(&python(), &[&python_script("echo_server.py"), "sse"]);
    let client = connect_http(&format!("{}/sse", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// The Python SDK's server is dual-era: the mcpkit client in auto mode finds the stateless era
/// there (`server/discover`) and speaks 2026-07-28 to it.
#[tokio::test]
async fn mcpkit_client_in_auto_mode_speaks_2026_07_28_to_a_python_sdk_server_over_stdio() {
    let client = connect_stdio(ConnectMode::Auto, python(), &[&python_script("echo_server.py")]).await;
    assert!(client.is_stateless());
    assert_eq!(client.protocol_version(), mcpkit::types::ProtocolVersion::V2026_07_28);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_in_auto_mode_speaks_2026_07_28_to_a_python_sdk_server_over_streamable_http() {
    let server = PeerServer::start(&python(), &[&python_script("echo_server.py"), "http"]);
    let client = connect_http_mode(&format!("{}/mcp", server.base), ConnectMode::Auto).await;
    assert!(client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[test]
fn cli_inspects_and_calls_a_python_sdk_server_over_stdio() {
    let py = python();
    support::cli_against_echo_server(&["--", py.to_str().unwrap(), &python_script("echo_server.py")]);
}

#[test]
fn cli_inspects_and_calls_a_python_sdk_server_over_streamable_http() {
    let server = PeerServer::start(&python(), &[&python_script("echo_server.py"), "http"]);
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
