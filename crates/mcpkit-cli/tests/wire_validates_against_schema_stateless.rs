//! The stateless era (2026-07-28) on the raw wire against the reference server: every frame
//! either side writes validates against the 2026-07-28 schema.

use crate::common;

use common::*;
use mcpkit_cli::reference;
use serde_json::{json, Value};

/// Everything the reference server does on the stateless wire — discover, every list, every
/// tool (input rounds answered), reads, prompts, completion, a subscription, refusals — and
/// every frame either side wrote validates against the 2026-07-28 schema.
#[tokio::test]
async fn the_stateless_wire_is_schema_valid_at_2026_07_28() {
    let server = reference::server();
    let mut w = RawWire::serve(&server);
    let mut next_id = 0i64;
    let mut frame = |method: &str, mut params: Value| {
        next_id += 1;
        params["_meta"] = match params.get("_meta") {
            Some(Value::Object(extra)) => {
                let mut m = stateless_meta();
                m.as_object_mut().unwrap().extend(extra.clone());
                m
            }
            _ => stateless_meta(),
        };
        json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
    };

    let discover = w.request(&frame("server/discover", json!({}))).await;
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28", "{discover}");
    let tools = w.request(&frame("tools/list", json!({}))).await;
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let r = w.request(&frame(method, json!({}))).await;
        assert!(r.get("result").is_some(), "{method}: {r}");
    }

    let mut input_rounds = 0;
    for tool in tools["result"]["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        if common::NOT_PLAIN_TOOLS.contains(&name) {
            continue;
        }
        let args = match name {
            "echo" => json!({"message": "m"}),
            "add" => json!({"a": 1, "b": 2}),
            "test_sampling" => json!({"prompt": "p"}),
            "test_elicitation" => json!({"message": "m"}),
            "json_schema_2020_12_tool" => json!({"email": "e"}),
            "test_header_param" => json!({"region": "r", "query": "q"}),
            _ => json!({}),
        };
        let mut params = json!({"name": name, "arguments": args, "_meta": {"progressToken": name}});
        let mut done = false;
        for _ in 0..5 {
            let reply = w.request(&frame("tools/call", params.clone())).await;
            let result = reply.get("result").unwrap_or_else(|| panic!("{name}: {reply}"));
            if result["resultType"] != "input_required" {
                assert_eq!(result["resultType"], "complete", "{name}: {reply}");
                done = true;
                break;
            }
            input_rounds += 1;
            let answers: serde_json::Map<String, Value> = result["inputRequests"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, r)| (k.clone(), answer_input(r)))
                .collect();
            params["inputResponses"] = Value::Object(answers);
            params["requestState"] = result["requestState"].clone();
        }
        assert!(done, "{name} did not complete within five rounds");
    }
    assert!(input_rounds >= 8, "only {input_rounds} input rounds");

    for uri in ["test://static-text", "test://static-binary", "test://template/7/data"] {
        let r = w.request(&frame("resources/read", json!({"uri": uri}))).await;
        assert!(r.get("result").is_some(), "{uri}: {r}");
    }
    let r = w
        .request(&frame(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
        ))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let r = w
        .request(&frame(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt"}),
        ))
        .await;
    let state = &r["result"]["requestState"];
    let answer = answer_input(&r["result"]["inputRequests"]["user_context"]);
    let r = w
        .request(&frame(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt",
                   "inputResponses": {"user_context": answer}, "requestState": state}),
        ))
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    let r = w
        .request(&frame(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "t"}}),
        ))
        .await;
    assert!(r.get("result").is_some(), "{r}");

    // Refusals: unknown resource, removed method, unsupported version.
    let r = w.request(&frame("resources/read", json!({"uri": "test://nope"}))).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = w.request(&frame("ping", json!({}))).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");

    // A subscription: acknowledged, a change, then cancelled.
    let listen = frame(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["test://watched-resource"]}}),
    );
    w.send(&listen).await;
    let ack = w.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    server.notify_resource_updated("test://watched-resource");
    let n = w.recv().await;
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    let r = w
        .request(&frame(
            "tools/call",
            json!({"name": "test_trigger_tool_change", "arguments": {}}),
        ))
        .await;
    assert!(r.get("result").is_some(), "{r}");
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": listen["id"], "reason": "done"}}))
        .await;
    let r = w.request(&frame("tools/list", json!({}))).await;
    assert!(r.get("result").is_some(), "{r}");

    let v = SchemaValidator::revision("2026-07-28");
    let report = v.check_transcript(&w.received, &w.sent);
    report.assert_valid();
    for kind in [
        "result server/discover",
        "input_required tools/call",
        "input_required prompts/get",
        "notification notifications/progress",
        "notification notifications/message",
        "notification notifications/subscriptions/acknowledged",
        "notification notifications/resources/updated",
        "notification notifications/tools/list_changed",
        "error -32602",
        "error -32601",
    ] {
        assert!(report.count(kind) > 0, "no {kind} frame: {:?}", report.kinds);
    }
    // Our own frames too, except the `ping` sent on purpose to be refused (2026-07-28 removed it).
    let sent: Vec<String> = w
        .sent
        .iter()
        .filter(|f| !f.contains(r#""method":"ping""#))
        .cloned()
        .collect();
    v.check_transcript(&sent, &w.received).assert_valid();
}
