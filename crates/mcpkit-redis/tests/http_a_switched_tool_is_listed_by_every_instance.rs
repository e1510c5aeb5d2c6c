//! A tool switched on through instance A (`Server::set_tool_enabled`, from a tool handler) is
//! listed and callable on instance B of the same deployment as soon as A's call returns, in
//! both eras; a session whose GET stream is open on B is told exactly once
//! (`notifications/tools/list_changed`); switched off again, B lists it no more. The hot path
//! stays free: a 2026-07-28 `tools/call` of a tool that is on costs no Redis command, a
//! 2026-07-28 `tools/list` one (the switch version).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::server::{RawArgs, RequestContext, ToolDef};
use mcpkit::Server;
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::{RedisProcess, RespValue};
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

const HANDSHAKE: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";
const LIST_CHANGED: &str = "notifications/tools/list_changed";

fn server() -> Server {
    Server::builder()
        .name("switch-test", "1.0.0")
        .tool(ToolDef::new("echo", |RawArgs(a): RawArgs| async move {
            a.get("text").and_then(Value::as_str).unwrap_or("").to_owned()
        }))
        .tool(ToolDef::new(
            "switch",
            |cx: RequestContext, RawArgs(a): RawArgs| async move {
                let on = a.get("on").and_then(Value::as_bool).unwrap_or(false);
                match cx.server().set_tool_enabled("dynamic", on).await {
                    Ok(changed) => format!("changed: {changed}"),
                    Err(e) => format!("failed: {e}"),
                }
            },
        ))
        .tool(ToolDef::new("dynamic", || async { "dynamic called" }).switched_off())
        .build()
}

/// An instance named `id` of the deployment on `redis`: its URL.
async fn instance(redis: &RedisProcess, id: &str) -> String {
    let backends = RedisBackends::connect(&redis.url(), "switch", id).await.unwrap();
    let http = HttpServer::new(server()).backend(backends);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(http.serve(listener));
    format!("http://{addr}/mcp")
}

