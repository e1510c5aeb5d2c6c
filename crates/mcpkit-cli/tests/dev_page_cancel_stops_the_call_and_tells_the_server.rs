//! "Cancel" in `mcpkit dev`'s page (`POST /api/cancel`) stops a running call: the call answers
//! `cancelled`, the client sends `notifications/cancelled` for it (seen in the page's event
//! stream, which carries every message), and the dialog the call was waiting on is closed.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::dev_host::DevHost;

#[tokio::test(flavor = "multi_thread")]
async fn cancel_ends_the_call_with_notifications_cancelled() {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let mut events = dev.events().await;
    events.until("connected", |e| e["kind"] == "connected").await;

    let call = dev.spawn_call(json!({"call": 7, "tool": "test_elicitation", "arguments": {"message": "wait"}}));
    let call_id = events
        .until("tools/call", |e| {
            e["kind"] == "message" && e["text"].as_str().is_some_and(|t| t.contains("\"tools/call\""))
        })
        .await;
    let sent: Value = serde_json::from_str(call_id["text"].as_str().unwrap()).unwrap();
    // The tool now waits for the page's answer to its elicitation.
    let ask = events.until("ask", |e| e["kind"] == "ask").await;
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["message"], "wait");

    assert_eq!(
        dev.post("/api/cancel", &json!({"call": 7})).await,
        json!({"cancelled": true})
    );
    let answered = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answered, json!({"cancelled": true}));
    let cancelled = events
        .until("notifications/cancelled", |e| {
            e["kind"] == "message"
                && e["dir"] == "out"
                && e["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("notifications/cancelled"))
        })
        .await;
    let cancelled: Value = serde_json::from_str(cancelled["text"].as_str().unwrap()).unwrap();
    assert_eq!(cancelled["params"]["requestId"], sent["id"]);
    // The server gives up its question in turn: the page is told to close the dialog.
    events
        .until("answered", |e| e["kind"] == "answered" && e["id"] == ask["id"])
        .await;
    // A call that is not running is not cancelled twice.
    assert_eq!(
        dev.post("/api/cancel", &json!({"call": 7})).await,
        json!({"cancelled": false})
    );
}
