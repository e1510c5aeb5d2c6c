//! A tool argument that does not fit is answered in the words of the tool's input schema: the
//! argument's name, the type the schema asks for and the value received — not serde's
//! `invalid type: string "abc", expected f64 at line 1 column 10`, which names a Rust type and
//! a place in a text the model never saw. Still a tool execution error (`isError: true`), as
//! 2025-11-25 `server/tools` "Error Handling" asks, never a JSON-RPC error.

use crate::common;

use common::within;
use mcpkit::server::{Args, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::{Client, Server};
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Tag {
    name: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    tags: Vec<Tag>,
    color: Color,
    level: u8,
    limit: Option<i64>,
}

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("add", |Args(a): Args<AddArgs>| async move { a.a + a.b }))
        .tool(ToolDef::new("note", |Args(n): Args<NoteArgs>| async move {
            let tags: Vec<String> = n.tags.into_iter().map(|t| t.name).collect();
            format!("{tags:?} {} {:?} {}", n.level, n.limit, matches!(n.color, Color::Red))
        }))
        .build()
}

/// The text of the tool error `name(arguments)` answered.
async fn error_text(pair: &TestPair, name: &str, arguments: Value) -> String {
    let r = within(name, pair.client.call_tool(name, arguments)).await.unwrap();
    assert!(r.is_error(), "expected a tool execution error, got {r:?}");
    let content = serde_json::to_value(&r.content).unwrap();
    assert_eq!(content[0]["type"], "text", "{content}");
    content[0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_wrong_argument_gets_its_name_the_expected_type_and_the_value() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let note = |changed: Value| {
        let mut args = json!({"tags": [], "color": "red", "level": 1});
        for (k, v) in changed.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    let cases = [
        (
            "add",
            json!({"a": "abc", "b": 1}),
            r#"Invalid arguments for tool add: argument "a": expected a number, got "abc""#,
        ),
        (
            "add",
            json!({"a": 1}),
            r#"Invalid arguments for tool add: argument "b" is missing: expected a number"#,
        ),
        (
            "note",
            note(json!({"tags": [{"name": "ok"}, {"name": 5}]})),
            r#"Invalid arguments for tool note: argument "tags[1].name": expected a string, got 5"#,
        ),
        (
            "note",
            note(json!({"tags": {"name": "ok"}})),
            r#"Invalid arguments for tool note: argument "tags": expected an array, got an object"#,
        ),
        (
            "note",
            note(json!({"color": "blue"})),
            r#"Invalid arguments for tool note: argument "color": expected one of "red", "green", got "blue""#,
        ),
        (
            "note",
            note(json!({"level": 300})),
            r#"Invalid arguments for tool note: argument "level": expected an integer from 0 to 255, got 300"#,
        ),
        (
            "note",
            note(json!({"level": 1.5})),
            r#"Invalid arguments for tool note: argument "level": expected an integer from 0 to 255, got 1.5"#,
        ),
        (
            "note",
            note(json!({"limit": "ten"})),
            r#"Invalid arguments for tool note: argument "limit": expected an integer or null, got "ten""#,
        ),
    ];
    for (tool, arguments, expected) in cases {
        assert_eq!(
            error_text(&pair, tool, arguments.clone()).await,
            expected,
            "{arguments}"
        );
    }
    // Arguments that fit still run.
    let r = within("fits", pair.client.call_tool("note", note(json!({"limit": 3}))))
        .await
        .unwrap();
    assert!(!r.is_error(), "{r:?}");
    // None of this was a JSON-RPC error.
    let errors: Vec<String> = pair
        .server_sent()
        .into_iter()
        .filter(|f| f.contains("\"error\":"))
        .collect();
    assert!(errors.is_empty(), "protocol errors were sent: {errors:?}");
}
