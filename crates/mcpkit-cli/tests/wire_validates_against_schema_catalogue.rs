//! Every frame on the wire validates against the MCP 2025-11-25 JSON schema, in both directions,
//! while every method of the 2025-11-25 catalogue is exercised against the reference server
//! (`mcpkit serve`'s server) over the in-memory pair. The reference fixtures' exact outputs are
//! pinned on the way.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcpkit::client::{prompt_ref, resource_ref, CallOptions, ServerNotification};
use mcpkit::server::{PromptDef, ResourceDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::method::{CreateMessage, ListRoots, Ping};
use mcpkit::types::schema::{CreateMessageParams, GetPromptResult, LoggingLevel, PromptMessage, Root, SamplingMessage};
use mcpkit::types::{ErrorCode, ErrorObject, ProtocolVersion};
use mcpkit::{Error, RequestOptions};
use mcpkit_cli::reference;
use serde_json::{json, Value};
use tokio::sync::mpsc;

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
    assert_eq!(names, REFERENCE_TOOL_NAMES);
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
    // The reference skills' seven files are resources too (Skills extension).
    let (skill_files, uris): (Vec<&str>, Vec<&str>) = uris.into_iter().partition(|u| u.starts_with("skill://"));
    assert_eq!(skill_files.len(), 7, "{skill_files:?}");
    assert_eq!(
        uris,
        [
            "test://static-binary",
            "test://static-text",
            "test://watched-resource",
            "ui://mcpkit-reference/counter"
        ]
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
        PromptDef::new("dynamic_prompt", || async {
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
