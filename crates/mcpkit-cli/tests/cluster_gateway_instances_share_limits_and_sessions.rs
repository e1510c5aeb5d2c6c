//! Two `mcpkit gateway` instances on one real Redis behind a real HAProxy act as one gateway:
//! a per-client rate limit of the config file (`[rate_limit] per_client`) holds across both —
//! of ten calls the balancer spreads over them, exactly the burst is served and the rest get
//! 429, each instance refusing some — and a handshake-era session opened through the balancer
//! keeps working (calls through the upstream included) after the instance that opened it is
//! SIGKILLed.

use std::net::SocketAddr;
use std::time::Duration;

use mcpkit_test_support::cluster::TRUSTED_PROXY;
use mcpkit_test_support::haproxy::Balancer;
use mcpkit_test_support::redis::RedisProcess;
use serde_json::json;
use support::gateway::{stdio_reference, Gateway};

use crate::cluster_wire::{open_session, post, post_stateless_call};
use crate::support;

/// Two gateways (`i1`, `i2`) on `redis` with `config`, behind a balancer.
fn two_gateways(redis: &RedisProcess, config: &str) -> (Vec<Gateway>, Balancer) {
    let url = redis.url();
    let gateways: Vec<Gateway> = ["i1", "i2"]
        .iter()
        .map(|id| {
            Gateway::start(
                config,
                &["--redis", &url, "--instance-id", id, "--trusted-proxy", TRUSTED_PROXY],
            )
        })
        .collect();
    let backends: Vec<(String, SocketAddr)> = gateways
        .iter()
        .zip(["i1", "i2"])
        .map(|(g, id)| (id.to_owned(), g.base.trim_start_matches("http://").parse().unwrap()))
        .collect();
    let balancer = Balancer::start(&backends);
    (gateways, balancer)
}

fn stderr(gateways: &[Gateway]) -> String {
    gateways
        .iter()
        .enumerate()
        .map(|(i, g)| format!("--- i{} stderr:\n{}", i + 1, g.stderr.text()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_client_rate_limit_holds_across_both_instances() {
    let redis = RedisProcess::start();
    let config = format!("{}\n[rate_limit]\nper_client = \"5/m\"\n", stdio_reference("ref"));
    let (gateways, balancer) = two_gateways(&redis, &config);
    let http = reqwest::Client::new();
    let mut statuses = Vec::new();
    for id in 0..10 {
        let reply = post_stateless_call(&http, &balancer.url(), id, "ref_echo", json!({"message": "hi"})).await;
        statuses.push(reply.status().as_u16());
    }
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 200, 429, 429, 429, 429, 429],
        "{}",
        stderr(&gateways)
    );
    let served = balancer.wait_for_requests(10, Duration::from_secs(5), |r| r.body_has("\"tools/call\""));
    for id in ["i1", "i2"] {
        assert!(
            served.iter().any(|r| r.server == id && r.status == 200)
                && served.iter().any(|r| r.server == id && r.status == 429),
            "{id}: {served:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_survives_the_instance_that_opened_it() {
    let redis = RedisProcess::start();
    let (mut gateways, balancer) = two_gateways(&redis, &stdio_reference("ref"));
    let http = reqwest::Client::new();
    let url = balancer.url();
    let session = open_session(&http, &url).await;
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "ref_echo", "arguments": {"message": format!("call {id}")}}})
    };
    let reply = post(&http, &url, Some(&session), &call(2)).await;
    assert_eq!(reply.status(), 200);
    let body = mcpkit_test_support::sse::reply_of(&reply.text().await.unwrap());
    assert_eq!(body["result"]["content"][0]["text"], "call 2");
    // The instance that answered `initialize`.
    let inits = balancer.wait_for_requests(1, Duration::from_secs(5), |r| r.body_has("\"initialize\""));
    let opener = inits[0].server.clone();
    let (killed, other) = if opener == "i1" { (0, "i2") } else { (1, "i1") };
    gateways[killed].kill();
    assert!(
        balancer.wait_until_down(&opener, Duration::from_secs(10)).is_some(),
        "the balancer still sends to {opener}"
    );
    for id in 3..7 {
        let reply = post(&http, &url, Some(&session), &call(id)).await;
        assert_eq!(
            reply.status(),
            200,
            "call {id} on the session {opener} opened; {}",
            stderr(&gateways)
        );
        let body = mcpkit_test_support::sse::reply_of(&reply.text().await.unwrap());
        assert_eq!(body["result"]["content"][0]["text"], format!("call {id}"), "{body}");
    }
    let after = balancer.wait_for_requests(5, Duration::from_secs(5), |r| r.body_has("\"tools/call\""));
    assert!(
        after.iter().filter(|r| r.server == other && r.status == 200).count() >= 4,
        "{after:#?}"
    );
}
