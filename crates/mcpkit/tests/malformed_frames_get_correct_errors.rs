//! Malformed frames get the JSON-RPC error the spec asks for — with the request's id whenever it
//! can be read — frames that must not be answered are not, and the connection keeps working
//! after every one of them.

use crate::common;

use common::{assert_error, within, Wire};
use mcpkit::server::{Args, ToolDef};
use mcpkit::transport::{Frame, FrameReader};
use mcpkit::Server;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    message: String,
}

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.message }))
        .build()
}

async fn initialized() -> Wire {
    let mut w = Wire::serve(&server());
    w.initialize().await;
    w
}

#[tokio::test]
async fn invalid_json_is_a_parse_error_with_a_null_id() {
    let mut w = initialized().await;
    for frame in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
        "not json at all",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} trailing"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping",}"#,
    ] {
        w.send(frame).await;
        let reply = w.recv().await;
        assert_error(&reply, -32700, &Value::Null);
    }
    w.assert_silent_then_ping("invalid JSON").await;
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let mut w = initialized().await;
    w.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}")
        .await;
    let reply = w.recv().await;
    assert_error(&reply, -32700, &Value::Null);
    w.assert_silent_then_ping("invalid UTF-8").await;
}

#[tokio::test]
async fn invalid_requests_get_invalid_request_with_the_id_when_readable() {
    let mut w = initialized().await;
    let cases: &[(&str, Value)] = &[
        (r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#, json!(5)),
        (r#"{"id":6,"method":"ping"}"#, json!(6)),
        (r#"{"jsonrpc":2.0,"id":"seven","method":"ping"}"#, json!("seven")),
        (r#"{"jsonrpc":"2.0","id":8,"method":42}"#, json!(8)),
        (r#"{"jsonrpc":"2.0","id":9,"method":"ping","result":{}}"#, json!(9)),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
        (r#"{}"#, Value::Null),
        (r#"{"jsonrpc":"2.0","id":10}"#, json!(10)),
        (r#"[{"jsonrpc":"2.0","id":11,"method":"ping"}]"#, Value::Null),
        (r#"[]"#, Value::Null),
        (r#""ping""#, Value::Null),
        (r#"42"#, Value::Null),
        (r#"null"#, Value::Null),
    ];
    for (frame, id) in cases {
        w.send(frame).await;
        let reply = w.recv().await;
        assert_eq!(reply["error"]["code"], -32600, "{frame} → {reply}");
        assert_error(&reply, -32600, id);
    }
    w.assert_silent_then_ping("invalid requests").await;
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found() {
    let mut w = initialized().await;
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 12, "method": "tools/frobnicate", "params": {}}))
        .await;
    assert_error(&reply, -32601, &json!(12));
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": "x", "method": "sampling/createMessage"}))
        .await;
    assert_error(&reply, -32601, &json!("x"));
    w.assert_silent_then_ping("unknown methods").await;
}

#[tokio::test]
async fn params_of_the_wrong_shape_are_invalid_params_with_the_id() {
    let mut w = initialized().await;
    for params in [
        json!({"name": 5}),
        json!({}),
        json!({"name": "echo", "_meta": {"progressToken": 1.5}}),
    ] {
        let reply = w
            .request(&json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": params}))
            .await;
        assert_error(&reply, -32602, &json!(13));
    }
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 14, "method": "resources/read", "params": {"uri": ["x"]}}))
        .await;
    assert_error(&reply, -32602, &json!(14));
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 15, "method": "logging/setLevel", "params": {"level": "loud"}}))
        .await;
    assert_error(&reply, -32602, &json!(15));
    // `params` that is not a structured value at all.
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 16, "method": "tools/list", "params": "page 2"}))
        .await;
    let code = reply["error"]["code"].as_i64();
    assert!(matches!(code, Some(-32600 | -32602)), "{reply}");
    assert_eq!(reply["id"], 16);
    w.assert_silent_then_ping("invalid params").await;
}

/// MCP params are objects; by-position (array) params are not a way to call a method.
#[tokio::test]
async fn positional_params_are_rejected_with_the_id() {
    let mut w = initialized().await;
    for (id, method, params) in [
        (17, "tools/call", json!(["echo", {"message": "hi"}])),
        (18, "ping", json!([])),
        (19, "resources/read", json!(["test://x"])),
    ] {
        let reply = w
            .request(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let code = reply["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32600 | -32602)), "{method} with {params}: {reply}");
        assert_error(&reply, code.unwrap(), &json!(id));
    }
    w.assert_silent_then_ping("positional params").await;
}

/// `tools/call` whose `arguments` is not an object fails the CallToolRequest schema: that is a
/// protocol error (spec 2025-11-25 `server/tools` "Error Handling": malformed requests), not a
/// tool execution error.
#[tokio::test]
async fn tool_arguments_that_are_not_an_object_are_invalid_params() {
    let mut w = initialized().await;
    for (id, arguments) in [(25, json!("not an object")), (26, json!([1, 2])), (27, json!(7))] {
        let reply = w
            .request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "echo", "arguments": arguments}}))
            .await;
        assert_error(&reply, -32602, &json!(id));
    }
    w.assert_silent_then_ping("non-object arguments").await;
}

/// A notification whose params are not structured is either ignored or answered -32600 with a
/// null id (JSON-RPC's "Invalid Request"); it never kills the connection.
#[tokio::test]
async fn a_notification_with_unstructured_params_is_ignored_or_invalid_request() {
    let mut w = initialized().await;
    for frame in [r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#] {
        w.send(frame).await;
        w.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#).await;
        let mut reply = w.recv().await;
        if reply.get("error").is_some() {
            assert_error(&reply, -32600, &Value::Null);
            reply = w.recv().await;
        }
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": "after", "result": {}}),
            "after {frame}"
        );
    }
}

