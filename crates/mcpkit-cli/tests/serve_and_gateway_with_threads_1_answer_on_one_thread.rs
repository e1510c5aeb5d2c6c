//! `--threads N` (`mcpkit serve --http`, `mcpkit gateway`): N worker threads answer requests;
//! with 1 the endpoint runs on the process's main thread alone (no worker to wake on a call's
//! way). Thread counts read from /proc (Linux).

use serde_json::json;
use support::gateway::{url_upstream, Gateway, ServeUpstream};

use crate::support;

/// How many threads process `pid` runs now.
#[cfg(target_os = "linux")]
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Threads line in:\n{status}"))
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_thread_serves_and_forwards_calls() {
    let upstream = ServeUpstream::start(&["--threads", "1"]);
    let gateway = Gateway::start(&url_upstream("web", &upstream.url), &["--threads", "1"]);
    let client = support::connect_http(&gateway.url).await;
    let calls = (0..16).map(|i| {
        let client = client.clone();
        async move {
            client
                .call_tool("web_echo", json!({ "message": format!("call {i}") }))
                .await
        }
    });
    for (i, result) in futures_util::future::join_all(calls).await.into_iter().enumerate() {
        let result = result.unwrap();
        assert_eq!(
            result.content[0].as_text(),
            Some(format!("call {i}").as_str()),
            "{result:?}"
        );
    }
    assert_eq!(threads(upstream.pid().unwrap()), 1, "serve --http --threads 1");
    // The gateway's own threads beside the runtime: none of them answers calls.
    let gateway_threads = threads(gateway.pid());
    let wider = Gateway::start(&url_upstream("web", &upstream.url), &["--threads", "3"]);
    let wider_client = support::connect_http(&wider.url).await;
    wider_client
        .call_tool("web_echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert_eq!(
        threads(wider.pid()),
        gateway_threads + 3,
        "--threads 3 adds three workers to what --threads 1 runs"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_n_runs_n_workers() {
    let upstream = ServeUpstream::start(&["--threads", "3"]);
    let client = support::connect_http(&upstream.url).await;
    client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(threads(upstream.pid().unwrap()), 4, "the main thread and three workers");
}

#[test]
fn threads_needs_an_http_endpoint_and_at_least_one() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .args(args)
            .output()
            .unwrap()
    };
    let stdio = run(&["serve", "--threads", "2"]);
    assert_eq!(stdio.status.code(), Some(2), "{stdio:?}");
    assert!(String::from_utf8_lossy(&stdio.stderr).contains("--http"), "{stdio:?}");
    let zero = run(&["serve", "--http", "127.0.0.1:0", "--threads", "0"]);
    assert_eq!(zero.status.code(), Some(2), "{zero:?}");
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--threads"), "{zero:?}");
}
