//! Interop: a server written with the official TypeScript SDK (tests-interop/ts/echo_server.mjs,
//! over stdio) proxied as the upstream `ts` through `compose::Upstream`: its tools listed as
//! `ts_<name>`, calls forwarded with their text, structured content and tool errors, for
//! downstream clients of both eras.
//!
//! `scripts/test.sh` installs the SDK (scripts/setup-interop-ts.sh); without it this test
//! fails (it never skips silently).

use std::time::Duration;

use mcpkit::client::ConnectMode;
use mcpkit::server::compose::Upstream;
use mcpkit::testing::TestPair;
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use serde_json::json;
use support::peers::{node, ts_dir};

use crate::common::{text_of, within};
use crate::support;

#[tokio::test]
async fn a_typescript_sdk_server_over_stdio_is_served_as_an_upstream_to_both_eras() {
    let mut cmd = tokio::process::Command::new(node());
    cmd.arg(ts_dir().join("echo_server.mjs")).arg("stdio");
    let transport = ChildTransport::from_command(cmd, Stderr::Trace).unwrap();
    let upstream = Upstream::new("ts");
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        upstream.relay(Client::builder()).connect(transport),
    )
    .await
    .expect("the TypeScript server answers within 30 s")
    .unwrap();
    within("attach", upstream.attach(client)).await.unwrap();
    let front = Server::builder().enable_tools().proxy(&upstream).build();

    for (era, mode) in [
        ("handshake", ConnectMode::Handshake),
        ("stateless", ConnectMode::Pinned(ProtocolVersion::V2026_07_28)),
    ] {
        let pair = within(
            "connect",
            TestPair::connect(front.clone(), Client::builder().mode(mode)),
        )
        .await
        .unwrap();
        let c = &pair.client;
        let names: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["ts_echo", "ts_add", "ts_fail"], "{era}");
        let r = within("echo", c.call_tool("ts_echo", json!({"message": "via mcpkit"})))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "via mcpkit", "{era}");
        let r = within("add", c.call_tool("ts_add", json!({"a": 2, "b": 40})))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"result": 42})), "{era}");
        let r = within("fail", c.call_tool("ts_fail", ())).await.unwrap();
        assert!(r.is_error(), "{era}: the tool error is passed on as a result");
        assert!(text_of(&r).contains("intentional failure"), "{era}");
    }
    assert!(upstream.is_connected());
    if let Some(client) = upstream.detach() {
        client.close().await.unwrap();
    }
}
