//! `HttpConfig::max_sessions_per_client` holds for the whole deployment, not per instance:
//! with two HTTP instances on one real Redis and a cap of two, a client (here its address,
//! 127.0.0.1) that opened two sessions on A is refused a third on B, with the same 503 and
//! JSON-RPC error as a single instance gives (the request's id kept); a DELETE of one of them
//! (sent to B) gives the place back on B, and the client is at its cap again after that. The
//! count is one Redis key per client, named by a digest, expiring with the client's sessions.

use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::Server;
use mcpkit_test_support::redis::{RedisProcess, RespValue};
use mcpkit_test_support::within;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common;

/// An instance named `id` of the deployment on `redis`, at most two sessions per client: its URL.
async fn instance(redis: &RedisProcess, id: &str) -> String {
    let server = Server::builder().name("per-client-cap-test", "1.0.0").build();
    let config = HttpConfig {
        max_sessions_per_client: 2,
        ..HttpConfig::default()
    };
    common::start_instance(redis, "cap", id, HttpServer::new(server).config(config)).await
}

/// `initialize` with request id `id` to `url`: the status, the session id, and the body.
async fn initialize(url: &str, id: u64) -> (StatusCode, Option<String>, Value) {
    let body = common::initialize_request(id);
    let r = within(
        "an initialize",
        common::handshake_post(&reqwest::Client::new(), url, None, &body).send(),
    )
    .await
    .unwrap();
    let status = r.status();
    let session = common::session_id_of(&r);
    let text = within("a body", r.text()).await.unwrap();
    (status, session, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn too_many_for_this_client(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "Too many sessions for this client"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_at_its_cap_on_one_instance_is_refused_on_another() {
    let redis = RedisProcess::start();
    let (a, b) = (instance(&redis, "a").await, instance(&redis, "b").await);

    let (status, first, body) = initialize(&a, 1).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, second, body) = initialize(&a, 2).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (first, _second) = (first.unwrap(), second.unwrap());

    let (status, session, body) = initialize(&b, 3).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "a third session of the client, on another instance: {body}"
    );
    assert_eq!(body, too_many_for_this_client(3));
    assert_eq!(session, None, "a refused initialize names no session");

    // Ending one session (on the instance that did not open it) gives its place back.
    let r = common::delete_session(&reqwest::Client::new(), &b, &first).await;
    assert_eq!(r.status(), StatusCode::OK);
    let (status, third, body) = initialize(&b, 4).await;
    assert_eq!(status, StatusCode::OK, "room after a DELETE: {body}");
    assert!(third.is_some());

    // At the cap again: B holds one of the two sessions itself, so this refusal is the store's.
    let (status, _, body) = initialize(&b, 5).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body, too_many_for_this_client(5));

    // The count is one key for the client, named by a digest (not by its address), that
    // expires with the client's sessions (the idle timeout, 30 minutes by default).
    let sets = redis.keys("cap:client:*");
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert!(
        sets[0]["cap:client:".len()..].bytes().all(|b| b.is_ascii_hexdigit()),
        "{sets:?}"
    );
    let ttl = redis.command(&["PTTL", &sets[0]]).unwrap();
    assert!(
        matches!(ttl, RespValue::Integer(ms) if ms > 0 && ms <= 30 * 60 * 1000),
        "{ttl:?}"
    );
    let members = redis.command(&["ZCARD", &sets[0]]).unwrap();
    assert_eq!(members, RespValue::Integer(2), "the client's two live sessions");
}
