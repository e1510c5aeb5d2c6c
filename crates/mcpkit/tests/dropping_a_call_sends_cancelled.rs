//! Dropping an outbound request future (or aborting the task that awaits it) sends
//! `notifications/cancelled` for its id; the server's handler sees its cancellation token fire
//! and sends no response. The client keeps working.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::within;
use mcpkit::server::{State, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::{Client, Server};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The slow tool hands its cancellation token to the test when it starts.
struct Probe(mpsc::UnboundedSender<CancellationToken>);

fn server() -> (Server, mpsc::UnboundedReceiver<CancellationToken>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let server = Server::builder()
        .state(Arc::new(Probe(tx)))
        .tool(ToolDef::new(
            "slow",
            |token: CancellationToken, State(probe): State<Arc<Probe>>| async move {
                let _ = probe.0.send(token);
                tokio::time::sleep(Duration::from_secs(60)).await;
                "finished"
            },
        ))
        .tool(ToolDef::new("quick", || async { "quick" }))
        .build();
    (server, rx)
}

fn frames(pair: &TestPair, received: bool) -> Vec<Value> {
    let raw = if received {
        pair.server_received()
    } else {
        pair.server_sent()
    };
    raw.iter().filter_map(|f| serde_json::from_str(f).ok()).collect()
}

/// The id of the one `tools/call` of `slow` the server received.
fn slow_call_id(pair: &TestPair) -> Value {
    let calls: Vec<Value> = frames(pair, true)
        .into_iter()
        .filter(|v| v["method"] == "tools/call" && v["params"]["name"] == "slow")
        .map(|v| v["id"].clone())
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    calls[0].clone()
}

fn assert_cancelled_and_unanswered(pair: &TestPair) {
    let id = slow_call_id(pair);
    let cancels: Vec<Value> = frames(pair, true)
        .into_iter()
        .filter(|v| v["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancels.len(), 1, "expected one cancel: {cancels:?}");
    assert_eq!(cancels[0]["params"]["requestId"], id, "{cancels:?}");
    assert!(cancels[0].get("id").is_none(), "a cancel is a notification");
    let answered = frames(pair, false)
        .iter()
        .any(|v| v.get("method").is_none() && v["id"] == id);
    assert!(!answered, "the server answered the cancelled request {id}");
}

#[tokio::test]
async fn dropping_a_call_future_cancels_the_request() {
    let (server, mut started) = server();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    let call = pair.client.call_tool("slow", ());
    let token = {
        tokio::pin!(call);
        tokio::select! {
            r = &mut call => panic!("the slow call finished: {r:?}"),
            t = started.recv() => t.unwrap(),
        }
        // `call` is dropped here, unanswered.
    };
    within("the handler's token to fire", token.cancelled()).await;
    within("ping", pair.client.ping()).await.unwrap();
    assert_cancelled_and_unanswered(&pair);
    let r = within("quick", pair.client.call_tool("quick", ())).await.unwrap();
    assert!(!r.is_error());
}

#[tokio::test]
async fn aborting_the_task_of_a_call_cancels_the_request() {
    let (server, mut started) = server();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    let client = pair.client.clone();
    let task = tokio::spawn(async move { client.call_tool("slow", ()).await });
    let token = within("the tool to start", started.recv()).await.unwrap();
    task.abort();
    assert!(within("the aborted task", task).await.unwrap_err().is_cancelled());
    within("the handler's token to fire", token.cancelled()).await;
    within("ping", pair.client.ping()).await.unwrap();
    assert_cancelled_and_unanswered(&pair);
}

/// A call that completes normally sends no cancel when its future is dropped afterwards.
#[tokio::test]
async fn a_completed_call_sends_no_cancel() {
    let (server, _started) = server();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    for _ in 0..5 {
        within("quick", pair.client.call_tool("quick", ())).await.unwrap();
    }
    within("ping", pair.client.ping()).await.unwrap();
    let cancels = frames(&pair, true)
        .iter()
        .filter(|v| v["method"] == "notifications/cancelled")
        .count();
    assert_eq!(cancels, 0);
}
