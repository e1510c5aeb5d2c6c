//! Arguments that do not fit a tool are a tool execution error (`isError: true` with a text that
//! names the problem), so the model can correct itself (spec 2025-11-25 `server/tools` "Error
//! Handling", SEP-1303) — not a protocol error. An unknown tool is a protocol error (-32602).

use crate::common;

use common::within;
use mcpkit::server::{Args, RawArgs, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::CallToolResult;
use mcpkit::types::ErrorCode;
use mcpkit::{Client, Server};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message to echo back.
    message: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Booking {
    guests: u32,
    date: String,
    note: String,
}

fn server() -> Server {
    let range = json!({
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 10}},
        "required": ["n"]
    });
    Server::builder()
        .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.message }))
        .tool(ToolDef::new("book", |Args(b): Args<Booking>| async move {
            format!("{} guests on {} ({})", b.guests, b.date, b.note)
        }))
        .tool(
            ToolDef::new(
                "pick",
                |RawArgs(a): RawArgs| async move { Value::Object(a).to_string() },
            )
            .input_schema(range.as_object().unwrap().clone())
            .validate_input(),
        )
        .build()
}

fn error_text(r: &CallToolResult) -> String {
    assert!(r.is_error(), "expected a tool execution error, got {r:?}");
    let content = serde_json::to_value(&r.content).unwrap();
    assert_eq!(content[0]["type"], "text", "{content}");
    content[0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn wrong_or_missing_arguments_are_tool_execution_errors() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let c = &pair.client;
    let text = error_text(
        &within("wrong type", c.call_tool("echo", json!({"message": 5})))
            .await
            .unwrap(),
    );
    assert!(text.contains("echo"), "the error does not name the tool: {text}");
    assert!(
        text.contains("expected a string, got 5"),
        "the error does not say what is wrong: {text}"
    );
    let text = error_text(&within("missing", c.call_tool("echo", json!({}))).await.unwrap());
    assert!(
        text.contains("message"),
        "the error does not name the missing argument: {text}"
    );
    let text = error_text(&within("no arguments", c.call_tool("echo", ())).await.unwrap());
    assert!(text.contains("message"), "{text}");
    // Validated against the input schema before the handler runs.
    let text = error_text(
        &within("out of range", c.call_tool("pick", json!({"n": 11})))
            .await
            .unwrap(),
    );
    assert!(text.contains("pick") && text.contains("11"), "{text}");
    let text = error_text(
        &within("schema type", c.call_tool("pick", json!({"n": "3"})))
            .await
            .unwrap(),
    );
    assert!(text.contains("pick"), "{text}");
    let r = within("in range", c.call_tool("pick", json!({"n": 3}))).await.unwrap();
    assert!(!r.is_error());
    // Correct arguments work.
    let r = within("echo", c.call_tool("echo", json!({"message": "hi"})))
        .await
        .unwrap();
    assert!(!r.is_error());
    // None of this was a protocol error on the wire.
    let errors: Vec<String> = pair
        .server_sent()
        .into_iter()
        .filter(|f| f.contains("\"error\":"))
        .collect();
    assert!(errors.is_empty(), "protocol errors were sent: {errors:?}");
}

/// With several arguments of the same type, "invalid type: integer, expected a string" does
/// not tell the model which one to fix: the error names the offending argument.
#[tokio::test]
async fn a_tool_argument_error_names_the_offending_argument() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let c = &pair.client;
    let text = error_text(
        &within("echo", c.call_tool("echo", json!({"message": 5})))
            .await
            .unwrap(),
    );
    assert!(text.contains("message"), "the error does not name the argument: {text}");
    let args = json!({"guests": 2, "date": "2026-01-01", "note": false});
    let text = error_text(&within("book", c.call_tool("book", args)).await.unwrap());
    assert!(text.contains("note"), "the error does not name the argument: {text}");
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let e = within("unknown", pair.client.call_tool("nope", json!({})))
        .await
        .unwrap_err();
    let e = e.rpc().expect("a protocol error");
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("nope"), "{e:?}");
}
