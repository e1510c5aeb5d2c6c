//! Multi round-trip requests on the 2026-07-28 wire (spec: 2026-07-28 `basic/patterns/mrtr`):
//! a handler's input call ends the request with `input_required` and a sealed `requestState`;
//! the retry carries the answers and the state. Pinned here: the exact `input_required` result,
//! a request continued by a second server instance that shares the keys, refusal (-32602) of a
//! state from other keys, of a tampered, expired or replayed-elsewhere state, key rotation, and
//! MissingRequiredClientCapability (-32021) when the client did not declare the capability.
//! Raw JSON-RPC frames over the in-memory transport.

use crate::common;

use std::time::Duration;

use common::{assert_error, Wire};
use mcpkit::server::{Args, RequestContext, RequestStateKeys, ToolDef};
use mcpkit::types::schema::{ElicitParams, ElicitationSchema, InputRequest, InputResponse, SamplingMessage};
use mcpkit::Server;
use serde::Deserialize;
use serde_json::{json, Value};

const V: &str = "2026-07-28";
const INVALID_PARAMS: i64 = -32602;
const MISSING_CAPABILITY: i64 = -32021;

#[derive(Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    greeting: String,
}

fn name_form() -> ElicitParams {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    });
    ElicitParams::form(
        "What is your name?",
        ElicitationSchema(schema.as_object().unwrap().clone()),
    )
}

/// `greet {greeting}` asks for a name (input key `user_name`) and answers `<greeting>, <name>!`;
/// `two_rounds` asks `first`, then `second`, keeping a note of its own in the state; `sample`
/// needs the sampling capability.
fn server(keys: RequestStateKeys) -> Server {
    Server::builder()
        .name("mrtr-test", "1.0.0")
        .request_state_keys(keys)
        .tool(ToolDef::new(
            "greet",
            |cx: RequestContext, Args(a): Args<GreetArgs>| async move {
                let answer = cx.input(Some("user_name"), name_form()).await?;
                let content = answer.content.unwrap_or_default();
                let name = content.get("name").and_then(Value::as_str).unwrap_or("?").to_owned();
                Ok::<_, mcpkit::Error>(format!("{}, {name}!", a.greeting))
            },
        ))
        .tool(ToolDef::new("two_rounds", |cx: RequestContext| async move {
            let note = cx.request_state();
            if note.is_none() {
                cx.set_request_state(json!({"round": 1}));
            }
            let first = cx.input(Some("first"), name_form()).await?;
            let second = cx.input(Some("second"), name_form()).await?;
            let name = |r: &mcpkit::types::schema::ElicitResult| {
                let content = r.content.clone().unwrap_or_default();
                content.get("name").and_then(Value::as_str).unwrap_or("?").to_owned()
            };
            Ok::<_, mcpkit::Error>(format!(
                "{} then {} (note {})",
                name(&first),
                name(&second),
                note.map_or("none".to_owned(), |n| n.to_string())
            ))
        }))
        .tool(ToolDef::new("sample", |cx: RequestContext| async move {
            let answers = cx
                .inputs(vec![(
                    "llm".to_owned(),
                    InputRequest::Sample(mcpkit::types::schema::CreateMessageParams::new(
                        vec![SamplingMessage::user_text("hi")],
                        10,
                    )),
                )])
                .await?;
            match &answers[0] {
                InputResponse::Sample(r) => Ok::<_, mcpkit::Error>(r.model.clone()),
                _ => Ok("unexpected".to_owned()),
            }
        }))
        .build()
}

fn shared_keys() -> RequestStateKeys {
    RequestStateKeys::new("k1", vec![7u8; 32])
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "mrtr-test-client", "version": "0"}
    })
}

fn call(id: i64, tool: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments, "_meta": meta(json!({"elicitation": {}}))});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn answer(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

/// Round 1 of `greet` on `wire`: the `requestState` of its `input_required` result.
async fn round_one(wire: &mut Wire) -> String {
    let reply = wire
        .request(&call(1, "greet", json!({"greeting": "Hello"}), json!({})))
        .await;
    reply["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState: {reply}"))
        .to_owned()
}

