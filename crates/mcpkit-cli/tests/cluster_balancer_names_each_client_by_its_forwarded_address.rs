//! Behind the tested HAProxy (`option forwardfor`) an instance run with `--trusted-proxy
//! 127.0.0.1/32` (the balancer's address) counts `--max-sessions-per-client` per client, not
//! per balancer: clients connecting to HAProxy from different loopback addresses (127.0.0.2,
//! 127.0.0.3, …) each get their own quota, and a client that writes someone else's address in
//! its own `X-Forwarded-For` is still counted as itself (HAProxy appends the real one).

use std::net::IpAddr;

use mcpkit_test_support::cluster::Cluster;
use serde_json::{json, Value};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"forwarded-test","version":"1"}}}"#;

/// An `initialize` through the balancer from the local address `from`, with `extra` headers:
/// the status, and the JSON-RPC body of a refusal.
async fn initialize_from(url: &str, from: [u8; 4], extra: &[(&str, &str)]) -> (u16, Value) {
    let http = reqwest::Client::builder()
        .local_address(IpAddr::from(from))
        .build()
        .unwrap();
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let reply = request.send().await.unwrap();
    let status = reply.status().as_u16();
    let has_session = reply.headers().contains_key("mcp-session-id");
    let body = reply.text().await.unwrap();
    if status == 200 {
        assert!(has_session, "a session id: {body}");
        return (status, Value::Null);
    }
    (status, serde_json::from_str(&body).unwrap_or(json!(body)))
}

fn assert_refused_for_this_client((status, body): (u16, Value), what: &str) {
    assert_eq!(status, 503, "{what}: {body}");
    assert_eq!(
        body["error"]["message"], "Too many sessions for this client",
        "{what}: {body}"
    );
}

#[tokio::test]
async fn each_client_behind_the_balancer_has_its_own_session_quota() {
    let cluster = Cluster::builder(env!("CARGO_BIN_EXE_mcpkit"))
        .instances(1)
        .arg("--max-sessions-per-client")
        .arg("1")
        .start();
    let url = cluster.balancer.url();
    assert_eq!(
        initialize_from(&url, [127, 0, 0, 2], &[]).await.0,
        200,
        "the first client"
    );
    assert_eq!(
        initialize_from(&url, [127, 0, 0, 3], &[]).await.0,
        200,
        "a second client through the same balancer"
    );
    assert_refused_for_this_client(initialize_from(&url, [127, 0, 0, 2], &[]).await, "the first again");
    // Claiming to be a fresh client does not help: HAProxy appends the address it saw.
    assert_refused_for_this_client(
        initialize_from(&url, [127, 0, 0, 2], &[("x-forwarded-for", "203.0.113.9")]).await,
        "the first client naming another address",
    );
    // Naming another client does not use up that client's quota either.
    let (status, body) = initialize_from(&url, [127, 0, 0, 4], &[("x-forwarded-for", "127.0.0.3")]).await;
    assert_eq!(status, 200, "a client naming the second one is itself: {body}");
    let stderr = cluster.instances[0].stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
}
