//! `mcpkit redis rotate-keys --redis URL [--redis-prefix P]` against a real `redis-server`: it
//! prints the new key's id (never a key), a `requestState` sealed before the rotation still
//! opens on an instance started after it, a running instance seals with the new key within
//! seconds, and a new seal uses the new key. Without a Redis URL
//! it is a usage error.

use crate::common;
use crate::support;

use common::stateless_meta;
use mcpkit_test_support::redis::{RedisProcess, RespValue};
use serde_json::{json, Value};
use support::{mcpkit, serve_http};

const TOOL: &str = "test_input_required_result_request_state";

async fn call(url: &str, id: i64, extra: Value) -> Value {
    let mut params = json!({"name": TOOL, "arguments": {}, "_meta": stateless_meta()});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", TOOL)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    mcpkit_test_support::sse::reply_of(&text)
}

/// The id of the key that sealed `state` (`v1.{kid}.{payload}.{tag}`).
fn sealed_by(state: &str) -> &str {
    let mut parts = state.split('.');
    assert_eq!(parts.next(), Some("v1"), "{state}");
    parts.next().unwrap()
}

/// The first round of the tool: its `requestState`.
async fn first_round(url: &str) -> String {
    let first = call(url, 1, json!({})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    first["result"]["requestState"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_rotation_prints_the_new_key_id_and_old_states_still_open() {
    let redis = RedisProcess::start();
    let url = redis.url();
    let (mut a, url_a, _) = serve_http(&["--redis", &url, "--redis-prefix", "rot", "--instance-id", "a"]).await;
    let before = first_round(&url_a).await;
    let old_key = sealed_by(&before).to_owned();

    let (code, out, err) = mcpkit(&["redis", "rotate-keys", "--redis", &url, "--redis-prefix", "rot"]);
    assert_eq!(code, 0, "{err}");
    let new_key = out.trim().to_owned();
    assert_eq!(out.lines().count(), 1, "only the id on stdout: {out}");
    assert!(!new_key.is_empty() && new_key != old_key, "{out}");
    assert!(err.contains(&new_key) && err.contains("1 previous"), "{err}");
    // Never a key: no secret of the ring appears in what the command printed.
    let RespValue::Bulk(Some(ring)) = redis.command(&["GET", "rot:keyring"]).unwrap() else {
        panic!("no key ring in Redis");
    };
    let ring: Vec<Value> = serde_json::from_str(&ring).unwrap();
    assert_eq!(ring.len(), 2, "{ring:?}");
    assert_eq!(ring[0]["id"], new_key.as_str());
    for key in &ring {
        let secret = key["secret"].as_str().unwrap();
        assert!(!out.contains(secret) && !err.contains(secret), "a key was printed");
    }

    // The instance that was running during the rotation seals with the new key soon after.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let state = first_round(&url_a).await;
        if sealed_by(&state) == new_key {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "a running instance still seals with {} 5 s after the rotation",
            sealed_by(&state)
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // An instance started after the rotation opens the state sealed before it...
    let (mut b, url_b, _) = serve_http(&["--redis", &url, "--redis-prefix", "rot", "--instance-id", "b"]).await;
    let done = call(
        &url_b,
        2,
        json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}, "requestState": before}),
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "Confirmed ok=true: state-ok",
        "{done}"
    );
    // ...and seals with the new key.
    assert_eq!(sealed_by(&first_round(&url_b).await), new_key);

    // Keeping no previous key: the state of before no longer opens.
    let (code, out, err) = mcpkit(&[
        "redis",
        "rotate-keys",
        "--redis",
        &url,
        "--redis-prefix",
        "rot",
        "--keep-previous",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let newest = out.trim().to_owned();
    let (mut c, url_c, _) = serve_http(&["--redis", &url, "--redis-prefix", "rot", "--instance-id", "c"]).await;
    let refused = call(
        &url_c,
        3,
        json!({"inputResponses": {"confirm": {"action": "accept", "content": {"ok": true}}}, "requestState": before}),
    )
    .await;
    assert!(refused.get("error").is_some(), "{refused}");
    assert_eq!(sealed_by(&first_round(&url_c).await), newest);
    for child in [&mut a, &mut b, &mut c] {
        child.kill().await.unwrap();
    }
}

#[test]
fn without_a_redis_url_it_is_a_usage_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(["redis", "rotate-keys"])
        .env_remove("MCPKIT_REDIS_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--redis URL"), "{err}");
    assert!(out.stdout.is_empty());
}
