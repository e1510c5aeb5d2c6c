//! "Cancel" in `mcpkit dev`'s page (`POST /api/cancel`) stops a running call: the call answers
//! `cancelled`, the client sends `notifications/cancelled` for it (seen in the page's event
//! stream, which carries every message), and the dialog the call was waiting on is closed.
//! In a real headless Chromium: a long call's progress moves the progress bar, "Cancel" ends
//! it ("Cancelled.", `notifications/cancelled` in Messages); a call run as a task shows in
//! Tasks with its status, and "Cancel task" cancels it on the server (`tasks/cancel`); one left
//! to run ends completed, its result in Result.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use fantoccini::Locator;
use futures_util::FutureExt as _;
use serde_json::{json, Value};

use crate::support::browser::Browser;
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

const TOOLS: &str = "//section[@id='tools']";
const FORM: &str = "//form[@id='call-form']";

#[tokio::test(flavor = "multi_thread")]
async fn cancel_in_the_browser_stops_the_call_and_the_task() {
    let browser = Browser::start().await;
    let outcome = AssertUnwindSafe(in_the_browser(&browser)).catch_unwind().await;
    browser.close().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn in_the_browser(b: &Browser) {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    b.client().goto(&dev.url).await.unwrap();

    // A call of 30 s: its progress moves the bar; "Cancel" ends it at once.
    b.button(TOOLS, "slow_compute").await.click().await.unwrap();
    b.wait_text("#call-name", "slow_compute").await;
    b.labelled(FORM, "seconds").await.send_keys("30").await.unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#progress-text", "/ 300 step").await;
    let bar = b.client().find(Locator::Id("progress-bar")).await.unwrap();
    assert_eq!(bar.attr("max").await.unwrap().as_deref(), Some("300"));
    // The bar follows the notifications: its value moves past the first step.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let value = bar.attr("value").await.unwrap().unwrap_or_default();
        if value.parse::<f64>().is_ok_and(|v| v >= 2.0) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the bar did not move: {value:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let started = std::time::Instant::now();
    b.button("//section[@id='result']", "Cancel")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#result-body", "Cancelled.").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "Cancel took {:?}",
        started.elapsed()
    );
    assert!(!b
        .client()
        .find(Locator::Id("progress"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap());
    b.wait_text("#message-list", "notifications/cancelled").await;

    // As a task: listed in Tasks (a landmark) with its status; "Cancel task" cancels it on the
    // server, and the call ends.
    let tasks = b.wait("#tasks").await;
    assert_eq!(b.role_and_name(&tasks).await, ("region".to_owned(), "Tasks".to_owned()));
    b.button(TOOLS, "slow_compute").await.click().await.unwrap();
    b.wait_text("#call-name", "slow_compute").await;
    b.labelled(FORM, "seconds").await.send_keys("30").await.unwrap();
    b.labelled(FORM, "Run as a task").await.click().await.unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#task-list", "working").await;
    b.button("//section[@id='tasks']", "Cancel task")
        .await
        .click()
        .await
        .unwrap();
    b.wait_text("#task-list", "cancelled").await;
    b.wait_text("#message-list", "tasks/cancel").await;
    b.wait_text("#result-body", "cancelled").await;

    // A task left to run ends completed, its result in Result.
    b.button(TOOLS, "slow_compute").await.click().await.unwrap();
    b.wait_text("#call-name", "slow_compute").await;
    b.labelled(FORM, "seconds").await.send_keys("0.5").await.unwrap();
    b.labelled(FORM, "label").await.send_keys("briefly").await.unwrap();
    b.labelled(FORM, "Run as a task").await.click().await.unwrap();
    b.button(FORM, "Call").await.click().await.unwrap();
    b.wait_text("#result-body", "Computed briefly in 0.5s").await;
    let tasks = b.wait_text("#task-list", "completed").await;
    assert_eq!(tasks.matches("cancelled").count(), 1, "{tasks}");
    assert_eq!(tasks.matches("completed").count(), 1, "{tasks}");
    b.wait_text("#message-list", "tasks/get").await;

    b.assert_no_console_errors().await;
}
