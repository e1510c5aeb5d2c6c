//! A handshake-era SSE stream of instance A, resumed with `Last-Event-ID` on instance B of the
//! same deployment (one real Redis), replays exactly the missed events from the Redis event
//! store, once each and in order, then goes on live to the result.

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::Server;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{self, handshake_post, SseReader};

fn server() -> Server {
    Server::builder()
        .name("redis-resume-test", "1.0.0")
        .tool(ToolDef::new("ten", |cx: RequestContext| async move {
            for i in 1..=10 {
                cx.progress(f64::from(i), Some(10.0), None);
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
            "ten done"
        }))
        .build()
}

async fn instance(redis: &RedisProcess, id: &str) -> String {
    common::start_instance(redis, "resume", id, HttpServer::new(server())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_a_resumed_on_b_replays_the_missed_events_once() {
    let redis = RedisProcess::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let http = reqwest::Client::new();
    let init = common::initialize_request(0);
    let r = within("initialize", handshake_post(&http, &a, None, &init).send())
        .await
        .unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = common::initialized_notification();
    let r = within(
        "initialized",
        handshake_post(&http, &a, Some(&session), &initialized).send(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);

    // Read the first three progress events from A, then drop the stream.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ten", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let r = within("the call", handshake_post(&http, &a, Some(&session), &call).send())
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = SseReader::new(r);
    let mut seen = Vec::new();
    let mut last = None;
    while seen.len() < 3 {
        let e = sse.next().await.expect("an event from A");
        if let Some(id) = e.id.filter(|i| !i.is_empty()) {
            last = Some(id);
        }
        if let Ok(v) = serde_json::from_str::<Value>(e.data.as_deref().unwrap_or_default()) {
            if let Some(p) = v["params"]["progress"].as_f64() {
                seen.push(p);
            }
        }
    }
    drop(sse);
    let last = last.expect("event ids");

    // Resume on B.
    let r = common::open_get_stream(&http, &b, &session, Some(&last)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut resumed = SseReader::new(r);
    let result = loop {
        let e = resumed.next().await.expect("the rest of the stream on B");
        let Ok(v) = serde_json::from_str::<Value>(e.data.as_deref().unwrap_or_default()) else {
            continue;
        };
        if let Some(p) = v["params"]["progress"].as_f64() {
            seen.push(p);
        } else if v.get("id").is_some() {
            break v;
        }
    };
    let want: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(
        seen, want,
        "every progress event once, in order, after resuming at {last}"
    );
    assert_eq!(result["id"], 7);
    assert_eq!(result["result"]["content"][0]["text"], "ten done");
    // The stream's events are in Redis Streams under the deployment's prefix.
    assert!(redis.keys("resume:ev:*").iter().any(|k| k.len() > "resume:ev:".len()));
}
