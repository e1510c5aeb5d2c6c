//! A downstream client that gives up on a slow call through `mcpkit gateway` stops the
//! upstream's work: the upstream `mcpkit serve --http --trace-wire` receives
//! `notifications/cancelled` for the very `tools/call` the gateway sent it, its progress stops,
//! and it never sends the tool's result. On a handshake-era session and on the stateless wire.

use std::time::Duration;

use mcpkit::client::{CallOptions, ConnectMode};
use mcpkit::types::ProtocolVersion;
use serde_json::{json, Value};
use support::gateway::{url_upstream, Gateway, ServeUpstream};

use crate::support;

/// The JSON-RPC messages the upstream received (`<- client {…}` lines of `--trace-wire`).
fn received(upstream: &ServeUpstream) -> Vec<Value> {
    upstream
        .stderr
        .text()
        .lines()
        .filter(|l| l.contains(" <- client "))
        .filter_map(|l| serde_json::from_str(&l[l.find('{')?..]).ok())
        .collect()
}

/// The messages the upstream sent (`-> client {…}`).
fn sent(upstream: &ServeUpstream) -> Vec<Value> {
    upstream
        .stderr
        .text()
        .lines()
        .filter(|l| l.contains(" -> client "))
        .filter_map(|l| serde_json::from_str(&l[l.find('{')?..]).ok())
        .collect()
}

/// The first message the upstream received for which `which` holds, waiting 5 s at most.
async fn received_within(upstream: &ServeUpstream, which: impl Fn(&Value) -> bool) -> Option<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let found = received(upstream).into_iter().find(|m| which(m));
        if found.is_some() || std::time::Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn cancel_reaches_the_upstream(mode: ConnectMode, label: &str) {
    let upstream = ServeUpstream::start(&["--trace-wire"]);
    let gateway = Gateway::start(&url_upstream("ref", &upstream.url), &[]);
    let client = support::connect_http_mode(&gateway.url, mode).await;
    let (progress_tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let running = tokio::spawn({
        let client = client.clone();
        let label = label.to_owned();
        async move {
            let options = CallOptions {
                progress: Some(progress_tx),
                ..CallOptions::default()
            };
            client
                .call_tool_with("ref_slow_compute", json!({"seconds": 30, "label": label}), options)
                .await
        }
    });
    // The upstream is working: its progress comes through the gateway.
    let first = tokio::time::timeout(Duration::from_secs(15), progress.recv()).await;
    assert!(matches!(first, Ok(Some(_))), "no progress: {}", gateway.stderr.text());
    // (Its trace line may be read a little after the progress arrived.)
    let call = received_within(&upstream, |m| {
        m["method"] == "tools/call" && m["params"]["arguments"]["label"] == label
    })
    .await
    .unwrap_or_else(|| panic!("the upstream got no tools/call: {}", upstream.stderr.text()));
    let call_id = call["id"].clone();
    // Give up: the dropped request is cancelled.
    running.abort();
    let _ = running.await;
    let cancelled = received_within(&upstream, |m| m["method"] == "notifications/cancelled").await;
    let Some(cancelled) = cancelled else {
        panic!(
            "{mode:?}: the upstream never got notifications/cancelled; gateway:\n{}\nupstream:\n{}",
            gateway.stderr.text(),
            upstream.stderr.text()
        );
    };
    assert_eq!(cancelled["params"]["requestId"], call_id, "{cancelled}");
    // Its work stopped: no progress after a pause, and never a result.
    let progress_lines = |u: &ServeUpstream| {
        sent(u)
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count()
    };
    // (A tick already under way when the cancellation arrived may still be sent.)
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = progress_lines(&upstream);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        progress_lines(&upstream),
        before,
        "{mode:?}: the upstream goes on working"
    );
    assert!(
        !sent(&upstream)
            .iter()
            .any(|m| m["id"] == call_id && m.get("method").is_none()),
        "{mode:?}: the upstream answered the cancelled call"
    );
    // The session is still good.
    let r = client.call_tool("ref_echo", json!({"message": "after"})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("after"));
}

#[tokio::test]
async fn a_handshake_era_cancel_reaches_the_upstream() {
    cancel_reaches_the_upstream(ConnectMode::Handshake, "cancel-me-handshake").await;
}

#[tokio::test]
async fn a_stateless_era_cancel_reaches_the_upstream() {
    cancel_reaches_the_upstream(ConnectMode::Pinned(ProtocolVersion::V2026_07_28), "cancel-me-stateless").await;
}
