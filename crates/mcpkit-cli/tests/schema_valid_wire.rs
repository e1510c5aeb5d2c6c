//! Every frame on the wire validates against the MCP 2025-11-25 JSON schema, in both directions,
//! while every method of the 2025-11-25 catalogue is exercised against the reference server
//! (`mcpkit serve`'s server) over the in-memory pair. The reference fixtures' exact outputs are
//! pinned on the way.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{within, SchemaValidator};
use mcpkit::client::{prompt_ref, resource_ref, CallOptions, ServerNotification};
use mcpkit::server::{PromptDef, ResourceDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::method::{CreateMessage, ListRoots, Ping};
use mcpkit::types::schema::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, GetPromptResult, JsonObject, LoggingLevel,
    PromptMessage, Root, SamplingMessage,
};
use mcpkit::types::{ErrorCode, ErrorObject, ProtocolVersion};
use mcpkit::{Client, ClientBuilder, Error, RequestOptions, Server};
use mcpkit_cli::reference;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

const SAMPLING_REPLY: &str = "This is a test response from the client";
/// A sampling prompt the client's handler never answers (to make the server cancel it).
const HANG: &str = "hang forever";

fn object(v: Value) -> JsonObject {
    v.as_object().cloned().expect("an object")
}

/// What the client's handlers were asked.
#[derive(Default)]
struct Asked {
    sampling: Mutex<Vec<CreateMessageParams>>,
    elicitation: Mutex<Vec<ElicitParams>>,
}

/// A client that answers sampling and elicitation the way the conformance harness does, and
/// offers one root.
fn harness_client(asked: Arc<Asked>) -> ClientBuilder {
    let sampled = asked.clone();
    Client::builder()
        .on_sampling(move |p: CreateMessageParams| {
            sampled.sampling.lock().unwrap().push(p.clone());
            async move {
                let prompt = p
                    .messages
                    .first()
                    .and_then(|m| m.content.iter().find_map(|c| c.as_text()));
                if prompt == Some(HANG) {
                    std::future::pending::<()>().await;
                }
                Ok::<_, ErrorObject>(CreateMessageResult::text("test-model", SAMPLING_REPLY))
            }
        })
        .on_elicitation(move |p: ElicitParams| {
            asked.elicitation.lock().unwrap().push(p.clone());
            async move {
                let content = match p.message() {
                    "Please review and update the form fields with defaults" => json!({
                        "name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false
                    }),
                    "Please select options from the enum fields" => json!({
                        "untitledSingle": "option1",
                        "titledSingle": "value1",
                        "legacyEnum": "opt1",
                        "untitledMulti": ["option1", "option2"],
                        "titledMulti": ["value1", "value2"]
                    }),
                    _ => json!({"username": "testuser", "email": "test@example.com"}),
                };
                Ok::<_, ErrorObject>(ElicitResult::accept(object(content)))
            }
        })
        .roots(vec![Root::new("file:///workspace").with_name("workspace")])
}

fn text_of(r: &mcpkit::types::schema::CallToolResult) -> String {
    let content = serde_json::to_value(&r.content).unwrap();
    assert_eq!(
        content.as_array().map(Vec::len),
        Some(1),
        "expected one content block: {content}"
    );
    assert_eq!(content[0]["type"], "text", "expected a text block: {content}");
    content[0]["text"].as_str().unwrap().to_owned()
}

fn content_json(r: &mcpkit::types::schema::CallToolResult) -> Value {
    serde_json::to_value(&r.content).unwrap()
}

/// Wait for the first notification `pick` accepts, skipping others.
async fn next_notification<T>(
    rx: &mut broadcast::Receiver<ServerNotification>,
    what: &str,
    mut pick: impl FnMut(&ServerNotification) -> Option<T>,
) -> T {
    within(what, async {
        loop {
            match rx.recv().await {
                Ok(n) => {
                    if let Some(t) = pick(&n) {
                        return t;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => panic!("the notification stream closed ({what})"),
            }
        }
    })
    .await
}

fn count_sent(pair: &TestPair, method: &str) -> usize {
    pair.server_sent()
        .iter()
        .filter(|f| serde_json::from_str::<Value>(f).is_ok_and(|v| v["method"] == method))
        .count()
}

#[test]
fn the_validator_rejects_invalid_frames() {
    let v = SchemaValidator::v2025_11_25();
    // Requests and notifications by method.
    let ok = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}});
    v.check_def("CallToolRequest", &ok).unwrap();
    assert_eq!(v.method_def("tools/call"), Some("CallToolRequest"));
    assert_eq!(v.method_def("notifications/progress"), Some("ProgressNotification"));
    let no_name = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}});
    assert!(v.check_def("CallToolRequest", &no_name).is_err());
    // Results by the method of the request with the same id.
    let asked = vec![r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}"#.to_owned()];
    let good = vec![r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#.to_owned()];
    let r = v.check_transcript(&good, &asked);
    r.assert_valid();
    assert_eq!(r.count("result tools/call"), 1);
    for bad in [
        // A content block of an unknown type.
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"bogus"}]}}"#,
        // No content at all.
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        // A result for an id nobody asked.
        r#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#,
        // A null id on a result.
        r#"{"jsonrpc":"2.0","id":null,"result":{"content":[]}}"#,
        // An error without a code.
        r#"{"jsonrpc":"2.0","id":7,"error":{"message":"x"}}"#,
        // A method the schema does not know.
        r#"{"jsonrpc":"2.0","method":"notifications/bogus"}"#,
        // A wrong protocol marker.
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        // A log message without data.
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#,
        "not json",
    ] {
        let r = v.check_transcript(&[bad.to_owned()], &asked);
        assert_eq!(r.errors.len(), 1, "the validator accepted {bad}");
    }
}

