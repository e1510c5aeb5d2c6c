//! `compose::Upstream` over a real `mcpkit serve` child process (stdio): its catalogue served
//! as `ref_<name>`, calls with progress, sampling and elicitation relayed to the downstream
//! client in both eras, resources and prompts forwarded; killed with SIGKILL while a call runs
//! through it, that call fails at once naming it, its tools leave the list with
//! `list_changed`, and a mounted server keeps answering.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{harness_client, text_of, within, Asked, SAMPLING_REPLY};
use mcpkit::client::{CallOptions, ConnectMode, ServerNotification};
use mcpkit::server::compose::Upstream;
use mcpkit::testing::TestPair;
use mcpkit::transport::child::ChildTransport;
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server, ToolDef};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

/// `mcpkit serve` as the upstream `ref`, attached; the child's pid.
async fn reference_upstream() -> (Upstream, u32) {
    let child = ChildTransport::spawn(BIN, ["serve"]).unwrap();
    let pid = child.id().expect("a running child");
    let upstream = Upstream::new("ref");
    let client = within(
        "connect to mcpkit serve",
        upstream.relay(Client::builder()).connect(child),
    )
    .await
    .unwrap();
    within("attach", upstream.attach(client)).await.unwrap();
    (upstream, pid)
}

fn front(upstream: &Upstream) -> Server {
    let local = Server::builder()
        .tool(ToolDef::new("ping", || async { "pong" }))
        .build();
    Server::builder()
        .enable_tools()
        .mount("local", local)
        .proxy(upstream)
        .build()
}

#[tokio::test]
async fn the_reference_server_is_served_with_its_progress_sampling_and_elicitation_relayed() {
    let (upstream, _pid) = reference_upstream().await;
    for (era, mode) in [
        ("handshake", ConnectMode::Handshake),
        ("stateless", ConnectMode::Pinned(ProtocolVersion::V2026_07_28)),
    ] {
        let asked = Arc::new(Asked::default());
        let pair = within(
            "connect",
            TestPair::connect(front(&upstream), harness_client(asked.clone()).mode(mode)),
        )
        .await
        .unwrap();
        let c = &pair.client;
        let names: Vec<String> = c.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        for name in [
            "local_ping",
            "ref_echo",
            "ref_add",
            "ref_test_sampling",
            "ref_test_elicitation",
        ] {
            assert!(names.contains(&name.to_owned()), "{era}: {name} in {names:?}");
        }
        let r = within("echo", c.call_tool("ref_echo", json!({"message": "through"})))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "through", "{era}");

        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = CallOptions {
            progress: Some(tx),
            ..Default::default()
        };
        within("progress", c.call_tool_with("ref_test_tool_with_progress", (), options))
            .await
            .unwrap();
        let mut steps = Vec::new();
        while let Ok(p) = rx.try_recv() {
            steps.push(p.progress);
        }
        assert_eq!(steps, [0.0, 50.0, 100.0], "{era}");

        let r = within("sampling", c.call_tool("ref_test_sampling", json!({"prompt": "hi"})))
            .await
            .unwrap();
        assert_eq!(text_of(&r), format!("LLM response: {SAMPLING_REPLY}"), "{era}");
        assert_eq!(asked.sampling.lock().unwrap().len(), 1, "{era}: asked downstream once");
        let r = within(
            "elicitation",
            c.call_tool("ref_test_elicitation", json!({"message": "Who?"})),
        )
        .await
        .unwrap();
        assert!(
            text_of(&r).starts_with("User response: action=accept"),
            "{era}: {}",
            text_of(&r)
        );
        assert_eq!(asked.elicitation.lock().unwrap()[0].message(), "Who?", "{era}");

        let resources = c.list_all_resources().await.unwrap();
        let first = resources.first().expect("the reference server lists resources");
        let read = within("read", c.read_resource(&first.uri)).await.unwrap();
        assert!(!read.contents.is_empty(), "{era}");
        let prompts: Vec<String> = c
            .list_all_prompts()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert!(
            prompts.iter().all(|p| p.starts_with("ref_")) && !prompts.is_empty(),
            "{prompts:?}"
        );
    }
}

#[tokio::test]
async fn a_killed_child_fails_its_running_call_at_once_and_leaves_the_list() {
    let (upstream, pid) = reference_upstream().await;
    let pair = within("connect", TestPair::connect(front(&upstream), Client::builder()))
        .await
        .unwrap();
    within("ping", pair.client.ping()).await.unwrap();
    let mut notifications = pair.client.notifications();

    let running = {
        let client = pair.client.clone();
        tokio::spawn(async move { client.call_tool("ref_slow_compute", json!({"seconds": 30})).await })
    };
    within("the call reaches the upstream", async {
        while upstream.in_flight() == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let killed = Instant::now();
    let e = within("the running call fails", running).await.unwrap().unwrap_err();
    assert!(
        killed.elapsed() < Duration::from_secs(5),
        "failed after {:?}",
        killed.elapsed()
    );
    let e = e.rpc().cloned().unwrap_or_else(|| panic!("a JSON-RPC error: {e:?}"));
    assert!(e.message.contains(r#"upstream "ref""#), "{e:?}");

    within("list_changed", async {
        while !matches!(notifications.recv().await.unwrap(), ServerNotification::ToolListChanged) {}
    })
    .await;
    within("disconnected", upstream.disconnected()).await;
    assert!(!upstream.is_connected());
    let names: Vec<String> = pair
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["local_ping"]);
    let r = within(
        "the mounted server still answers",
        pair.client.call_tool("local_ping", ()),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&r), "pong");
}
