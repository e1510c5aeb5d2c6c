//! A handshake-era SSE stream of instance A, resumed with `Last-Event-ID` on instance B of the
//! same deployment (one real Redis), replays exactly the missed events from the Redis event
//! store, once each and in order, then goes on live to the result.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::Server;
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

const VERSION: &str = "2025-11-25";

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
    let backends = RedisBackends::connect(&redis.url(), "resume", id).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(server()).backend(backends).serve(listener));
    format!("http://{addr}/mcp")
}

fn post(http: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> reqwest::RequestBuilder {
    let mut b = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        b = b.header("mcp-session-id", s).header("mcp-protocol-version", VERSION);
    }
    b
}

/// One SSE event: its id and data.
struct Event {
    id: Option<String>,
    data: String,
}

/// Reads SSE events off a response, chunk by chunk.
struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut data) = (None, String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                return Some(Event { id, data });
            }
            let chunk = within("an SSE chunk", self.response.chunk()).await.ok()??;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_a_resumed_on_b_replays_the_missed_events_once() {
    let redis = RedisProcess::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = within("initialize", post(&http, &a, None, init).send()).await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = within("initialized", post(&http, &a, Some(&session), initialized).send())
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);

    // Read the first three progress events from A, then drop the stream.
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ten", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let r = within("the call", post(&http, &a, Some(&session), call).send())
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let mut sse = Sse {
        response: r,
        buffer: String::new(),
    };
    let mut seen = Vec::new();
    let mut last = None;
    while seen.len() < 3 {
        let e = sse.next().await.expect("an event from A");
        if let Some(id) = e.id.filter(|i| !i.is_empty()) {
            last = Some(id);
        }
        if let Ok(v) = serde_json::from_str::<Value>(&e.data) {
            if let Some(p) = v["params"]["progress"].as_f64() {
                seen.push(p);
            }
        }
    }
    drop(sse);
    let last = last.expect("event ids");

    // Resume on B.
    let r = within(
        "the resumed stream",
        http.get(b.as_str())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", VERSION)
            .header("last-event-id", &last)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let mut resumed = Sse {
        response: r,
        buffer: String::new(),
    };
    let result = loop {
        let e = resumed.next().await.expect("the rest of the stream on B");
        let Ok(v) = serde_json::from_str::<Value>(&e.data) else {
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