/// Round 2 of `greet`: the reply.
async fn round_two(wire: &mut Wire, state: &str, name: &str) -> Value {
    wire.request(&call(
        2,
        "greet",
        json!({"greeting": "Hello"}),
        json!({"inputResponses": {"user_name": answer(name)}, "requestState": state}),
    ))
    .await
}

fn assert_refused(reply: &Value, why: &str) {
    assert_error(reply, INVALID_PARAMS, &json!(2));
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains(why), "message {message:?} should say {why:?}");
    assert_eq!(reply["error"]["data"], json!({"path": "requestState"}), "{reply}");
}

#[tokio::test]
async fn input_required_result_is_exact() {
    let mut wire = Wire::serve(&server(shared_keys()));
    let reply = wire
        .request(&call(1, "greet", json!({"greeting": "Hello"}), json!({})))
        .await;
    let state = reply["result"]["requestState"].as_str().expect("a requestState");
    assert!(state.starts_with("v1.k1."), "sealed with the first key: {state}");
    let mut pinned = reply.clone();
    pinned["result"]["requestState"] = json!("<sealed>");
    assert_eq!(
        pinned,
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "resultType": "input_required",
                "inputRequests": {
                    "user_name": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "What is your name?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                                "required": ["name"]
                            }
                        }
                    }
                },
                "requestState": "<sealed>",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mrtr-test", "version": "1.0.0"}}
            }
        })
    );
}

#[tokio::test]
async fn a_second_instance_with_the_same_keys_continues_the_request() {
    let mut a = Wire::serve(&server(shared_keys()));
    let mut b = Wire::serve(&server(shared_keys()));
    let state = round_one(&mut a).await;
    let reply = round_two(&mut b, &state, "Ada").await;
    assert_eq!(
        reply,
        json!({
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": "Hello, Ada!"}],
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mrtr-test", "version": "1.0.0"}}
            }
        })
    );
}

#[tokio::test]
async fn an_instance_with_other_keys_refuses_the_state() {
    let mut a = Wire::serve(&server(shared_keys()));
    let mut other = Wire::serve(&server(RequestStateKeys::new("k2", vec![9u8; 32])));
    let state = round_one(&mut a).await;
    assert_refused(&round_two(&mut other, &state, "Ada").await, "unknown key");
    // Same key id, different key material: the integrity check fails.
    let mut forger = Wire::serve(&server(RequestStateKeys::new("k1", vec![8u8; 32])));
    assert_refused(&round_two(&mut forger, &state, "Ada").await, "integrity");
    // A default server (its own random key) refuses it too.
    let mut lone = Wire::serve(&server(RequestStateKeys::random().unwrap()));
    assert_refused(&round_two(&mut lone, &state, "Ada").await, "unknown key");
}

#[tokio::test]
async fn a_tampered_state_is_refused() {
    let mut wire = Wire::serve(&server(shared_keys()));
    let state = round_one(&mut wire).await;
    // Change one character of the sealed payload (third dot-separated part).
    let mut parts: Vec<String> = state.split('.').map(str::to_owned).collect();
    let body = &mut parts[2];
    let c = body.remove(4);
    body.insert(4, if c == 'A' { 'B' } else { 'A' });
    let tampered = parts.join(".");
    assert_ne!(tampered, state);
    assert_refused(&round_two(&mut wire, &tampered, "Ada").await, "integrity");
    // Not a sealed state at all.
    assert_refused(&round_two(&mut wire, "not-a-state", "Ada").await, "malformed");
    // The genuine state still works afterwards.
    let reply = round_two(&mut wire, &state, "Ada").await;
    assert_eq!(reply["result"]["content"][0]["text"], "Hello, Ada!", "{reply}");
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let mut wire = Wire::serve(&server(shared_keys().with_lifetime(Duration::ZERO)));
    let state = round_one(&mut wire).await;
    assert_refused(&round_two(&mut wire, &state, "Ada").await, "expired");
}

#[tokio::test]
async fn a_state_only_continues_the_request_it_was_issued_for() {
    let mut wire = Wire::serve(&server(shared_keys()));
    let state = round_one(&mut wire).await;
    // Other arguments for the same tool.
    let reply = wire
        .request(&call(
            2,
            "greet",
            json!({"greeting": "Goodbye"}),
            json!({"inputResponses": {"user_name": answer("Ada")}, "requestState": state}),
        ))
        .await;
    assert_refused(&reply, "different request");
    // Another tool.
    let reply = wire
        .request(&call(
            2,
            "two_rounds",
            json!({}),
            json!({"inputResponses": {"first": answer("Ada")}, "requestState": state}),
        ))
        .await;
    assert_refused(&reply, "different request");
}

