//! Interop: a server written with the official Python SDK (tests-interop/python/echo_server.py,
//! over Streamable HTTP) proxied as the upstream `py` through `compose::Upstream`: its tools
//! listed as `py_<name>` and called by downstream clients of both eras; when the Python server
//! is killed, `Upstream::ping` detaches it (an HTTP upstream's connection cannot tell), its tools
//! leave the list and a call naming one fails at once naming it.
//!
//! `scripts/test.sh` installs the SDK (scripts/setup-interop.sh); without it this test fails
//! (it never skips silently).

use std::time::{Duration, Instant};

use mcpkit::client::ConnectMode;
use mcpkit::server::compose::Upstream;
use mcpkit::testing::TestPair;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use serde_json::json;
use support::peers::{python, python_script};
use support::PeerServer;

use crate::common::{text_of, within};
use crate::support;

#[tokio::test]
async fn a_python_sdk_server_over_http_is_served_as_an_upstream_and_detached_when_it_dies() {
    let python_server = PeerServer::start(&python(), &[&python_script("echo_server.py"), "http"]);
    let upstream = Upstream::new("py");
    let transport = HttpClientTransport::new(format!("{}/mcp", python_server.base)).unwrap();
    let client = tokio::time::timeout(
        Duration::from_secs(30),
        upstream.relay(Client::builder()).connect(transport),
    )
    .await
    .expect("the Python server answers within 30 s")
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
        assert_eq!(names, ["py_echo", "py_add", "py_fail"], "{era}");
        let r = within("echo", c.call_tool("py_echo", json!({"message": "via mcpkit"})))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "via mcpkit", "{era}");
        let r = within("add", c.call_tool("py_add", json!({"a": 2, "b": 40})))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "42", "{era}");
        let r = within("fail", c.call_tool("py_fail", ())).await.unwrap();
        assert!(r.is_error(), "{era}: the tool error is passed on as a result");
    }

    within("ping while up", upstream.ping(Duration::from_secs(10)))
        .await
        .unwrap();
    drop(python_server);
    let e = within("ping after the kill", upstream.ping(Duration::from_secs(10)))
        .await
        .unwrap_err();
    assert!(!upstream.is_connected(), "detached: {e}");
    let pair = within("connect", TestPair::connect(front.clone(), Client::builder()))
        .await
        .unwrap();
    assert!(pair.client.list_all_tools().await.unwrap().is_empty());
    let started = Instant::now();
    let e = within("call", pair.client.call_tool("py_echo", json!({"message": "x"})))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1));
    let e = e.rpc().cloned().unwrap_or_else(|| panic!("a JSON-RPC error: {e:?}"));
    assert_eq!(e.message, r#"upstream "py" is not connected"#);
}
