//! Interop with the official TypeScript SDK v2 (npm `@modelcontextprotocol/server` and
//! `@modelcontextprotocol/client`, pinned in tests-interop/ts2), which speaks protocol revision
//! 2026-07-28 next to the 2025-era handshake: the mcpkit client in auto mode talks statelessly
//! to a v2 server over stdio and Streamable HTTP (and in legacy mode through the handshake), and
//! the v2 client in 2026-07-28 mode drives `mcpkit serve` over stdio and Streamable HTTP.
//!
//! `scripts/test.sh` installs the SDK (scripts/setup-interop-ts.sh); without it these tests
//! fail (they never skip silently). The SDK needs Node >= 20: `node` on the PATH, or the binary
//! named by `MCPKIT_NODE`.

use mcpkit::client::ConnectMode;
use mcpkit::types::ProtocolVersion;
use mcpkit::Client;
use support::peers::{node_20 as node, ts2_dir};
use support::{connect_http_mode, exercise_echo_server, HttpServer, PeerServer};

use crate::support;

/// tests-interop/ts2/echo_server.mjs.
fn echo_server() -> String {
    ts2_dir().join("echo_server.mjs").to_str().unwrap().to_owned()
}

/// Connect the mcpkit client with `mode` to the v2 echo server over stdio.
async fn connect_stdio(mode: ConnectMode) -> Client {
    support::peers::connect_stdio(mode, node(), &[&echo_server(), "stdio"]).await
}

/// The v2 server answers `server/discover`: the mcpkit client in auto mode speaks 2026-07-28.
#[tokio::test]
async fn mcpkit_client_in_auto_mode_speaks_2026_07_28_to_a_typescript_sdk_v2_server_over_stdio() {
    let client = connect_stdio(ConnectMode::Auto).await;
    assert!(client.is_stateless());
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_in_auto_mode_speaks_2026_07_28_to_a_typescript_sdk_v2_server_over_streamable_http() {
    let server = PeerServer::start(&node(), &[&echo_server(), "http"]);
    let client = connect_http_mode(&format!("{}/mcp", server.base), ConnectMode::Auto).await;
    assert!(client.is_stateless());
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// Pinned to 2026-07-28 (no fallback possible) it works too.
#[tokio::test]
async fn mcpkit_client_pinned_to_2026_07_28_calls_a_typescript_sdk_v2_server_over_stdio() {
    let client = connect_stdio(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)).await;
    assert!(client.is_stateless());
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// The v2 server still serves the 2025-era handshake from the same factory (a pinned session on
/// stdio, stateless per-request serving over HTTP).
#[tokio::test]
async fn mcpkit_client_in_legacy_mode_calls_a_typescript_sdk_v2_server_over_stdio() {
    let client = connect_stdio(ConnectMode::Handshake).await;
    assert!(!client.is_stateless());
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

#[tokio::test]
async fn mcpkit_client_in_legacy_mode_calls_a_typescript_sdk_v2_server_over_streamable_http() {
    let server = PeerServer::start(&node(), &[&echo_server(), "http"]);
    let client = connect_http_mode(&format!("{}/mcp", server.base), ConnectMode::Handshake).await;
    assert!(!client.is_stateless());
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    exercise_echo_server(&client).await;
    client.close().await.unwrap();
}

/// Run the v2 SDK client checks (`client_checks_v2.mjs MODE …`) and assert every check passed.
fn run_checks(args: &[&str]) {
    support::run_client_checks("TypeScript v2", &node(), &ts2_dir().join("client_checks_v2.mjs"), args);
}

/// The v2 client pinned to 2026-07-28 drives `mcpkit serve` over stdio: tools, resources,
/// prompts, and sampling + elicitation through `input_required` rounds.
#[test]
fn typescript_sdk_v2_client_pinned_to_2026_07_28_over_stdio() {
    run_checks(&["2026-07-28", "stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
}

#[test]
fn typescript_sdk_v2_client_pinned_to_2026_07_28_over_streamable_http() {
    let server = HttpServer::start();
    run_checks(&["2026-07-28", "http", &format!("{}/mcp", server.base)]);
}

/// In auto mode the v2 client probes `server/discover` and must settle on 2026-07-28 too.
#[test]
fn typescript_sdk_v2_client_in_auto_mode_over_stdio() {
    run_checks(&["auto", "stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
}

#[test]
fn typescript_sdk_v2_client_in_auto_mode_over_streamable_http() {
    let server = HttpServer::start();
    run_checks(&["auto", "http", &format!("{}/mcp", server.base)]);
}
