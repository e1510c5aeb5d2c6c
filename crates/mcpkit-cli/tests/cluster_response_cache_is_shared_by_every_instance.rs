//! Two `mcpkit serve --http --redis --cache-ttl` instances behind a real HAProxy share one
//! response cache: a result one instance computed is answered by the other from Redis (one
//! `SET` for two calls), and a catalogue change on either forgets it for both (the next call
//! computes again). Counted with `INFO commandstats`.

use mcpkit_test_support::cluster::Cluster;
use mcpkit_test_support::redis::RedisProcess;
use serde_json::{json, Value};

use crate::cluster_wire::post_stateless_call;

/// A 2026-07-28 `tools/call` of `tool` through `url`: the reply.
async fn call(http: &reqwest::Client, url: &str, id: u64, tool: &str, arguments: Value) -> Value {
    post_stateless_call(http, url, id, tool, arguments)
        .await
        .json()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_computed_on_one_instance_is_answered_by_the_other() {
    let redis = RedisProcess::start();
    let cluster = Cluster::builder(env!("CARGO_BIN_EXE_mcpkit"))
        .instances(2)
        .redis(redis.url())
        .arg("--cache-ttl")
        .arg("60s")
        .arg("--cache-tool")
        .arg("echo")
        .start();
    let http = reqwest::Client::new();
    let url = cluster.balancer.url();
    redis.reset_stats();
    let sets = |redis: &RedisProcess| redis.command_stats().get("set").copied().unwrap_or(0);
    // Round robin: the first call on one instance, the second on the other.
    for id in 0..2 {
        let r = call(&http, &url, id, "echo", json!({ "message": "hi" })).await;
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    }
    let served = cluster
        .balancer
        .wait_for_requests(2, std::time::Duration::from_secs(5), |r| r.body_has("\"tools/call\""));
    let mut by: Vec<_> = served.iter().map(|r| r.server.clone()).collect();
    by.sort();
    assert_eq!(by, ["i1", "i2"], "{served:#?}");
    assert_eq!(
        sets(&redis),
        1,
        "one result kept, the other call answered from it: {:?}",
        redis.command_stats()
    );

    // A change of the catalogue (on one instance, relayed to the other) forgets it.
    let direct = &cluster.instances[0].url();
    let r = call(&http, direct, 10, "test_trigger_tool_change", json!({})).await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("test_dynamic_tool"),
        "{r}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let before = sets(&redis);
    call(&http, &url, 11, "echo", json!({ "message": "hi" })).await;
    assert_eq!(
        sets(&redis),
        before + 1,
        "computed again after the change: {:?}",
        redis.command_stats()
    );
}