/// Every method of the 2025-11-25 catalogue, both directions, against the reference server; then
/// every frame either side wrote is checked against the schema.
#[tokio::test]
async fn every_catalogue_method_is_schema_valid_in_both_directions() {
    let asked = Arc::new(Asked::default());
    let pair = within(
        "connect",
        TestPair::connect(reference::server(), harness_client(asked.clone())),
    )
    .await
    .expect("connect");
    let client = &pair.client;
    let mut notes = client.notifications();

    // initialize
    let init = client.initialize_result();
    assert_eq!(init.protocol_version, "2025-11-25");
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().name, reference::SERVER_NAME);
    assert_eq!(client.instructions(), Some(reference::INSTRUCTIONS));
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some() && caps.resources.is_some() && caps.prompts.is_some());
    assert!(caps.logging.is_some() && caps.completions.is_some());

    // ping, both ways
    within("ping", client.ping()).await.unwrap();
    within(
        "server ping",
        pair.connection.peer().request::<Ping>(&Default::default()),
    )
    .await
    .unwrap();

    // tools/list
    let tools = within("tools/list", client.list_tools(None)).await.unwrap();
    assert!(tools.next_cursor.is_none());
    let mut names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "add",
            "echo",
            "json_schema_2020_12_tool",
            "test_audio_content",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "test_embedded_resource",
            "test_error_handling",
            "test_header_param",
            "test_image_content",
            "test_input_required_result_capabilities",
            "test_input_required_result_elicitation",
            "test_input_required_result_list_roots",
            "test_input_required_result_multi_round",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_request_state",
            "test_input_required_result_sampling",
            "test_input_required_result_tampered_state",
            "test_logging_tool",
            "test_missing_capability",
            "test_multiple_content_types",
            "test_reconnection",
            "test_sampling",
            "test_simple_text",
            "test_streaming_elicitation",
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_trigger_prompt_change",
            "test_trigger_tool_change",
        ]
    );
    for t in &tools.tools {
        assert!(
            t.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{} has no description",
            t.name
        );
        assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
    }
    let schema_tool = tools
        .tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    let schema = Value::Object(schema_tool.input_schema.clone());
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["allOf"][0]["anyOf"],
        json!([{"required": ["phone"]}, {"required": ["email"]}])
    );
    assert!(schema.get("if").is_some() && schema.get("then").is_some() && schema.get("else").is_some());
    let add = tools.tools.iter().find(|t| t.name == "add").unwrap();
    assert!(add.output_schema.is_some(), "add declares an output schema");

    // tools/call: every reference tool
    let r = within("echo", client.call_tool("echo", json!({"message": "hello"})))
        .await
        .unwrap();
    assert_eq!(text_of(&r), "hello");
    assert!(!r.is_error());
    let r = within("add", client.call_tool("add", json!({"a": 1, "b": 2})))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"sum": 3.0})));
    let r = within("simple text", client.call_tool("test_simple_text", ()))
        .await
        .unwrap();
    assert_eq!(
        content_json(&r),
        json!([{"type": "text", "text": reference::SIMPLE_TEXT}])
    );
    let r = within("image", client.call_tool("test_image_content", json!({})))
        .await
        .unwrap();
    assert_eq!(
        content_json(&r),
        json!([{"type": "image", "data": reference::TEST_IMAGE_BASE64, "mimeType": "image/png"}])
    );
    let r = within("audio", client.call_tool("test_audio_content", json!({})))
        .await
        .unwrap();
    assert_eq!(
        content_json(&r),
        json!([{"type": "audio", "data": reference::TEST_AUDIO_BASE64, "mimeType": "audio/wav"}])
    );
    let r = within("embedded", client.call_tool("test_embedded_resource", json!({})))
        .await
        .unwrap();
    assert_eq!(
        content_json(&r),
        json!([{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."
        }}])
    );
    let r = within("multiple", client.call_tool("test_multiple_content_types", json!({})))
        .await
        .unwrap();
    assert_eq!(
        content_json(&r),
        json!([
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": reference::TEST_IMAGE_BASE64, "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": "test://mixed-content-resource", "mimeType": "application/json",
                "text": "{\"test\":\"data\",\"value\":123}"
            }}
        ])
    );
    let r = within("error handling", client.call_tool("test_error_handling", json!({})))
        .await
        .unwrap();
    assert!(r.is_error());
    assert_eq!(
        content_json(&r),
        json!([{"type": "text", "text": reference::ERROR_TEXT}])
    );
    let r = within("reconnection", client.call_tool("test_reconnection", json!({})))
        .await
        .unwrap();
    assert_eq!(text_of(&r), reference::RECONNECTION_TEXT);
    let args = json!({"name": "Ada", "email": "ada@example.com"});
    let r = within("json schema tool", client.call_tool("json_schema_2020_12_tool", &args))
        .await
        .unwrap();
    assert_eq!(
        text_of(&r),
        r#"JSON Schema 2020-12 tool called with: {"name":"Ada","email":"ada@example.com"}"#
    );

    // sampling/createMessage (server → client, inside a tool)
    let r = within(
        "sampling",
        client.call_tool("test_sampling", json!({"prompt": "Test prompt for sampling"})),
    )
    .await
    .unwrap();
    assert_eq!(text_of(&r), format!("LLM response: {SAMPLING_REPLY}"));
    {
        let sampled = asked.sampling.lock().unwrap();
        assert_eq!(sampled.len(), 1);
        assert_eq!(sampled[0].max_tokens, 100);
        let m = &sampled[0].messages;
        assert_eq!(m.len(), 1);
        assert_eq!(serde_json::to_value(m[0].role).unwrap(), "user");
        assert_eq!(
            m[0].content.iter().find_map(|c| c.as_text()),
            Some("Test prompt for sampling")
        );
    }

    // elicitation/create (server → client, inside a tool), all three fixtures
    let r = within(
        "elicitation",
        client.call_tool(
            "test_elicitation",
            json!({"message": "Please provide your information"}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        text_of(&r),
        r#"User response: action=accept, content={"username":"testuser","email":"test@example.com"}"#
    );
    let r = within(
        "sep1034",
        client.call_tool("test_elicitation_sep1034_defaults", json!({})),
    )
    .await
    .unwrap();
    assert_eq!(
        text_of(&r),
        r#"Elicitation completed: action=accept, content={"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}"#
    );
    let r = within("sep1330", client.call_tool("test_elicitation_sep1330_enums", json!({})))
        .await
        .unwrap();
    assert_eq!(
        text_of(&r),
        r#"Elicitation completed: action=accept, content={"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}"#
    );
    {
        let elicited = asked.elicitation.lock().unwrap();
        assert_eq!(elicited.len(), 3);
        let first = serde_json::to_value(&elicited[0]).unwrap();
        assert_eq!(first["message"], "Please provide your information");
        assert_eq!(first["requestedSchema"]["required"], json!(["username", "email"]));
        let defaults = serde_json::to_value(&elicited[1]).unwrap();
        let props = &defaults["requestedSchema"]["properties"];
        assert_eq!(props["name"]["default"], "John Doe");
        assert_eq!(props["age"]["default"], 30);
        assert_eq!(props["score"]["default"], 95.5);
        assert_eq!(props["status"]["default"], "active");
        assert_eq!(props["verified"]["default"], true);
        let enums = serde_json::to_value(&elicited[2]).unwrap();
        let props = &enums["requestedSchema"]["properties"];
        assert!(props["untitledSingle"].get("oneOf").is_none() && props["untitledSingle"].get("enumNames").is_none());
        assert!(props["titledSingle"].get("enum").is_none());
        assert_eq!(
            props["legacyEnum"]["enumNames"],
            json!(["Option One", "Option Two", "Option Three"])
        );
        assert!(props["titledMulti"]["items"].get("enum").is_none());
    }

    // logging/setLevel + notifications/message at the right level
    within("setLevel debug", client.set_log_level(LoggingLevel::Debug))
        .await
        .unwrap();
    let r = within("logging tool", client.call_tool("test_tool_with_logging", json!({})))
        .await
        .unwrap();
    assert_eq!(text_of(&r), reference::LOGGING_RESULT_TEXT);
    let mut logged = Vec::new();
    while logged.len() < 3 {
        let (level, data) = next_notification(&mut notes, "log messages", |n| match n {
            ServerNotification::Log(m) => Some((m.level, m.data.clone())),
            _ => None,
        })
        .await;
        assert_eq!(level, LoggingLevel::Info);
        logged.push(data);
    }
    assert_eq!(logged, reference::LOG_MESSAGES.map(Value::from).to_vec());
    within("setLevel warning", client.set_log_level(LoggingLevel::Warning))
        .await
        .unwrap();
    let before = count_sent(&pair, "notifications/message");
    within(
        "logging tool, filtered",
        client.call_tool("test_tool_with_logging", json!({})),
    )
    .await
    .unwrap();
    assert_eq!(
        count_sent(&pair, "notifications/message"),
        before,
        "info messages were sent although the level is warning"
    );

    // notifications/progress, routed to the caller
    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let r = within(
        "progress tool",
        client.call_tool_with("test_tool_with_progress", json!({}), options),
    )
    .await
    .unwrap();
    let mut routed = Vec::new();
    while let Ok(p) = rx.try_recv() {
        assert_eq!(p.total, Some(100.0));
        routed.push(p.progress);
    }
    assert_eq!(routed, [0.0, 50.0, 100.0], "the progress the caller got");
    let token = text_of(&r);
    let mut streamed = Vec::new();
    while streamed.len() < 3 {
        let p = next_notification(&mut notes, "progress", |n| match n {
            ServerNotification::Progress(p) => Some(p.clone()),
            _ => None,
        })
        .await;
        assert_eq!(p.progress_token.to_string(), token);
        assert_eq!(
            p.message.as_deref(),
            Some(format!("Completed step {} of 100", p.progress).as_str())
        );
        streamed.push(p.progress);
    }
    assert_eq!(streamed, [0.0, 50.0, 100.0]);

    // notifications/cancelled, client → server: drop a call in flight
    let slow = client.call_tool("test_reconnection", json!({}));
    assert!(tokio::time::timeout(Duration::from_millis(20), slow).await.is_err());
    within("ping after cancel", client.ping()).await.unwrap();

    // notifications/cancelled, server → client: a server request times out
    let hang = CreateMessageParams::new(vec![SamplingMessage::user_text(HANG)], 10);
    let options = RequestOptions {
        timeout: Some(Duration::from_millis(30)),
        ..Default::default()
    };
    let e = within(
        "hanging sampling",
        pair.connection.peer().request_with::<CreateMessage>(&hang, options),
    )
    .await
    .unwrap_err();
    assert!(matches!(e, Error::Timeout(_)), "{e:?}");

    // resources/list, resources/templates/list, resources/read (text, binary, template)
    let resources = within("resources/list", client.list_resources(None)).await.unwrap();
    let mut uris: Vec<&str> = resources.resources.iter().map(|r| r.uri.as_str()).collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        ["test://static-binary", "test://static-text", "test://watched-resource"]
    );
    let templates = within("templates/list", client.list_resource_templates(None))
        .await
        .unwrap();
    assert_eq!(templates.resource_templates.len(), 1);
    assert_eq!(
        templates.resource_templates[0].uri_template,
        "test://template/{id}/data"
    );
    let r = within("read text", client.read_resource("test://static-text"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.contents).unwrap(),
        json!([{"uri": "test://static-text", "mimeType": "text/plain", "text": reference::STATIC_TEXT}])
    );
    let r = within("read binary", client.read_resource("test://static-binary"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.contents).unwrap(),
        json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": reference::TEST_IMAGE_BASE64}])
    );
    let r = within("read template", client.read_resource("test://template/123/data"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&r.contents).unwrap(),
        json!([{
            "uri": "test://template/123/data",
            "mimeType": "application/json",
            "text": r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#
        }])
    );
    let e = within("read unknown", client.read_resource("test://does-not-exist"))
        .await
        .unwrap_err();
    let e = e.rpc().expect("a JSON-RPC error");
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);

    // resources/subscribe, notifications/resources/updated, resources/unsubscribe
    within("subscribe", client.subscribe("test://watched-resource"))
        .await
        .unwrap();
    pair.server.notify_resource_updated("test://watched-resource");
    let uri = next_notification(&mut notes, "resources/updated", |n| match n {
        ServerNotification::ResourceUpdated(u) => Some(u.uri.clone()),
        _ => None,
    })
    .await;
    assert_eq!(uri, "test://watched-resource");
    pair.server.notify_resource_updated("test://static-text");
    within("unsubscribe", client.unsubscribe("test://watched-resource"))
        .await
        .unwrap();
    pair.server.notify_resource_updated("test://watched-resource");
    within("ping after unsubscribe", client.ping()).await.unwrap();
    assert_eq!(
        count_sent(&pair, "notifications/resources/updated"),
        1,
        "updates went to a URI nobody subscribed to"
    );

    // prompts/list, prompts/get (the four 2025 fixtures; the 2026 one asks for input)
    let prompts = within("prompts/list", client.list_prompts(None)).await.unwrap();
    let mut names: Vec<&str> = prompts.prompts.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "test_input_required_result_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_simple_prompt"
        ]
    );
    let messages = |r: &GetPromptResult| serde_json::to_value(&r.messages).unwrap();
    let r = within(
        "simple prompt",
        client.get_prompt("test_simple_prompt", Vec::<(String, String)>::new()),
    )
    .await
    .unwrap();
    assert_eq!(
        messages(&r),
        json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
    );
    let r = within(
        "prompt with arguments",
        client.get_prompt(
            "test_prompt_with_arguments",
            [("arg1", "testValue1"), ("arg2", "testValue2")],
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        messages(&r),
        json!([{"role": "user", "content": {
            "type": "text", "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
        }}])
    );
    let r = within(
        "prompt with resource",
        client.get_prompt(
            "test_prompt_with_embedded_resource",
            [("resourceUri", "test://example-resource")],
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        messages(&r),
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://example-resource", "mimeType": "text/plain",
                "text": "Embedded resource content for testing."
            }}},
            {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
        ])
    );
    let r = within(
        "prompt with image",
        client.get_prompt("test_prompt_with_image", Vec::<(String, String)>::new()),
    )
    .await
    .unwrap();
    assert_eq!(
        messages(&r),
        json!([
            {"role": "user", "content": {"type": "image", "data": reference::TEST_IMAGE_BASE64, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
        ])
    );
    let e = within(
        "prompt missing argument",
        client.get_prompt("test_prompt_with_arguments", [("arg1", "x")]),
    )
    .await
    .unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code), Some(ErrorCode::INVALID_PARAMS));

    // completion/complete, for a prompt argument and a template variable
    let c = within(
        "complete prompt",
        client.complete(prompt_ref("test_prompt_with_arguments"), "arg1", "test"),
    )
    .await
    .unwrap();
    assert_eq!(c.completion.values, ["test1", "test2", "test3", "testValue1"]);
    assert_eq!(c.completion.total, Some(4));
    assert_eq!(c.completion.has_more, Some(false));
    let c = within(
        "complete template",
        client.complete(resource_ref("test://template/{id}/data"), "id", "4"),
    )
    .await
    .unwrap();
    assert_eq!(c.completion.values, ["456"]);

    // roots/list (server → client) and notifications/roots/list_changed (client → server)
    let roots = within(
        "roots/list",
        pair.connection.peer().request::<ListRoots>(&Default::default()),
    )
    .await
    .unwrap();
    assert_eq!(roots.roots, vec![Root::new("file:///workspace").with_name("workspace")]);
    client.set_roots(vec![Root::new("file:///elsewhere")]).unwrap();
    let roots = within(
        "roots/list again",
        pair.connection.peer().request::<ListRoots>(&Default::default()),
    )
    .await
    .unwrap();
    assert_eq!(roots.roots, vec![Root::new("file:///elsewhere")]);

    // notifications/{tools,resources,prompts}/list_changed after run-time changes
    pair.server
        .add_tool(ToolDef::new("dynamic", || async { "dynamic" }).description("Added at run time"));
    next_notification(&mut notes, "tools/list_changed", |n| {
        matches!(n, ServerNotification::ToolListChanged).then_some(())
    })
    .await;
    let tools = within("list_all_tools", client.list_all_tools()).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "dynamic"));
    assert_eq!(
        text_of(&within("dynamic", client.call_tool("dynamic", ())).await.unwrap()),
        "dynamic"
    );
    assert!(pair.server.remove_tool("dynamic"));
    next_notification(&mut notes, "tools/list_changed", |n| {
        matches!(n, ServerNotification::ToolListChanged).then_some(())
    })
    .await;
    let tools = within("list_all_tools", client.list_all_tools()).await.unwrap();
    assert!(!tools.iter().any(|t| t.name == "dynamic"));
    pair.server
        .add_resource(ResourceDef::text("test://dynamic", "dynamic", "text/plain", "new").description("new"));
    next_notification(&mut notes, "resources/list_changed", |n| {
        matches!(n, ServerNotification::ResourceListChanged).then_some(())
    })
    .await;
    pair.server.add_prompt(
        PromptDef::new("dynamic_prompt", |_| async {
            Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::user_text("hi")]))
        })
        .description("Added at run time"),
    );
    next_notification(&mut notes, "prompts/list_changed", |n| {
        matches!(n, ServerNotification::PromptListChanged).then_some(())
    })
    .await;
    within("final ping", client.ping()).await.unwrap();

    // Every frame either side wrote validates, and every kind of frame the catalogue has was seen.
    let v = SchemaValidator::v2025_11_25();
    let sent = pair.server_sent();
    let received = pair.server_received();
    let server_report = v.check_transcript(&sent, &received);
    server_report.assert_valid();
    let client_report = v.check_transcript(&received, &sent);
    client_report.assert_valid();
    for kind in [
        "result initialize",
        "result ping",
        "result tools/list",
        "result tools/call",
        "result resources/list",
        "result resources/templates/list",
        "result resources/read",
        "result resources/subscribe",
        "result resources/unsubscribe",
        "result prompts/list",
        "result prompts/get",
        "result completion/complete",
        "result logging/setLevel",
        "request ping",
        "request sampling/createMessage",
        "request elicitation/create",
        "request roots/list",
        "notification notifications/message",
        "notification notifications/progress",
        "notification notifications/resources/updated",
        "notification notifications/tools/list_changed",
        "notification notifications/resources/list_changed",
        "notification notifications/prompts/list_changed",
        "notification notifications/cancelled",
        "error -32002",
        "error -32602",
    ] {
        assert!(
            server_report.count(kind) > 0,
            "the server never sent a {kind}: {:?}",
            server_report.kinds
        );
    }
    for kind in [
        "request initialize",
        "request ping",
        "request tools/list",
        "request tools/call",
        "request resources/list",
        "request resources/templates/list",
        "request resources/read",
        "request resources/subscribe",
        "request resources/unsubscribe",
        "request prompts/list",
        "request prompts/get",
        "request completion/complete",
        "request logging/setLevel",
        "result ping",
        "result sampling/createMessage",
        "result elicitation/create",
        "result roots/list",
        "notification notifications/initialized",
        "notification notifications/cancelled",
        "notification notifications/roots/list_changed",
    ] {
        assert!(
            client_report.count(kind) > 0,
            "the client never sent a {kind}: {:?}",
            client_report.kinds
        );
    }

    // The dropped call got no response; the timed-out server request got none either.
    let cancelled: Vec<Value> = received
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .filter(|v| v["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    let dropped_id = &cancelled[0]["params"]["requestId"];
    let answered = sent
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .any(|v| v.get("method").is_none() && &v["id"] == dropped_id);
    assert!(!answered, "the server answered the cancelled request {dropped_id}");
}

/// `notifications/roots/list_changed` reaches `ServerBuilder::on_roots_changed`, whose
/// `roots/list` then sees the new roots.
#[tokio::test]
async fn roots_list_changed_reaches_the_server_and_roots_list_sees_the_new_roots() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = Server::builder()
        .on_roots_changed(move |cx| {
            let tx = tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(cx.list_roots().await.map(|r| r.roots));
            });
        })
        .build();
    let pair = within(
        "connect",
        TestPair::connect(server, Client::builder().roots(vec![Root::new("file:///a")])),
    )
    .await
    .unwrap();
    pair.client
        .set_roots(vec![Root::new("file:///b").with_name("b")])
        .unwrap();
    let roots = within("roots after list_changed", rx.recv()).await.unwrap().unwrap();
    assert_eq!(roots, vec![Root::new("file:///b").with_name("b")]);
    within("ping", pair.client.ping()).await.unwrap();
    let v = SchemaValidator::v2025_11_25();
    let report = v.check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert_eq!(report.count("request roots/list"), 1);
    v.check_transcript(&pair.server_received(), &pair.server_sent())
        .assert_valid();
}

