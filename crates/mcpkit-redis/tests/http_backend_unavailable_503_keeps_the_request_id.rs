//! While Redis is unreachable, the 503 of a handshake-era request that needs the session store
//! is a JSON-RPC error for that request: it carries the request's id (readable from the body),
//! not `null`. Pinned as exact JSON, for a new session (`initialize`) and for a request of a
//! session this instance has not cached.

use mcpkit::server::http::HttpServer;
use mcpkit::server::{RawArgs, ToolDef};
use mcpkit::Server;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common;

async fn instance(redis: &RedisProcess, id: &str) -> String {
    let server = Server::builder()
        .name("unavailable-test", "1.0.0")
        .tool(ToolDef::new("echo", |RawArgs(a): RawArgs| async move {
            a.len().to_string()
        }))
        .build();
    common::start_instance(redis, "down", id, HttpServer::new(server)).await
}

async fn post(url: &str, session: Option<&str>, body: Value) -> (StatusCode, Value) {
    let request = common::handshake_post(&reqwest::Client::new(), url, session, &body);
    let r = within("an HTTP response", request.send()).await.unwrap();
    let status = r.status();
    let session_id = common::session_id_of(&r);
    let text = within("a body", r.text()).await.unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if let Some(id) = session_id {
        v["_session"] = json!(id);
    }
    (status, v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_503_of_a_redis_outage_names_the_request() {
    let mut redis = RedisProcess::start();
    let a = instance(&redis, "a").await;
    let b = instance(&redis, "b").await;
    // A session opened on A; B has never served it.
    let (status, opened) = post(&a, None, common::initialize_request(1)).await;
    assert_eq!(status, StatusCode::OK, "{opened}");
    let session = opened["_session"].as_str().unwrap().to_owned();
    let (status, _) = post(&a, Some(&session), common::initialized_notification()).await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let address = format!("127.0.0.1:{}", redis.port());
    redis.stop();

    let (status, body) = post(&a, None, common::initialize_request(7)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.starts_with("Shared session state is unavailable ("), "{body}");
    assert!(message.contains(&address), "the cause names Redis's address: {body}");
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": message}})
    );

    let call = json!({"jsonrpc": "2.0", "id": "call-9", "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}});
    let (status, body) = post(&b, Some(&session), call).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains(&address), "{body}");
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": "call-9", "error": {"code": -32603, "message": message}})
    );
    eprintln!("503 while Redis is down: {body}");
}
