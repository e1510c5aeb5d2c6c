//! Ctrl-C stops `mcpkit dev` at once even with the page open: its event stream (which never ends
//! on its own) is closed, a call waiting on the page's answer is cancelled and answered, and the
//! process exits 0.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::dev_host::DevHost;

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_ends_the_streams_and_the_calls_and_exits() {
    let mut dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let mut events = dev.events().await;
    events.until("connected", |e| e["kind"] == "connected").await;
    let call = dev.spawn_call(json!({"call": 1, "tool": "test_elicitation", "arguments": {"message": "wait"}}));
    events.until("ask", |e| e["kind"] == "ask").await;

    let sent = Command::new("kill")
        .args(["-INT", &dev.pid().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert!(
        events.ends_within(Duration::from_secs(10)).await,
        "the event stream stayed open after Ctrl-C"
    );
    let answered = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the waiting call was not answered after Ctrl-C")
        .unwrap();
    assert_eq!(answered, json!({"cancelled": true}));
    let status = dev
        .wait_exit(Duration::from_secs(10))
        .expect("mcpkit dev still runs 10 s after Ctrl-C");
    assert_eq!(status.code(), Some(0), "stderr: {}", dev.stderr());
}
