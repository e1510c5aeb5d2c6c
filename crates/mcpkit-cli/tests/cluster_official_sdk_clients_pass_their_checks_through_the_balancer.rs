//! The official SDK clients' interop checks (tests-interop/, the same scripts the single-instance
//! interop tests run) against three `mcpkit serve --http --redis` instances behind HAProxy
//! round-robin with one Redis: the Python SDK in the handshake era and at 2026-07-28, the
//! TypeScript SDK 1.x (handshake era) and v2 (2026-07-28), all over Streamable HTTP. Every
//! check passes, and HAProxy's log shows the messages that had to cross instances did: the
//! answer to a sampling or elicitation request landed on another instance than the call that
//! asked, a session's requests were spread over all three, the rounds of a multi round-trip
//! call were served by different instances, and the triggers of `list_changed` ran on another
//! instance than the `subscriptions/listen` stream that received it.

use crate::cluster_wire;
use crate::support::{self, peers};

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use cluster_wire::redis_cluster;
use mcpkit_test_support::cluster::Cluster;
use mcpkit_test_support::haproxy::LoggedRequest;

/// The instances that served the logged requests for which `which` holds.
fn servers(cluster: &Cluster, which: impl Fn(&LoggedRequest) -> bool) -> BTreeSet<String> {
    let all = cluster
        .balancer
        .wait_for_requests(usize::MAX, Duration::from_millis(300), which);
    all.into_iter().map(|r| r.server).collect()
}

/// A JSON-RPC response (a `result` and no `method`) carrying `needle`.
fn response_with(needle: &'static str) -> impl Fn(&LoggedRequest) -> bool {
    move |r| r.body_has("\"result\"") && !r.body_has("\"method\"") && r.body_has(needle)
}

fn tool_call(name: &'static str) -> impl Fn(&LoggedRequest) -> bool {
    move |r| r.body_has("\"method\":\"tools/call\"") && r.body_has(&format!("\"name\":\"{name}\""))
}

/// Assert the answer to the server→client request a call of `tool` made landed on another
/// instance than the call itself.
fn answer_crossed(cluster: &Cluster, tool: &'static str, answer: &'static str) {
    let call = servers(cluster, tool_call(tool));
    let reply = servers(cluster, response_with(answer));
    assert_eq!(call.len(), 1, "{tool} was called once: {call:?}");
    assert_eq!(
        reply.len(),
        1,
        "answered once: {reply:?}\n{:#?}",
        cluster.balancer.log_lines()
    );
    assert_ne!(call, reply, "the answer to {tool}'s request landed where the call ran");
}

fn every_instance_served(cluster: &Cluster) {
    let all = servers(cluster, |r| r.method == "POST");
    assert_eq!(all.len(), 3, "POSTs were served by {all:?}");
}

#[test]
fn python_sdk_client_in_the_handshake_era() {
    let (_redis, cluster) = redis_cluster();
    support::run_client_checks(
        "Python",
        &peers::python(),
        &peers::repo().join("tests-interop/python/client_checks.py"),
        &["http", &cluster.balancer.url()],
    );
    every_instance_served(&cluster);
    answer_crossed(&cluster, "test_sampling", "\"model\":\"interop-model\"");
    answer_crossed(&cluster, "test_elicitation", "\"action\":\"accept\"");
}

#[test]
fn typescript_sdk_client_in_the_handshake_era() {
    let (_redis, cluster) = redis_cluster();
    let dir = peers::node_package_dir("ts", "@modelcontextprotocol/sdk");
    support::run_client_checks(
        "TypeScript",
        Path::new("node"),
        &dir.join("client_checks.mjs"),
        &["http", &cluster.balancer.url()],
    );
    every_instance_served(&cluster);
    answer_crossed(&cluster, "test_sampling", "\"model\":\"interop-model\"");
    answer_crossed(&cluster, "test_elicitation", "\"action\":\"accept\"");
}

/// Rounds of the multi round-trip tool `tool` ran on more than one instance.
fn rounds_crossed(cluster: &Cluster, tool: &'static str) {
    let rounds = cluster
        .balancer
        .wait_for_requests(2, Duration::from_secs(2), tool_call(tool));
    assert!(rounds.len() >= 2, "{tool}: {rounds:#?}");
    let on: BTreeSet<&str> = rounds.iter().map(|r| r.server.as_str()).collect();
    assert!(on.len() >= 2, "every round of {tool} ran on {on:?}");
}

#[test]
fn python_sdk_client_at_2026_07_28() {
    let (_redis, cluster) = redis_cluster();
    support::run_client_checks(
        "Python (2026-07-28)",
        &peers::python(),
        &peers::repo().join("tests-interop/python/stateless_checks.py"),
        &["2026-07-28", "http", &cluster.balancer.url()],
    );
    every_instance_served(&cluster);
    rounds_crossed(&cluster, "test_input_required_result_multi_round");
    rounds_crossed(&cluster, "test_input_required_result_request_state");
    // The listen streams stayed on one instance each; the triggers ran on the others too.
    let listen = servers(&cluster, |r| r.body_has("\"method\":\"subscriptions/listen\""));
    let triggers = servers(&cluster, tool_call("test_trigger_tool_change"));
    assert!(!listen.is_empty(), "no subscriptions/listen stream was logged");
    assert!(
        triggers.iter().any(|t| !listen.contains(t)) || listen.len() > 1,
        "{listen:?} {triggers:?}"
    );
}

#[test]
fn typescript_sdk_v2_client_at_2026_07_28() {
    let (_redis, cluster) = redis_cluster();
    let dir = peers::node_package_dir("ts2", "@modelcontextprotocol/client");
    support::run_client_checks(
        "TypeScript v2 (2026-07-28)",
        Path::new("node"),
        &dir.join("client_checks_v2.mjs"),
        &["2026-07-28", "http", &cluster.balancer.url()],
    );
    every_instance_served(&cluster);
    rounds_crossed(&cluster, "test_sampling");
}
