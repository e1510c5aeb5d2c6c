//! Two HTTP instances on one real Redis act as one server, and cost what the design says,
//! counted by Redis (`INFO commandstats`): a session opened on A is served on B; a handshake-era
//! `tools/call` costs at most two commands (the first on an instance that never served the
//! session: the record and the bus subscription; none after, the TTL being refreshed lazily); a
//! 2026-07-28 `tools/call` costs none; a session ended on B is unknown on A; an
//! `Mcp-Session-Id` never issued is 404 and writes nothing. The figures are printed
//! (`--nocapture`).

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::server::{RawArgs, ToolDef};
use mcpkit::Server;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::{self, post_handshake, reply};
const CALLS: u64 = 50;

fn server() -> Server {
    Server::builder()
        .name("redis-http-test", "1.0.0")
        .tool(ToolDef::new("echo", |RawArgs(a): RawArgs| async move {
            a.get("text").and_then(Value::as_str).unwrap_or("").to_owned()
        }))
        .build()
}

/// An instance named `id` of the deployment on `redis`: its URL.
async fn instance(redis: &RedisProcess, id: &str) -> String {
    common::start_instance(redis, "http", id, HttpServer::new(server())).await
}

fn echo(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": text}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_redis_serve_one_session_at_the_designed_cost() {
    let redis = RedisProcess::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);
    let http = reqwest::Client::new();

    // initialize on A, everything else on B.
    let r = post_handshake(&http, &a, None, common::initialize_request(0)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let r = post_handshake(&http, &b, Some(&session), common::initialized_notification()).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED, "B serves A's session");
    let r = post_handshake(&http, &b, Some(&session), echo(1, "hi")).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(reply(r).await["result"]["content"][0]["text"], "hi");

    // Handshake-era tools/call, alternating A and B (a round-robin balancer).
    common::wait_until_started(&redis, "http", 2).await;
    redis.reset_stats();
    for n in 0..CALLS {
        let url = if n % 2 == 0 { &a } else { &b };
        let r = post_handshake(&http, url, Some(&session), echo(10 + n, "x")).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(reply(r).await["result"]["content"][0]["text"], "x");
    }
    let stats = redis.command_stats();
    let total: u64 = stats.values().sum();
    println!(
        "handshake-era tools/call through two instances: {:.2} Redis commands per call ({stats:?} for {CALLS})",
        total as f64 / CALLS as f64
    );
    assert!(total <= 2 * CALLS, "at most two commands per call: {stats:?}");

    // The first request of the session on an instance that never served it.
    let c = instance(&redis, "c").await;
    // Its start-up subscription (catalogue changes, on the broadcast channel) is not the request's.
    common::wait_until_started(&redis, "http", 3).await;
    redis.reset_stats();
    let r = post_handshake(&http, &c, Some(&session), echo(90, "first")).await;
    assert_eq!(reply(r).await["result"]["content"][0]["text"], "first");
    let stats = redis.command_stats();
    let total: u64 = stats.values().sum();
    println!("handshake-era tools/call, first on a new instance: {total} Redis commands ({stats:?})");
    assert!(total <= 2, "at most two commands: {stats:?}");

    // 2026-07-28 tools/call: no command.
    redis.reset_stats();
    for n in 0..CALLS {
        let url = if n % 2 == 0 { &a } else { &b };
        let mut frame = echo(100 + n, "y");
        frame["params"]["_meta"] = common::stateless_meta();
        let r = within(
            "a 2026-07-28 call",
            common::stateless_post(&http, url, "tools/call", Some("echo"), &frame).send(),
        )
        .await
        .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(reply(r).await["result"]["content"][0]["text"], "y");
    }
    let stats = redis.command_stats();
    println!("2026-07-28 tools/call through two instances: {stats:?} for {CALLS}");
    assert!(stats.is_empty(), "no command on the 2026-07-28 path: {stats:?}");

    // A session id never issued: 404, nothing written.
    let writes = redis.writes();
    for forged in ["0123456789abcdef0123456789abcdef", "not-a-session", "x}:{*"] {
        let r = post_handshake(&http, &a, Some(forged), echo(1, "z")).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{forged}");
    }
    assert_eq!(redis.writes(), writes, "an id never issued writes nothing");

    // Ended on B, unknown on A.
    let r = common::delete_session(&http, &b, &session).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut status = StatusCode::OK;
    for _ in 0..50 {
        status = post_handshake(&http, &a, Some(&session), echo(2, "gone"))
            .await
            .status();
        if status == StatusCode::NOT_FOUND {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, StatusCode::NOT_FOUND, "a session ended on B is unknown on A");
}
