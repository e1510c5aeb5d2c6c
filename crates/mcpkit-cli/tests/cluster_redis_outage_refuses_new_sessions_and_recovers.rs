//! Three `mcpkit serve --http --redis` instances behind HAProxy, and their Redis stopped: every
//! instance's `/readyz` fails (HAProxy then routes to the live instances, `/healthz`), a new
//! handshake-era session gets HTTP 503 with a JSON-RPC error body naming the cause, and
//! 2026-07-28 calls that need no shared state keep working through the balancer. Redis started
//! again on the same port: the same instances (never restarted) are ready again and open
//! sessions as before.

use crate::cluster_wire;

use std::time::{Duration, Instant};

use cluster_wire::{initialize_request, open_session, post, redis_cluster, stateless_client};
use mcpkit_test_support::cluster::Cluster;
use serde_json::{json, Value};

/// Poll until every instance's `/readyz` answers `status`; how long that took.
async fn until_every_readyz_is(http: &reqwest::Client, cluster: &Cluster, status: u16) -> Duration {
    let start = Instant::now();
    loop {
        let mut all = true;
        for i in &cluster.instances {
            let got = http.get(format!("{}/readyz", i.base())).send().await.unwrap().status();
            all &= got == status;
        }
        if all {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "/readyz never answered {status} on every instance"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Poll until HAProxy reports every instance of its ready pool in `state`.
fn until_the_ready_pool_is(cluster: &Cluster, state: &str) {
    let start = Instant::now();
    loop {
        let states = cluster.balancer.server_states().unwrap();
        if states.iter().all(|(_, s)| s == state) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "HAProxy: {states:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn echo_three_times(client: &mcpkit::Client) {
    for n in 0..3 {
        let text = format!("still here {n}");
        let r = client.call_tool("echo", json!({"message": text})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some(text.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_outage_is_503_for_new_sessions_and_instances_recover_by_themselves() {
    let (mut redis, cluster) = redis_cluster();
    let url = cluster.balancer.url();
    let http = reqwest::Client::new();
    open_session(&http, &url).await;
    let stateless = stateless_client(&url).await;
    echo_three_times(&stateless).await;
    let pids: Vec<u32> = cluster.instances.iter().map(|i| i.pid()).collect();

    redis.stop();
    let not_ready = until_every_readyz_is(&http, &cluster, 503).await;
    tokio::task::block_in_place(|| until_the_ready_pool_is(&cluster, "DOWN"));
    for i in &cluster.instances {
        let live = http.get(format!("{}/healthz", i.base())).send().await.unwrap();
        assert_eq!(live.status(), 200, "{} is alive", i.id());
    }

    // A new handshake-era session: 503, and a JSON-RPC error that says why.
    let reply = post(&http, &url, None, &initialize_request()).await;
    assert_eq!(reply.status(), 503);
    let body: Value = serde_json::from_slice(&reply.bytes().await.unwrap()).unwrap();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("redis") || message.contains("backend"), "{body}");
    assert!(body["error"]["code"].is_i64(), "{body}");

    // What needs no shared state goes on, on every instance in turn.
    echo_three_times(&stateless).await;
    let fresh = stateless_client(&url).await;
    echo_three_times(&fresh).await;

    // Redis back on the same port: the instances reconnect by themselves.
    redis.restart();
    let ready_again = until_every_readyz_is(&http, &cluster, 200).await;
    tokio::task::block_in_place(|| until_the_ready_pool_is(&cluster, "UP"));
    eprintln!("redis outage: /readyz 503 on every instance {not_ready:?} after the stop; 200 again {ready_again:?} after the restart");
    let session = open_session(&http, &url).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    for _ in 0..3 {
        // Each ping lands on the next instance: the new session is known everywhere.
        let reply = post(&http, &url, Some(&session), &ping).await;
        assert_eq!(reply.status(), 200);
    }
    echo_three_times(&stateless).await;
    let now: Vec<u32> = cluster.instances.iter().map(|i| i.pid()).collect();
    assert_eq!(pids, now, "no instance was restarted");
}
