//! Version negotiation (spec `basic/lifecycle`): the server answers with the client's version
//! when it speaks it and with its latest otherwise; a client whose server picks a version it
//! does not speak fails with `Error::UnsupportedVersion` and disconnects.

use crate::common;

use common::{within, Wire};
use mcpkit::client::ConnectMode;
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::transport::memory;
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Error, Server};
use serde_json::json;

fn server() -> Server {
    Server::builder().tool(ToolDef::new("hi", || async { "hi" })).build()
}

#[tokio::test]
async fn the_server_answers_with_each_handshake_version_the_client_asks_for() {
    for version in ProtocolVersion::HANDSHAKE {
        let client = Client::builder().protocol_version(version);
        let pair = within("connect", TestPair::connect(server(), client)).await.unwrap();
        assert_eq!(pair.client.protocol_version(), version);
        assert_eq!(pair.client.initialize_result().protocol_version, version.as_str());
        let r = within("call", pair.client.call_tool("hi", ())).await.unwrap();
        assert!(!r.is_error());
        let sent = pair.server_sent();
        assert!(
            sent[0].contains(&format!(r#""protocolVersion":"{}""#, version.as_str())),
            "{}",
            sent[0]
        );
    }
}

#[tokio::test]
async fn the_client_asking_2024_11_05_gets_2024_11_05() {
    let mut w = Wire::serve(&server());
    let result = w.initialize_as("2024-11-05", json!({})).await;
    assert_eq!(result["protocolVersion"], "2024-11-05");
    w.assert_silent_then_ping("initialize").await;
}

#[tokio::test]
async fn an_unknown_or_stateless_version_gets_the_latest_handshake_version() {
    for asked in ["2099-01-01", "1999-01-01", "banana", "", "2026-07-28"] {
        let mut w = Wire::serve(&server());
        let result = w.initialize_as(asked, json!({})).await;
        assert_eq!(result["protocolVersion"], "2025-11-25", "asked {asked:?}");
        w.assert_silent_then_ping("initialize").await;
    }
}

/// Before `initialize`, only `ping` is served; other requests get an error with their id.
#[tokio::test]
async fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let mut w = Wire::serve(&server());
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert!(reply["error"]["code"].is_i64(), "{reply}");
    w.assert_silent_then_ping("a request before initialize").await;
    w.initialize().await;
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    assert!(reply.get("result").is_some(), "{reply}");
}

#[tokio::test]
async fn a_second_initialize_is_rejected() {
    let mut w = Wire::serve(&server());
    w.initialize().await;
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}
        }}))
        .await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
}

/// A fake server answers `initialize` with `version`; returns what `connect` gave and what the
/// fake server read after answering (until EOF).
async fn connect_to_fake_server(version: &str) -> (mcpkit::Result<Client>, Vec<serde_json::Value>) {
    let (a, b) = memory::pair();
    let mut fake = Wire::from_transport(b, None);
    let connect = tokio::spawn(Client::builder().connect(a));
    let init = fake.recv().await;
    assert_eq!(init["method"], "initialize");
    assert_eq!(init["params"]["protocolVersion"], "2025-11-25");
    fake.send_json(&json!({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": version,
        "capabilities": {},
        "serverInfo": {"name": "fake", "version": "0"}
    }}))
    .await;
    let result = within("connect", connect).await.unwrap();
    let mut after = Vec::new();
    if result.is_err() {
        while let Some(v) = fake.recv_or_eof().await {
            after.push(v);
        }
    }
    (result, after)
}

#[tokio::test]
async fn a_server_choosing_an_unsupported_version_fails_the_connect() {
    for version in ["1999-01-01", "2026-07-28", "not-a-version"] {
        let (result, after) = connect_to_fake_server(version).await;
        match result {
            Err(Error::UnsupportedVersion(v)) => assert_eq!(v, version),
            other => panic!("{version}: expected UnsupportedVersion, got {other:?}"),
        }
        // The client disconnected without sending `notifications/initialized` (or anything).
        assert!(after.is_empty(), "{version}: the client went on with {after:?}");
    }
}

#[tokio::test]
async fn a_server_choosing_an_older_supported_version_is_accepted() {
    let (result, _) = connect_to_fake_server("2025-03-26").await;
    let client = result.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
}

/// A pinned stateless client whose `server/discover` is refused with UnsupportedProtocolVersion
/// (`supported` as given): returns what `connect` gave and every request the fake server read.
async fn pinned_client_refused_once(supported: &[&str]) -> (mcpkit::Result<Client>, Vec<serde_json::Value>) {
    let (a, b) = memory::pair();
    let mut fake = Wire::from_transport(b, None);
    let connect = tokio::spawn(
        Client::builder()
            .mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28))
            .connect(a),
    );
    let first = fake.recv().await;
    assert_eq!(first["method"], "server/discover");
    fake.send_json(&json!({"jsonrpc": "2.0", "id": first["id"], "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": "2026-07-28"}
    }}))
    .await;
    let mut seen = vec![first];
    if supported.contains(&"2026-07-28") {
        let retry = fake.recv().await;
        fake.send_json(&json!({"jsonrpc": "2.0", "id": retry["id"], "result": {
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "0"}}
        }}))
        .await;
        seen.push(retry);
    }
    (within("connect", connect).await.unwrap(), seen)
}

#[tokio::test]
async fn a_refused_stateless_version_is_retried_once_when_the_server_lists_it() {
    let (result, seen) = pinned_client_refused_once(&["2026-07-28"]).await;
    let client = result.unwrap();
    assert!(client.is_stateless());
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1]["method"], "server/discover");
    assert_ne!(seen[0]["id"], seen[1]["id"], "the retry is a new request");
    assert_eq!(
        seen[1]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[tokio::test]
async fn a_refused_stateless_version_the_server_does_not_list_fails_the_connect() {
    let (result, seen) = pinned_client_refused_once(&["2025-11-25"]).await;
    assert!(result.is_err(), "{:?}", result.map(|_| ()));
    assert_eq!(seen.len(), 1, "no retry with a version the client does not speak");
}
