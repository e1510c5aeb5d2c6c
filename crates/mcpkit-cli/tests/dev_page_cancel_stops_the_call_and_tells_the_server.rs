//! "Cancel" in `mcpkit dev`'s page (`POST /api/cancel`) stops a running call: the call answers
//! `cancelled`, the client sends `notifications/cancelled` for it (seen in the page's event
//! stream, which carries every message), and the dialog the call was waiting on is closed.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::dev_host::DevHost;

/// The page's event stream, read as it comes.
struct Events {
    reply: reqwest::Response,
    buffered: String,
}

impl Events {
    /// Read events until one satisfies `want`; panics after 20 s.
    async fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let reading = async {
            loop {
                while let Some(end) = self.buffered.find("\n\n") {
                    let event: String = self.buffered.drain(..end + 2).collect();
                    for data in event.lines().filter_map(|l| l.strip_prefix("data: ")) {
                        let v: Value = serde_json::from_str(data).unwrap();
                        if want(&v) {
                            return v;
                        }
                    }
                }
                let chunk = self.reply.chunk().await.unwrap().expect("the event stream ended");
                self.buffered.push_str(&String::from_utf8_lossy(&chunk));
            }
        };
        tokio::time::timeout(Duration::from_secs(20), reading)
            .await
            .unwrap_or_else(|_| panic!("no {what} event within 20 s"))
    }
}

async fn post(dev: &DevHost, path: &str, body: Value) -> Value {
    let reply = reqwest::Client::new()
        .post(format!("{}{path}?token={}", dev.base(), dev.token()))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    serde_json::from_str(&reply.text().await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_ends_the_call_with_notifications_cancelled() {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let reply = reqwest::get(format!("{}/api/events?token={}", dev.base(), dev.token()))
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let mut events = Events {
        reply,
        buffered: String::new(),
    };
    events.until("connected", |e| e["kind"] == "connected").await;

    let call = {
        let body = json!({"call": 7, "tool": "test_elicitation", "arguments": {"message": "wait"}});
        let base = dev.base().to_owned();
        let token = dev.token().to_owned();
        tokio::spawn(async move {
            let reply = reqwest::Client::new()
                .post(format!("{base}/api/call?token={token}"))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            serde_json::from_str::<Value>(&reply.text().await.unwrap()).unwrap()
        })
    };
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
        post(&dev, "/api/cancel", json!({"call": 7})).await,
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
        post(&dev, "/api/cancel", json!({"call": 7})).await,
        json!({"cancelled": false})
    );
}
