//! `notifications/progress` for a request is routed to the caller that asked for it, and every
//! progress notification the server sent before the result reaches the caller — even when it
//! arrives in the same read as the result.

use crate::common;

use common::within;
use mcpkit::client::{CallOptions, ServerNotification};
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::{Client, Server};
use tokio::sync::mpsc;

/// Reports progress 1..=5 of 5 without pausing, then returns at once: the progress
/// notifications and the result leave in one burst.
fn burst() -> Server {
    Server::builder()
        .tool(ToolDef::new("burst", |cx: RequestContext| async move {
            for i in 1..=5 {
                cx.progress(f64::from(i), Some(5.0), None);
            }
            "done"
        }))
        .build()
}

/// Reports progress 1..=5 of 5, then waits a little before returning, so the result never
/// shares a read with the progress.
fn paced() -> Server {
    Server::builder()
        .tool(ToolDef::new("paced", |cx: RequestContext| async move {
            for i in 1..=5 {
                cx.progress(f64::from(i), Some(5.0), None);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            "done"
        }))
        .build()
}

#[tokio::test]
async fn every_progress_sent_before_the_result_reaches_the_caller() {
    let pair = within("connect", TestPair::connect(burst(), Client::builder()))
        .await
        .unwrap();
    for round in 0..20 {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let options = CallOptions {
            progress: Some(tx),
            ..Default::default()
        };
        within("burst", pair.client.call_tool_with("burst", (), options))
            .await
            .unwrap();
        let mut got = Vec::new();
        while let Ok(p) = rx.try_recv() {
            got.push(p.progress);
        }
        assert_eq!(
            got,
            [1.0, 2.0, 3.0, 4.0, 5.0],
            "round {round}: the caller got progress {got:?}"
        );
    }
}

#[tokio::test]
async fn progress_goes_only_to_the_call_that_asked_for_it() {
    let pair = within("connect", TestPair::connect(paced(), Client::builder()))
        .await
        .unwrap();
    let mut notes = pair.client.notifications();
    let (tx_a, mut rx_a) = mpsc::unbounded_channel();
    let (tx_b, mut rx_b) = mpsc::unbounded_channel();
    let a = pair.client.call_tool_with(
        "paced",
        (),
        CallOptions {
            progress: Some(tx_a),
            ..Default::default()
        },
    );
    let b = pair.client.call_tool_with(
        "paced",
        (),
        CallOptions {
            progress: Some(tx_b),
            ..Default::default()
        },
    );
    let (ra, rb) = within("two calls", async { tokio::join!(a, b) }).await;
    ra.unwrap();
    rb.unwrap();
    let mut tokens = std::collections::BTreeSet::new();
    for rx in [&mut rx_a, &mut rx_b] {
        let mut mine = std::collections::BTreeSet::new();
        let mut count = 0;
        while let Ok(p) = rx.try_recv() {
            mine.insert(p.progress_token.to_string());
            count += 1;
        }
        assert_eq!(count, 5, "a caller got {count} progress notifications, not its 5");
        assert_eq!(mine.len(), 1, "one caller got progress for several tokens: {mine:?}");
        tokens.extend(mine);
    }
    // A call without a progress sink sends no token, and the server then reports nothing.
    within("no progress", pair.client.call_tool("paced", ())).await.unwrap();
    // The notification stream sees all of it too (10 notifications for the two calls).
    let mut seen = 0;
    while seen < 10 {
        match within("progress on the stream", notes.recv()).await.unwrap() {
            ServerNotification::Progress(_) => seen += 1,
            other => panic!("unexpected notification {other:?}"),
        }
    }
    let progress_frames = pair
        .server_sent()
        .iter()
        .filter(|f| f.contains("notifications/progress"))
        .count();
    assert_eq!(progress_frames, 10, "a call without a progress token got progress");
    assert_eq!(tokens.len(), 2, "each call has its own progress token");
}
