//! The client checks a tool's `structuredContent` against the `outputSchema` it learned from
//! `tools/list` (spec `server/tools` "Output Schema"): a mismatch or a missing structured result
//! is `Error::OutputSchema`; a match, or an `isError` result, is fine.

use crate::common;

use common::within;
use mcpkit::server::{Args, Json, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{CallToolResult, JsonObject};
use mcpkit::{Client, Error, Server};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Deserialize, schemars::JsonSchema)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: f64,
}

fn sum_schema() -> JsonObject {
    json!({
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"]
    })
    .as_object()
    .unwrap()
    .clone()
}

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("add", |Args(p): Args<Pair>| async move {
            Json(Sum { sum: p.a + p.b })
        }))
        .tool(
            ToolDef::new("liar", || async { CallToolResult::structured(json!({"sum": "three"})) })
                .output_schema(sum_schema()),
        )
        .tool(ToolDef::new("mute", || async { "3" }).output_schema(sum_schema()))
        .tool(ToolDef::new("failing", || async { CallToolResult::error_text("it broke") }).output_schema(sum_schema()))
        .tool(
            ToolDef::new("honest", || async { CallToolResult::structured(json!({"sum": 3})) })
                .output_schema(sum_schema()),
        )
        .build()
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let c = &pair.client;
    let tools = within("list", c.list_all_tools()).await.unwrap();
    let add = tools.iter().find(|t| t.name == "add").unwrap();
    let schema = Value::Object(add.output_schema.clone().expect("Json<T> gives an output schema"));
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"].get("sum").is_some(), "{schema}");

    let r = within("add", c.call_tool("add", json!({"a": 1, "b": 2})))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 3.0})));
    // A text copy of the structured result is included for older clients.
    let content = serde_json::to_value(&r.content).unwrap();
    assert_eq!(content[0]["type"], "text", "{content}");
    assert_eq!(
        serde_json::from_str::<Value>(content[0]["text"].as_str().unwrap()).unwrap(),
        json!({"sum": 3.0})
    );

    let r = within("honest", c.call_tool("honest", ())).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 3})));

    match within("liar", c.call_tool("liar", ())).await {
        Err(Error::OutputSchema { tool, reason }) => {
            assert_eq!(tool, "liar");
            assert!(!reason.is_empty());
        }
        other => panic!("expected an output schema error, got {other:?}"),
    }
    match within("mute", c.call_tool("mute", ())).await {
        Err(Error::OutputSchema { tool, .. }) => assert_eq!(tool, "mute"),
        other => panic!("expected an output schema error, got {other:?}"),
    }
    // A tool execution error carries no structured result and is not checked.
    let r = within("failing", c.call_tool("failing", ())).await.unwrap();
    assert!(r.is_error());
}

#[tokio::test]
async fn a_relisted_tool_without_an_output_schema_is_no_longer_checked() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let c = &pair.client;
    within("list", c.list_all_tools()).await.unwrap();
    assert!(matches!(
        within("liar", c.call_tool("liar", ())).await,
        Err(Error::OutputSchema { .. })
    ));
    pair.server.add_tool(ToolDef::new("liar", || async {
        CallToolResult::structured(json!({"sum": "three"}))
    }));
    within("list again", c.list_all_tools()).await.unwrap();
    let r = within("liar, no schema", c.call_tool("liar", ())).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": "three"})));
}