/// A handler can ping the client through its request context (server → client `ping`).
#[tokio::test]
async fn a_handler_can_ping_the_client() {
    let server = Server::builder()
        .tool(ToolDef::new(
            "ping_client",
            |cx: mcpkit::server::RequestContext| async move {
                match cx.peer().request::<Ping>(&Default::default()).await {
                    Ok(_) => "pong".to_owned(),
                    Err(e) => format!("ping failed: {e}"),
                }
            },
        ))
        .build();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    let r = within("ping_client", pair.client.call_tool("ping_client", ()))
        .await
        .unwrap();
    assert_eq!(text_of(&r), "pong");
    let v = SchemaValidator::v2025_11_25();
    let report = v.check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert_eq!(report.count("request ping"), 1);
    v.check_transcript(&pair.server_received(), &pair.server_sent())
        .assert_valid();
}

fn numbered_tools(n: usize) -> Server {
    let mut b = Server::builder().page_size(2);
    for i in 0..n {
        b = b.tool(ToolDef::new(format!("tool_{i}"), move || async move { format!("tool {i}") }).description("t"));
    }
    b.build()
}

/// Lists are paginated: `nextCursor` until the last page, `list_all_*` follows it, and a cursor
/// the server never issued is -32602.
#[tokio::test]
async fn pagination_follows_next_cursor_and_rejects_unknown_cursors() {
    let pair = within("connect", TestPair::connect(numbered_tools(5), Client::builder()))
        .await
        .unwrap();
    let client = &pair.client;
    let first = within("page 1", client.list_tools(None)).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first
        .next_cursor
        .clone()
        .expect("a nextCursor on the first of three pages");
    let second = within("page 2", client.list_tools(Some(cursor))).await.unwrap();
    assert_eq!(second.tools.len(), 2);
    let third = within("page 3", client.list_tools(second.next_cursor.clone()))
        .await
        .unwrap();
    assert_eq!(third.tools.len(), 1);
    assert!(third.next_cursor.is_none(), "the last page has no nextCursor");
    let all = within("all", client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"]);
    for bad in ["not-a-cursor", "mcpkit:99", ""] {
        let e = within("bad cursor", client.list_tools(Some(bad.to_owned())))
            .await
            .unwrap_err();
        assert_eq!(
            e.rpc().map(|e| e.code),
            Some(ErrorCode::INVALID_PARAMS),
            "cursor {bad:?}: {e:?}"
        );
    }
    let v = SchemaValidator::v2025_11_25();
    let report = v.check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert!(report.count("result tools/list") >= 6);
    assert_eq!(report.count("error -32602"), 3);
}

/// A server→client request needs the client's capability: against a client without sampling or
/// elicitation handlers the reference tools report that in their text and send no request.
#[tokio::test]
async fn server_requests_need_the_clients_capability() {
    let pair = within("connect", TestPair::connect(reference::server(), Client::builder()))
        .await
        .unwrap();
    let r = within(
        "sampling",
        pair.client.call_tool("test_sampling", json!({"prompt": "p"})),
    )
    .await
    .unwrap();
    assert!(
        text_of(&r).starts_with("Sampling not supported or error: "),
        "{}",
        text_of(&r)
    );
    let r = within(
        "elicitation",
        pair.client.call_tool("test_elicitation", json!({"message": "m"})),
    )
    .await
    .unwrap();
    assert!(
        text_of(&r).starts_with("Elicitation not supported or error: "),
        "{}",
        text_of(&r)
    );
    let report = SchemaValidator::v2025_11_25().check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert_eq!(report.count("request sampling/createMessage"), 0);
    assert_eq!(report.count("request elicitation/create"), 0);
}

/// A session on an older revision speaks that revision: the same calls against the reference
/// server, with the client asking for 2024-11-05, 2025-03-26 or 2025-06-18, produce frames that
/// validate against that revision's schema (results are adapted to what the revision can say).
#[tokio::test]
async fn older_revisions_get_frames_valid_in_their_own_schema() {
    let mut failures = Vec::new();
    for version in [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
    ] {
        let asked = Arc::new(Asked::default());
        let client = harness_client(asked).protocol_version(version);
        let pair = within("connect", TestPair::connect(reference::server(), client))
            .await
            .unwrap();
        let c = &pair.client;
        assert_eq!(c.protocol_version(), version);
        within("ping", c.ping()).await.unwrap();
        within("setLevel", c.set_log_level(LoggingLevel::Debug)).await.unwrap();
        let tools = within("tools", c.list_all_tools()).await.unwrap();
        for t in &tools {
            let args = match t.name.as_str() {
                "echo" => json!({"message": "m"}),
                "add" => json!({"a": 1, "b": 2}),
                "test_sampling" => json!({"prompt": "p"}),
                "test_elicitation" => json!({"message": "m"}),
                "json_schema_2020_12_tool" => json!({"email": "e"}),
                _ => json!({}),
            };
            let (tx, _rx) = mpsc::unbounded_channel();
            let options = CallOptions {
                progress: Some(tx),
                ..Default::default()
            };
            if let Err(e) = within(&t.name, c.call_tool_with(&t.name, args, options)).await {
                failures.push(format!("{version}: tools/call {} failed: {e}", t.name));
            }
        }
        for r in within("resources", c.list_all_resources()).await.unwrap() {
            within("read", c.read_resource(&r.uri)).await.unwrap();
        }
        within("templates", c.list_all_resource_templates()).await.unwrap();
        within("read template", c.read_resource("test://template/7/data"))
            .await
            .unwrap();
        let _ = within("read unknown", c.read_resource("test://nope")).await;
        within("subscribe", c.subscribe("test://watched-resource"))
            .await
            .unwrap();
        pair.server.notify_resource_updated("test://watched-resource");
        for p in within("prompts", c.list_all_prompts()).await.unwrap() {
            let args: Vec<(String, String)> = p
                .arguments
                .iter()
                .flatten()
                .map(|a| (a.name.clone(), "test://x".to_owned()))
                .collect();
            let got = within("prompt", c.get_prompt(&p.name, args)).await;
            // This prompt asks the user through elicitation, which these revisions' clients do
            // not all have: a client without the capability is told what is missing.
            match got {
                Err(Error::Rpc(e))
                    if p.name == "test_input_required_result_prompt" && version < ProtocolVersion::V2025_06_18 =>
                {
                    assert_eq!(
                        e.code,
                        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                        "{version}: {e:?}"
                    );
                }
                other => {
                    other.unwrap_or_else(|e| panic!("{version}: prompts/get {} failed: {e}", p.name));
                }
            }
        }
        within(
            "complete",
            c.complete(prompt_ref("test_prompt_with_arguments"), "arg1", "t"),
        )
        .await
        .unwrap();
        within(
            "roots",
            pair.connection.peer().request::<ListRoots>(&Default::default()),
        )
        .await
        .unwrap();
        within("final ping", c.ping()).await.unwrap();

        let v = SchemaValidator::revision(version.as_str());
        let sent = pair.server_sent();
        let received = pair.server_received();
        let report = v.check_transcript(&sent, &received);
        assert!(report.count("result tools/call") >= 16, "{version}: {:?}", report.kinds);
        for e in report.errors {
            failures.push(format!("{version}: server frame: {e}"));
        }
        for e in v.check_transcript(&received, &sent).errors {
            failures.push(format!("{version}: client frame: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The raw client end of an in-memory connection to a server, keeping a transcript of both
/// directions (for the stateless wire, which has no mcpkit client here).
struct RawWire {
    reader: <mcpkit::transport::memory::MemoryTransport as mcpkit::transport::Transport>::Reader,
    writer: <mcpkit::transport::memory::MemoryTransport as mcpkit::transport::Transport>::Writer,
    _connection: mcpkit::engine::Connection,
    sent: Vec<String>,
    received: Vec<String>,
}

impl RawWire {
    fn serve(server: &Server) -> RawWire {
        use mcpkit::transport::Transport;
        let (a, b) = mcpkit::transport::memory::pair();
        let connection = server.start(a);
        let (reader, writer) = b.split();
        RawWire {
            reader,
            writer,
            _connection: connection,
            sent: Vec::new(),
            received: Vec::new(),
        }
    }

    async fn send(&mut self, frame: &Value) {
        use mcpkit::transport::FrameWriter;
        let line = frame.to_string();
        within("write", self.writer.write_frame(line.as_bytes())).await.unwrap();
        within("flush", self.writer.flush()).await.unwrap();
        self.sent.push(line);
    }

    async fn recv(&mut self) -> Value {
        use mcpkit::transport::{Frame, FrameReader};
        match within("a frame from the server", self.reader.read_frame()).await {
            Ok(Some(Frame::Message(bytes))) => {
                let line = String::from_utf8(bytes.to_vec()).unwrap();
                let v = serde_json::from_str(&line).unwrap();
                self.received.push(line);
                v
            }
            other => panic!("no frame from the server: {other:?}"),
        }
    }

    /// Send a request and read up to its reply (notifications before it are kept in the
    /// transcript); the reply.
    async fn request(&mut self, frame: &Value) -> Value {
        self.send(frame).await;
        loop {
            let v = self.recv().await;
            if v.get("id") == frame.get("id") && v.get("method").is_none() {
                return v;
            }
        }
    }
}

/// The `_meta` every 2026-07-28 request carries: every client capability declared.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "schema-test", "version": "0"},
        "io.modelcontextprotocol/logLevel": "debug"
    })
}

/// A client's answer to one input request of an `input_required` result.
fn answer_input(request: &Value) -> Value {
    match request["method"].as_str().unwrap() {
        "sampling/createMessage" => json!({
            "role": "assistant", "content": {"type": "text", "text": SAMPLING_REPLY}, "model": "test-model"
        }),
        "roots/list" => json!({"roots": [{"uri": "file:///workspace", "name": "workspace"}]}),
        "elicitation/create" => {
            let mut content = serde_json::Map::new();
            let props = request["params"]["requestedSchema"]["properties"].as_object();
            for (name, p) in props.into_iter().flatten() {
                let v = if let Some(first) = p["enum"].get(0) {
                    first.clone()
                } else if let Some(first) = p["oneOf"].get(0) {
                    first["const"].clone()
                } else {
                    match p["type"].as_str() {
                        Some("boolean") => json!(true),
                        Some("integer") | Some("number") => json!(1),
                        Some("array") => json!([]),
                        _ => json!("text"),
                    }
                };
                content.insert(name.clone(), v);
            }
            json!({"action": "accept", "content": content})
        }
        other => panic!("unexpected input request {other}"),
    }
}

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
                let mut m = modern_meta();
                m.as_object_mut().unwrap().extend(extra.clone());
                m
            }
            _ => modern_meta(),
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