#[tokio::test]
async fn key_rotation_keeps_states_in_flight_valid() {
    let old = RequestStateKeys::new("old", vec![1u8; 32]);
    let rotated = RequestStateKeys::new("new", vec![2u8; 32]).with_previous("old", vec![1u8; 32]);
    let mut before = Wire::serve(&server(old));
    let mut after = Wire::serve(&server(rotated));
    let state = round_one(&mut before).await;
    assert!(state.starts_with("v1.old."), "{state}");
    let reply = round_two(&mut after, &state, "Grace").await;
    assert_eq!(reply["result"]["content"][0]["text"], "Hello, Grace!", "{reply}");
    // The rotated server seals with its new key.
    let fresh = round_one(&mut after).await;
    assert!(fresh.starts_with("v1.new."), "{fresh}");
    // Once the old key is dropped, old states are refused.
    let mut dropped = Wire::serve(&server(RequestStateKeys::new("new", vec![2u8; 32])));
    assert_refused(&round_two(&mut dropped, &state, "Grace").await, "unknown key");
    let reply = round_two(&mut dropped, &fresh, "Grace").await;
    assert_eq!(reply["result"]["content"][0]["text"], "Hello, Grace!", "{reply}");
}

#[tokio::test]
async fn answers_and_handler_state_accumulate_across_rounds_and_instances() {
    let mut a = Wire::serve(&server(shared_keys()));
    let mut b = Wire::serve(&server(shared_keys()));
    let r1 = a.request(&call(1, "two_rounds", json!({}), json!({}))).await;
    assert_eq!(
        r1["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["first"],
        "{r1}"
    );
    let s1 = r1["result"]["requestState"].as_str().unwrap();
    // Round 2 on B answers `first`: now `second` is asked.
    let r2 = b
        .request(&call(
            2,
            "two_rounds",
            json!({}),
            json!({"inputResponses": {"first": answer("Ada")}, "requestState": s1}),
        ))
        .await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    assert_eq!(
        r2["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["second"],
        "{r2}"
    );
    let s2 = r2["result"]["requestState"].as_str().unwrap();
    // Round 3 back on A answers only `second`: `first` came back inside the state.
    let r3 = a
        .request(&call(
            3,
            "two_rounds",
            json!({}),
            json!({"inputResponses": {"second": answer("Grace")}, "requestState": s2}),
        ))
        .await;
    assert_eq!(
        r3["result"]["content"][0]["text"], r#"Ada then Grace (note {"round":1})"#,
        "{r3}"
    );
    assert_eq!(r3["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_malformed_answer_is_invalid_params() {
    let mut wire = Wire::serve(&server(shared_keys()));
    let state = round_one(&mut wire).await;
    let reply = wire
        .request(&call(
            2,
            "greet",
            json!({"greeting": "Hello"}),
            json!({"inputResponses": {"user_name": {"action": "maybe"}}, "requestState": state}),
        ))
        .await;
    assert_error(&reply, INVALID_PARAMS, &json!(2));
    assert_eq!(
        reply["error"]["data"],
        json!({"path": "inputResponses.user_name"}),
        "{reply}"
    );
}

#[tokio::test]
async fn an_undeclared_capability_is_missing_required_client_capability() {
    let mut wire = Wire::serve(&server(shared_keys()));
    // `call` declares elicitation only; `sample` needs sampling.
    let reply = wire.request(&call(1, "sample", json!({}), json!({}))).await;
    assert_error(&reply, MISSING_CAPABILITY, &json!(1));
    assert_eq!(
        reply["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{reply}"
    );
    // Declared: the request asks for it instead.
    let mut frame = call(2, "sample", json!({}), json!({}));
    frame["params"]["_meta"] = meta(json!({"sampling": {}}));
    let reply = wire.request(&frame).await;
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    assert_eq!(
        reply["result"]["inputRequests"]["llm"]["method"], "sampling/createMessage",
        "{reply}"
    );
}
