//! The scale-out harness itself (mcpkit-test-support's `cluster` and `haproxy`): three
//! independent `mcpkit serve --http` instances (no shared backend) behind a real HAProxy. Its
//! `/readyz` health checks pass, `/healthz` answers through it, consecutive 2026-07-28 calls
//! rotate over the three instances and all succeed (they need no shared state), and the
//! balancer has no affinity: a handshake-era session opened on one instance is unknown on the
//! next one (404), which is why the cluster tests give the instances a shared Redis.

use mcpkit::client::ConnectMode;
use mcpkit::types::ProtocolVersion;
use mcpkit_test_support::cluster::Cluster;
use mcpkit_test_support::haproxy::LoggedRequest;
use serde_json::json;
use std::time::Duration;

use crate::support;

fn three_instances() -> Cluster {
    Cluster::builder(env!("CARGO_BIN_EXE_mcpkit")).instances(3).start()
}

/// The servers that answered the `count` logged requests for which `which` holds, in order
/// (waiting a little for HAProxy to log the last ones).
fn served_by(cluster: &Cluster, count: usize, which: impl Fn(&LoggedRequest) -> bool) -> Vec<String> {
    let found = cluster.balancer.wait_for_requests(count, Duration::from_secs(5), which);
    found.into_iter().map(|r| r.server).collect()
}

#[tokio::test]
async fn stateless_calls_rotate_over_every_instance_and_all_succeed() {
    let cluster = three_instances();
    let states = cluster.balancer.server_states().unwrap();
    assert_eq!(states.len(), 3, "{states:?}");
    assert!(states.iter().all(|(_, s)| s == "UP"), "{states:?}");

    let client = support::connect_http_mode(
        &cluster.balancer.url(),
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    )
    .await;
    for i in 0..9 {
        let text = format!("call {i}");
        let r = client.call_tool("echo", json!({"message": text})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some(text.as_str()));
    }
    let servers = served_by(&cluster, 9, |r| r.body_has("\"method\":\"tools/call\""));
    assert_eq!(servers.len(), 9, "{:#?}", cluster.balancer.log_lines());
    // Strict rotation: every window of three consecutive calls met the three instances.
    for window in servers.chunks(3) {
        let mut w = window.to_vec();
        w.sort();
        assert_eq!(w, ["i1", "i2", "i3"], "calls went to {servers:?}");
    }
    assert!(
        cluster.balancer.requests().iter().all(|r| r.status == 200),
        "{:#?}",
        cluster.balancer.requests()
    );
}

#[tokio::test]
async fn healthz_answers_through_the_balancer() {
    let cluster = three_instances();
    let http = reqwest::Client::new();
    for _ in 0..3 {
        let reply = http
            .get(format!("{}/healthz", cluster.balancer.base()))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
    }
    let health = served_by(&cluster, 3, |r| r.path == "/healthz");
    let mut seen = health.clone();
    seen.sort();
    assert_eq!(seen, ["i1", "i2", "i3"], "{health:?}");
    // Each instance answers /readyz directly too (what the health checks see).
    for instance in &cluster.instances {
        let reply = http.get(format!("{}/readyz", instance.base())).send().await.unwrap();
        assert_eq!(reply.status(), 200, "{}", instance.id());
    }
}

#[tokio::test]
async fn without_a_shared_backend_a_session_does_not_survive_the_next_hop() {
    let cluster = three_instances();
    let http = reqwest::Client::new();
    let post = |body: &'static str, session: Option<String>| {
        let mut req = http
            .post(cluster.balancer.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.body(body).send()
    };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let reply = post(init, None).await.unwrap();
    assert_eq!(reply.status(), 200);
    let session = reply.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = reply.bytes().await.unwrap();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let reply = post(ping, Some(session)).await.unwrap();
    assert_eq!(reply.status(), 404, "the next instance does not know the session");
    let servers = served_by(&cluster, 2, |r| r.method == "POST");
    assert_eq!(servers.len(), 2, "{:#?}", cluster.balancer.log_lines());
    assert_ne!(servers[0], servers[1], "round-robin, no stickiness: {servers:?}");
}
