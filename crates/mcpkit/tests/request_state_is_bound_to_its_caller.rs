//! With authorization on, a 2026-07-28 `requestState` is sealed for the verified caller whose
//! request produced it (spec: 2026-07-28 security best practices, "State Handle Hijacking"):
//! another user's retry with it — or the same user's through another client — is refused with
//! the error any bad or expired state gets (-32602 "Invalid requestState", `data.path`
//! `requestState`), while its own caller continues the request. Over HTTP through the router,
//! behind the real OAuth resource layer.
#![cfg(all(feature = "auth", feature = "server"))]

use crate::common;

use common::assert_error;
use common::callers::{bearer, protected};
use common::http::*;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::types::schema::{ElicitParams, ElicitationSchema};
use mcpkit::Server;
use reqwest::StatusCode;
use serde_json::{json, Value};

const V: &str = "2026-07-28";

/// `greet` asks for a name (input key `user_name`) and answers `Hello, <name>!`.
fn server() -> Server {
    Server::builder()
        .name("bound-state", "1.0.0")
        .tool(ToolDef::new("greet", |cx: RequestContext| async move {
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let form = ElicitParams::form("Name?", ElicitationSchema(schema.as_object().unwrap().clone()));
            let answer = cx.input(Some("user_name"), form).await?;
            let content = answer.content.unwrap_or_default();
            let name = content.get("name").and_then(Value::as_str).unwrap_or("?").to_owned();
            Ok::<_, mcpkit::Error>(format!("Hello, {name}!"))
        }))
        .build()
}

fn greet(id: i64, extra: Value) -> String {
    let mut params = json!({
        "name": "greet",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "bound-state-test", "version": "0"}
        }
    });
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The HTTP status and JSON-RPC reply of `body` sent by `user`.
async fn call_as(mcp: &Mcp, user: &str, body: String) -> (StatusCode, Value) {
    let stateless = [
        ("mcp-protocol-version", Some(V)),
        ("mcp-method", Some("tools/call")),
        ("mcp-name", Some("greet")),
    ];
    let r = send(
        mcp.post_with(None, body, &stateless)
            .header("authorization", bearer(user)),
    )
    .await;
    let status = r.status();
    (status, json_body(r).await)
}

fn retry(state: &str) -> String {
    greet(
        2,
        json!({
            "requestState": state,
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
        }),
    )
}

#[tokio::test]
async fn another_caller_cannot_continue_a_request_with_its_state() {
    let mcp = protected(server(), config());
    let (status, first) = call_as(&mcp, "alice", greet(1, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();

    // What a state that is not good for this request gets: here a tampered one.
    let (bad_status, bad) = call_as(&mcp, "alice", retry(&format!("{state}x"))).await;
    assert_error(&bad, -32602, &json!(2));

    for intruder in ["bob", "alice@another-client"] {
        let (status, reply) = call_as(&mcp, intruder, retry(&state)).await;
        assert_eq!(status, bad_status, "{intruder}: {reply}");
        assert_error(&reply, -32602, &json!(2));
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("Invalid requestState"), "{intruder}: {message}");
        assert_eq!(reply["error"]["data"], bad["error"]["data"], "{intruder}");
        assert_eq!(reply["error"]["data"], json!({"path": "requestState"}), "{intruder}");
    }

    let (status, done) = call_as(&mcp, "alice", retry(&state)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Alice!", "{done}");
}
