//! Interop with the official TypeScript SDK (npm `@modelcontextprotocol/sdk`, pinned in
//! tests-interop/ts): its client drives `mcpkit serve` over stdio, Streamable HTTP and legacy
//! SSE, and the mcpkit client calls a TypeScript server over stdio.
//!
//! `scripts/test.sh` installs the SDK (scripts/setup-interop-ts.sh); without it these tests
//! fail (they never skip silently).

use mcpkit::client::ConnectMode;
use support::peers::{connect_stdio, node, ts_dir};
use support::{connect_http, connect_http_mode, exercise_echo_server, HttpServer, PeerServer};

use crate::support;

/// tests-interop/ts/echo_server.mjs.
fn echo_server() -> String {
    ts_dir().join("echo_server.mjs").to_str().unwrap().to_owned()
}

/// Run the TypeScript SDK client checks with `args` and assert every check passed.
fn run_checks(args: &[&str]) {
    support::run_client_checks("TypeScript", &node(), &ts_dir().join("client_checks.mjs"), args);
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
    let client = connect_stdio(ConnectMode::Handshake, node(), &[&echo_server(), "stdio"]).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_typescript_sdk_server_over_streamable_http() {
    let server = PeerServer::start(&node(), &[&echo_server(), "http"]);
    let client = connect_http(&format!("{}/mcp", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_calls_a_typescript_sdk_server_over_legacy_sse() {
    let server = PeerServer::start(&node(), &[&echo_server(), "sse"]);
    let client = connect_http(&format!("{}/sse", server.base)).await;
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// The 1.x TypeScript SDK speaks only the handshake era: the mcpkit client in auto mode probes
/// with `server/discover`, gets an error (it does not speak the stateless era), and falls back to `initialize`.
#[tokio::test]
async fn mcpkit_client_in_auto_mode_falls_back_to_the_handshake_with_a_typescript_sdk_1x_server() {
    let client = connect_stdio(ConnectMode::Auto, node(), &[&echo_server(), "stdio"]).await;
    assert!(!client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_in_auto_mode_falls_back_to_the_handshake_with_a_typescript_sdk_1x_server_over_http() {
    let server = PeerServer::start(&node(), &[&echo_server(), "http"]);
    let client = connect_http_mode(&format!("{}/mcp", server.base), ConnectMode::Auto).await;
    assert!(!client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[test]
fn cli_inspects_and_calls_a_typescript_sdk_server_over_stdio() {
    let node = node();
    support::cli_against_echo_server(&["--", node.to_str().unwrap(), &echo_server(), "stdio"]);
}

#[test]
fn cli_inspects_and_calls_a_typescript_sdk_server_over_streamable_http() {
    let server = PeerServer::start(&node(), &[&echo_server(), "http"]);
    support::cli_against_echo_server(&["--server", &format!("{}/mcp", server.base)]);
}