#[tokio::test]
async fn ids_are_echoed_exactly() {
    let mut w = initialized().await;
    // Integers beyond 2^53 survive unrounded: compare the raw text, not a parsed f64.
    for id in ["9007199254740993", "0", "-1", "9223372036854775807"] {
        w.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let Ok(Some(Frame::Message(bytes))) = within("ping reply", w.reader.read_frame()).await else {
            panic!("no reply");
        };
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains(&format!(r#""id":{id}"#)), "id {id} came back as {text}");
    }
    // "1" and 1 are different ids, both echoed with their type.
    let reply = w.request(&json!({"jsonrpc": "2.0", "id": "1", "method": "ping"})).await;
    assert_eq!(reply["id"], json!("1"));
    let reply = w.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    assert_eq!(reply["id"], json!(1));
    let reply = w.request(&json!({"jsonrpc": "2.0", "id": "", "method": "ping"})).await;
    assert_eq!(reply["id"], json!(""));
    // An error reply echoes the id too.
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": "é\u{1F600}", "method": "nope"}))
        .await;
    assert_error(&reply, -32601, &json!("é\u{1F600}"));
}

#[tokio::test]
async fn an_oversized_line_is_refused_and_the_connection_goes_on() {
    let mut w = Wire::serve_with_max_frame(&server(), 1024);
    w.initialize().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "x".repeat(2048)
    );
    w.send(&big).await;
    let reply = w.recv().await;
    assert!(reply.get("error").is_some(), "{reply}");
    assert!(reply["id"].is_null() || reply["id"] == 20, "{reply}");
    w.assert_silent_then_ping("an oversized line").await;
    // A line just under the limit still works.
    let ok = json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "y".repeat(900)}}});
    let reply = w.request(&ok).await;
    assert_eq!(reply["result"]["content"][0]["text"], "y".repeat(900));
}

#[tokio::test]
async fn a_20_mb_line_is_refused_with_the_default_limit() {
    let mut w = initialized().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{}"}}}}}}"#,
        "x".repeat(20 * 1024 * 1024)
    );
    w.send(&big).await;
    let reply = w.recv().await;
    assert!(reply.get("error").is_some(), "{reply}");
    w.assert_silent_then_ping("a 20 MB line").await;
}

#[tokio::test]
async fn deeply_nested_json_is_an_error_not_a_crash() {
    let mut w = initialized().await;
    let depth = 200_000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    w.send(&nested).await;
    let reply = w.recv().await;
    assert!(reply.get("error").is_some(), "{reply}");
    w.assert_silent_then_ping("200,000 nested arrays").await;
    // Deep nesting inside a request's params.
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":23,"method":"ping","params":{{"deep":{}{}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    w.send(&frame).await;
    let reply = w.recv().await;
    assert_eq!(reply["id"], 23, "{reply}");
    w.assert_silent_then_ping("200,000 nested arrays in params").await;
    // … and inside a tool's arguments.
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":{}{}}}}}}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    w.send(&frame).await;
    let reply = w.recv().await;
    assert_eq!(reply["id"], 24, "{reply}");
    assert!(
        reply.get("error").is_some() || reply["result"]["isError"] == true,
        "deeply nested arguments were accepted: {reply}"
    );
    w.assert_silent_then_ping("200,000 nested arrays in tool arguments")
        .await;
    // Deep objects, unbalanced.
    w.send(&"{\"a\":".repeat(depth)).await;
    let reply = w.recv().await;
    assert!(reply.get("error").is_some(), "{reply}");
    w.assert_silent_then_ping("200,000 unclosed objects").await;
}

#[tokio::test]
async fn frames_that_must_not_be_answered_get_silence() {
    let mut w = initialized().await;
    let silent = [
        // Responses to requests the server never sent.
        r#"{"jsonrpc":"2.0","id":999,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"stray","error":{"code":-32603,"message":"x"}}"#,
        // A response with both result and error.
        r#"{"jsonrpc":"2.0","id":998,"result":{},"error":{"code":1,"message":"x"}}"#,
        // A response without a usable id.
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
        // Notifications nobody handles.
        r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        // Cancels for ids that are not in flight, and malformed cancels.
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope","reason":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}"#,
        // Progress for a token nobody registered.
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}"#,
        // Blank lines.
        "",
        "   ",
    ];
    for frame in silent {
        w.send(frame).await;
        w.assert_silent_then_ping(frame).await;
    }
    // And real work still gets done.
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "still here"}}}))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "still here");
}

#[tokio::test]
async fn a_burst_of_garbage_gets_one_reply_per_frame_in_order() {
    let mut w = initialized().await;
    let frames = [
        ("not json", -32700, Value::Null),
        (r#"{"jsonrpc":"2.0","id":40,"method":"nope"}"#, -32601, json!(40)),
        (r#"{"jsonrpc":"2.0","id":41}"#, -32600, json!(41)),
        (
            r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{}}"#,
            -32602,
            json!(42),
        ),
    ];
    let mut burst = Vec::new();
    for (f, _, _) in &frames {
        burst.extend_from_slice(f.as_bytes());
        burst.push(b'\n');
    }
    burst.pop();
    w.send_bytes(&burst).await;
    let mut replies = Vec::new();
    for _ in &frames {
        replies.push(w.recv().await);
    }
    // Parse-level errors are answered in order; requests run concurrently, so match by id.
    for (frame, code, id) in &frames {
        let reply = replies
            .iter()
            .find(|r| &r["id"] == id && r["error"]["code"] == *code)
            .unwrap_or_else(|| panic!("no {code} reply for {frame} among {replies:?}"));
        assert_error(reply, *code, id);
    }
    w.assert_silent_then_ping("a burst").await;
}
