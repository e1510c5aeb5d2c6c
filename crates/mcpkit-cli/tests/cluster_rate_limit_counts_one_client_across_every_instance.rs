//! Two `mcpkit serve --http --redis --rate-limit` instances behind a real HAProxy: one client
//! gets its rate from the deployment, not from each instance — of ten calls that the balancer
//! spreads over both, exactly the burst is served and the rest get 429 — and a limited call
//! costs one Redis command (`EVALSHA` of the take script; the 2026-07-28 `tools/call` needs no
//! other), counted with `INFO commandstats`.

use std::time::Duration;

use mcpkit_test_support::cluster::Cluster;
use mcpkit_test_support::redis::RedisProcess;
use serde_json::json;

use crate::cluster_wire::post_stateless_call;

/// A 2026-07-28 `tools/call` of `echo` through `url`: the status.
async fn call(http: &reqwest::Client, url: &str, id: u64) -> u16 {
    post_stateless_call(http, url, id, "echo", json!({ "message": "hi" }))
        .await
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_gets_its_burst_from_the_deployment_not_from_each_instance() {
    let redis = RedisProcess::start();
    let cluster = Cluster::builder(env!("CARGO_BIN_EXE_mcpkit"))
        .instances(2)
        .redis(redis.url())
        .arg("--rate-limit")
        .arg("6/m")
        .start();
    let http = reqwest::Client::new();
    let url = cluster.balancer.url();
    let mut statuses = Vec::new();
    for id in 0..10 {
        statuses.push(call(&http, &url, id).await);
    }
    assert_eq!(
        statuses,
        [200, 200, 200, 200, 200, 200, 429, 429, 429, 429],
        "{}",
        cluster.stderr()
    );
    // The balancer did spread them: both instances served calls, and both refused some.
    let served = cluster
        .balancer
        .wait_for_requests(10, Duration::from_secs(5), |r| r.body_has("\"tools/call\""));
    for id in ["i1", "i2"] {
        assert!(
            served.iter().any(|r| r.server == id && r.status == 200)
                && served.iter().any(|r| r.server == id && r.status == 429),
            "{id}: {served:#?}"
        );
    }
    // Each limited call is one round trip: the take script by its digest (`INFO commandstats`
    // counts the script's own TIME and GET too; nothing else is sent).
    redis.reset_stats();
    for id in 10..14 {
        assert_eq!(call(&http, &url, id).await, 429);
    }
    let stats = redis.command_stats();
    eprintln!("Redis commands for 4 limited calls: {stats:?}");
    assert_eq!(stats.get("evalsha"), Some(&4), "{stats:?}");
    let outside: Vec<_> = stats
        .keys()
        .filter(|k| !["evalsha", "time", "get", "set"].contains(&k.as_str()))
        .collect();
    assert!(outside.is_empty(), "{stats:?}");
}
