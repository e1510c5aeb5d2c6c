//! `PeerOptions::max_concurrent_requests` bounds how many incoming requests run at once; the
//! rest wait for a slot and all are answered.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::within;
use mcpkit::server::{State, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::{Client, PeerOptions, Server};

#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    peak: AtomicUsize,
    done: AtomicUsize,
}

fn server(limit: Option<usize>) -> (Server, Arc<Gauge>) {
    let gauge = Arc::new(Gauge::default());
    let mut b =
        Server::builder()
            .state(gauge.clone())
            .tool(ToolDef::new("slow", |State(g): State<Arc<Gauge>>| async move {
                let now = g.now.fetch_add(1, Ordering::SeqCst) + 1;
                g.peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                g.now.fetch_sub(1, Ordering::SeqCst);
                g.done.fetch_add(1, Ordering::SeqCst);
                "done"
            }));
    if let Some(n) = limit {
        b = b.peer_options(PeerOptions {
            max_concurrent_requests: n,
            ..Default::default()
        });
    }
    (b.build(), gauge)
}

async fn five_slow_calls(client: &Client) {
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..5 {
        let c = client.clone();
        calls.spawn(async move { c.call_tool("slow", ()).await });
    }
    while let Some(r) = within("the slow calls", calls.join_next()).await {
        assert!(!r.unwrap().unwrap().is_error());
    }
}

#[tokio::test]
async fn at_most_the_limit_of_requests_run_at_once() {
    let (server, gauge) = server(Some(2));
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    five_slow_calls(&pair.client).await;
    assert_eq!(gauge.done.load(Ordering::SeqCst), 5, "every call ran");
    assert_eq!(
        gauge.peak.load(Ordering::SeqCst),
        2,
        "the limit was not used or not respected"
    );
}

/// The control: without a limit, the same calls all run at once (so the test above can tell).
#[tokio::test]
async fn without_a_limit_the_calls_run_concurrently() {
    let (server, gauge) = server(None);
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    five_slow_calls(&pair.client).await;
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 5);
}
