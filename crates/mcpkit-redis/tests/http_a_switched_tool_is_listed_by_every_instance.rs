//! A tool switched on through instance A (`Server::set_tool_enabled`, from a tool handler) is
//! listed and callable on instance B of the same deployment as soon as A's call returns, in
//! both eras; a session whose GET stream is open on B is told exactly once
//! (`notifications/tools/list_changed`); switched off again, B lists it no more. The hot path
//! stays free: a 2026-07-28 `tools/call` of a tool that is on costs no Redis command, a
//! 2026-07-28 `tools/list` one (the switch version).

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::server::{RawArgs, RequestContext, ToolDef};
use mcpkit::Server;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{self, post_handshake, reply, SseReader};

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
    common::start_instance(redis, "switch", id, HttpServer::new(server())).await
}

/// A 2026-07-28 request (no session): the response.
async fn post_stateless(http: &reqwest::Client, url: &str, method: &str, name: Option<&str>, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = common::stateless_meta();
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = within(
        "a 2026-07-28 response",
        common::stateless_post(http, url, method, name, &frame).send(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    reply(r).await
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_switched_on_through_a_is_listed_and_callable_on_b_and_told_once() {
    let redis = RedisProcess::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    common::wait_until_started(&redis, "switch", 2).await;
    let http = reqwest::Client::new();

    // A handshake-era session, opened on A, with its GET stream on B.
    let r = post_handshake(&http, &a, None, common::initialize_request(0)).await;
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(
        post_handshake(&http, &a, Some(&session), common::initialized_notification())
            .await
            .status(),
        StatusCode::ACCEPTED
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let before = reply(post_handshake(&http, &b, Some(&session), list.clone()).await).await;
    assert_eq!(tool_names(&before), ["echo", "switch"], "declared off: not listed");
    let refused = reply(post_handshake(&http, &b, Some(&session), call(3, "dynamic", json!({}))).await).await;
    assert!(refused["error"].is_object(), "declared off: not callable: {refused}");
    let get = common::open_get_stream(&http, &b, &session, None).await;
    assert_eq!(get.status(), StatusCode::OK);
    let mut stream = SseReader::new(get);
    assert!(stream.methods_within(Duration::from_millis(200)).await.is_empty());

    // Switched on through A: B lists it as soon as A's call returns, in both eras.
    let on = reply(post_handshake(&http, &a, Some(&session), call(4, "switch", json!({"on": true}))).await).await;
    assert_eq!(on["result"]["content"][0]["text"], "changed: true", "{on}");
    let listed = reply(post_handshake(&http, &b, Some(&session), list.clone()).await).await;
    assert_eq!(
        tool_names(&listed),
        ["echo", "switch", "dynamic"],
        "B lists the switched tool"
    );
    // The session's owner (A) forwards the change to B's GET stream over the bus: once it is
    // there, that PUBLISH is done and the count below is the list's alone.
    let mut told = within("the list_changed on B's GET stream", async {
        let mut told = Vec::new();
        while !told.contains(&LIST_CHANGED.to_owned()) {
            told.extend(stream.methods_within(Duration::from_millis(50)).await);
        }
        told
    })
    .await;
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
    let called = reply(post_handshake(&http, &b, Some(&session), call(5, "dynamic", json!({}))).await).await;
    assert_eq!(called["result"]["content"][0]["text"], "dynamic called", "{called}");

    // Told exactly once, on B's GET stream (not once per instance).
    told.extend(stream.methods_within(Duration::from_millis(1500)).await);
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
    let again = reply(post_handshake(&http, &a, Some(&session), call(6, "switch", json!({"on": false}))).await).await;
    assert_eq!(again["result"]["content"][0]["text"], "changed: false", "{again}");
    let told = stream.methods_within(Duration::from_millis(1500)).await;
    assert_eq!(
        told,
        [LIST_CHANGED],
        "one list_changed for the change, none for the no-op"
    );
}