/// Wait until `n` instances listen on the broadcast channel.
async fn started(redis: &RedisProcess, n: i64) {
    let want = RespValue::Array(vec![
        RespValue::Bulk(Some("switch:bus:all".into())),
        RespValue::Integer(n),
    ]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while redis.command(&["PUBSUB", "NUMSUB", "switch:bus:all"]).unwrap() != want {
        assert!(std::time::Instant::now() < deadline, "the instances did not start");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A handshake-era POST of `session`, or an `initialize` without one: the response.
async fn post(http: &reqwest::Client, url: &str, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut b = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(s) = session {
        b = b.header("mcp-session-id", s).header("mcp-protocol-version", HANDSHAKE);
    }
    within("an HTTP response", b.send()).await.unwrap()
}

/// A 2026-07-28 request (no session): the response.
async fn post_stateless(http: &reqwest::Client, url: &str, method: &str, name: Option<&str>, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    });
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut b = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", STATELESS)
        .header("mcp-method", method);
    if let Some(n) = name {
        b = b.header("mcp-name", n);
    }
    let r = within("a 2026-07-28 response", b.body(frame.to_string()).send())
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    reply(r).await
}

/// The JSON-RPC reply of a POST (plain JSON, or the last `data:` of an SSE reply).
async fn reply(r: reqwest::Response) -> Value {
    let text = within("a body", r.text()).await.unwrap();
    let json = text
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .find(|d| !d.trim().is_empty())
        .unwrap_or(&text)
        .to_owned();
    serde_json::from_str(&json).unwrap_or(Value::Null)
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

/// The JSON-RPC messages of a GET stream.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    /// The methods of the notifications that arrive within `wait`.
    async fn methods_within(&mut self, wait: Duration) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut methods = Vec::new();
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: String = block.lines().filter_map(|l| l.strip_prefix("data:")).collect();
                if let Ok(v) = serde_json::from_str::<Value>(data.trim()) {
                    if let Some(m) = v["method"].as_str() {
                        methods.push(m.to_owned());
                    }
                }
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self
                    .buffer
                    .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n")),
                Ok(_) => panic!("the GET stream ended"),
                Err(_) => return methods,
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_switched_on_through_a_is_listed_and_callable_on_b_and_told_once() {
    let redis = RedisProcess::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    started(&redis, 2).await;
    let http = reqwest::Client::new();

    // A handshake-era session, opened on A, with its GET stream on B.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let r = post(&http, &a, None, init).await;
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(&http, &a, Some(&session), initialized).await.status(),
        StatusCode::ACCEPTED
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let before = reply(post(&http, &b, Some(&session), list.clone()).await).await;
    assert_eq!(tool_names(&before), ["echo", "switch"], "declared off: not listed");
    let refused = reply(post(&http, &b, Some(&session), call(3, "dynamic", json!({}))).await).await;
    assert!(refused["error"].is_object(), "declared off: not callable: {refused}");
    let get = within(
        "the GET stream",
        http.get(b.as_str())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", HANDSHAKE)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(get.status(), StatusCode::OK);
    let mut stream = Stream {
        response: get,
        buffer: String::new(),
    };
    assert!(stream.methods_within(Duration::from_millis(200)).await.is_empty());

    // Switched on through A: B lists it as soon as A's call returns, in both eras.
    let on = reply(post(&http, &a, Some(&session), call(4, "switch", json!({"on": true}))).await).await;
    assert_eq!(on["result"]["content"][0]["text"], "changed: true", "{on}");
    let listed = reply(post(&http, &b, Some(&session), list.clone()).await).await;
    assert_eq!(
        tool_names(&listed),
        ["echo", "switch", "dynamic"],
        "B lists the switched tool"
    );
    redis.reset_stats();
    let listed = post_stateless(&http, &b, "tools/list", None, json!({})).await;
    assert_eq!(
        tool_names(&listed),
        ["echo", "switch", "dynamic"],
        "also on the 2026-07-28 wire"
    );
    let stats = redis.command_stats();
    assert!(
        stats.values().sum::<u64>() <= 1,
        "a 2026-07-28 tools/list up to date costs one command (the version): {stats:?}"
    );
    let called = reply(post(&http, &b, Some(&session), call(5, "dynamic", json!({}))).await).await;
    assert_eq!(called["result"]["content"][0]["text"], "dynamic called", "{called}");

    // Told exactly once, on B's GET stream (not once per instance).
    let told = stream.methods_within(Duration::from_millis(1500)).await;
    assert_eq!(told, [LIST_CHANGED], "one list_changed for the session");

    // The hot path stays free: a 2026-07-28 tools/call costs no Redis command.
    redis.reset_stats();
    let echoed = post_stateless(
        &http,
        &b,
        "tools/call",
        Some("echo"),
        json!({"name": "echo", "arguments": {"text": "x"}}),
    )
    .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "x");
    let dynamic = post_stateless(&http, &a, "tools/call", Some("dynamic"), json!({"name": "dynamic"})).await;
    assert_eq!(dynamic["result"]["content"][0]["text"], "dynamic called");
    let stats = redis.command_stats();
    assert!(
        stats.is_empty(),
        "no command on the 2026-07-28 tools/call path: {stats:?}"
    );

    // Switched off through B: A lists it no more; a repeated switch changes nothing.
    let off = post_stateless(
        &http,
        &b,
        "tools/call",
        Some("switch"),
        json!({"name": "switch", "arguments": {"on": false}}),
    )
    .await;
    assert_eq!(off["result"]["content"][0]["text"], "changed: true", "{off}");
    let listed = post_stateless(&http, &a, "tools/list", None, json!({})).await;
    assert_eq!(tool_names(&listed), ["echo", "switch"], "A no longer lists it");
    let again = reply(post(&http, &a, Some(&session), call(6, "switch", json!({"on": false}))).await).await;
    assert_eq!(again["result"]["content"][0]["text"], "changed: false", "{again}");
    let told = stream.methods_within(Duration::from_millis(1500)).await;
    assert_eq!(
        told,
        [LIST_CHANGED],
        "one list_changed for the change, none for the no-op"
    );
}
