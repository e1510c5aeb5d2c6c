//! On a 2026-07-28 input round, an answer the server sealed in `requestState` is final: a retry
//! that re-sends it with another value does not replace it, and input the last round did not ask
//! for is ignored (spec: 2026-07-28 `basic/patterns/mrtr`). Raw JSON-RPC frames over the
//! in-memory transport.

use crate::common;

use common::Wire;
use mcpkit::server::{RequestContext, RequestStateKeys, ToolDef};
use mcpkit::types::schema::{ElicitParams, ElicitResult, ElicitationSchema};
use mcpkit::Server;
use serde_json::{json, Value};

fn name_form(message: &str) -> ElicitParams {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    ElicitParams::form(message, ElicitationSchema(schema.as_object().unwrap().clone()))
}

fn name(r: &ElicitResult) -> String {
    let content = r.content.clone().unwrap_or_default();
    content.get("name").and_then(Value::as_str).unwrap_or("?").to_owned()
}

/// `pair` asks `first`, then (in a second round) `second`, and answers `<first> and <second>`.
fn server() -> Server {
    Server::builder()
        .name("sealed-test", "1.0.0")
        .request_state_keys(RequestStateKeys::new("k1", vec![9u8; 32]))
        .tool(ToolDef::new("pair", |cx: RequestContext| async move {
            let first = cx.input(Some("first"), name_form("First?")).await?;
            let second = cx.input(Some("second"), name_form("Second?")).await?;
            Ok::<_, mcpkit::Error>(format!("{} and {}", name(&first), name(&second)))
        }))
        .build()
}

fn call(id: i64, extra: Value) -> Value {
    let mut params = json!({
        "name": "pair",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "sealed-test-client", "version": "0"}
        }
    });
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn answer(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

fn state_of(reply: &Value) -> String {
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    reply["result"]["requestState"].as_str().unwrap().to_owned()
}

fn text_of(reply: &Value) -> &str {
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    reply["result"]["content"][0]["text"].as_str().unwrap()
}

/// Rounds 1 and 2: `first` answered `Ada` and sealed; the state of round 3 is returned.
async fn first_sealed_as_ada(wire: &mut Wire) -> String {
    let one = state_of(&wire.request(&call(1, json!({}))).await);
    let two = wire
        .request(&call(
            2,
            json!({"requestState": one, "inputResponses": {"first": answer("Ada")}}),
        ))
        .await;
    assert_eq!(
        two["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["second"],
        "{two}"
    );
    state_of(&two)
}

#[tokio::test]
async fn a_retry_cannot_rewrite_an_answer_sealed_in_an_earlier_round() {
    let mut wire = Wire::serve(&server());
    let state = first_sealed_as_ada(&mut wire).await;
    let reply = wire
        .request(&call(
            3,
            json!({"requestState": state, "inputResponses": {"first": answer("Mallory"), "second": answer("Grace")}}),
        ))
        .await;
    assert_eq!(text_of(&reply), "Ada and Grace");
}

#[tokio::test]
async fn input_the_round_did_not_ask_for_is_ignored() {
    let mut wire = Wire::serve(&server());
    let one = state_of(&wire.request(&call(1, json!({}))).await);
    // Round 1 asked only `first`: an early `second` is not taken, so round 2 still asks for it.
    let two = wire
        .request(&call(
            2,
            json!({"requestState": one, "inputResponses": {"first": answer("Ada"), "second": answer("Early")}}),
        ))
        .await;
    let state = state_of(&two);
    let three = wire
        .request(&call(
            3,
            json!({"requestState": state, "inputResponses": {"second": answer("Grace")}}),
        ))
        .await;
    assert_eq!(text_of(&three), "Ada and Grace");
}
