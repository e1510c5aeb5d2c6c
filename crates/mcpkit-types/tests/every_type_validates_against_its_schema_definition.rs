//! Representative values of every schema type validate against their definition in the official
//! JSON Schema of 2025-11-25, and typed params and results parse back to the same value.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use mcpkit_types::method::*;
use mcpkit_types::schema::*;
use mcpkit_types::RequestId;
use serde_json::{json, Value};

#[test]
fn content_types_validate() {
    for block in all_content() {
        assert_valid("ContentBlock", &block);
        let def = match &block {
            ContentBlock::Text(_) => "TextContent",
            ContentBlock::Image(_) => "ImageContent",
            ContentBlock::Audio(_) => "AudioContent",
            ContentBlock::ResourceLink(_) => "ResourceLink",
            ContentBlock::Resource(_) => "EmbeddedResource",
        };
        assert_valid(def, &block);
        let back: ContentBlock = serde_json::from_value(serde_json::to_value(&block).unwrap()).unwrap();
        assert_eq!(back, block);
    }
    let t = ResourceContents::text("u:", Some("text/plain"), "x");
    assert_valid("TextResourceContents", &t);
    assert_valid("ResourceContents", &t);
    assert_valid("BlobResourceContents", &ResourceContents::blob("u:", None, "AA=="));
    assert_valid("Annotations", &Annotations::default().with_priority(1.0));
    assert_valid("Icon", &Icon::new("https://x/y.svg").with_theme(IconTheme::Light));
    assert_valid("Role", &Role::Assistant);
}

#[test]
fn lifecycle_validates() {
    let mut caps = ClientCapabilities {
        roots: Some(RootsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        sampling: Some(SamplingCapability {
            context: Some(JsonObject::new()),
            tools: Some(JsonObject::new()),
            ..Default::default()
        }),
        elicitation: Some(ElicitationCapability {
            form: Some(JsonObject::new()),
            url: Some(JsonObject::new()),
            ..Default::default()
        }),
        experimental: Some(obj(json!({"x": {"y": 1}}))),
        tasks: Some(TasksCapability {
            list: Some(JsonObject::new()),
            cancel: Some(JsonObject::new()),
            requests: Some(obj(
                json!({"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}),
            )),
            ..Default::default()
        }),
        ..Default::default()
    };
    caps.extra.insert("extensions".into(), json!({"io.example/ext": {}}));
    let info = Implementation::new("client", "1.0")
        .with_title("Client")
        .with_description("A client")
        .with_icons(vec![Icon::new("https://x/i.png")])
        .with_website_url("https://example.com");
    assert_valid("Implementation", &info);
    let params = InitializeParams::new("2025-11-25", caps.clone(), info.clone());
    request::<Initialize>("InitializeRequest", &params);
    assert_valid("ClientCapabilities", &caps);

    let server_caps = ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(false),
            ..Default::default()
        }),
        prompts: Some(PromptsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        logging: Some(JsonObject::new()),
        completions: Some(JsonObject::new()),
        experimental: Some(JsonObject::new()),
        tasks: Some(TasksCapability {
            requests: Some(obj(json!({"tools": {"call": {}}}))),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_valid("ServerCapabilities", &server_caps);
    let res = InitializeResult::new("2025-11-25", server_caps, info).with_instructions("be nice");
    result("InitializeResult", &res);
    notification::<Initialized>("InitializedNotification", &NotificationParams::default());
    request::<Ping>("PingRequest", &PingParams::default());
    request::<Ping>(
        "PingRequest",
        &PingParams {
            meta: Some(RequestMeta::with_progress_token(7)),
        },
    );
    result("EmptyResult", &EmptyResult::default());
}

#[test]
fn tools_validate() {
    let t = tool();
    assert_valid("Tool", &t);
    assert_valid("ToolAnnotations", t.annotations.as_ref().unwrap());
    assert_valid("ToolExecution", t.execution.as_ref().unwrap());
    request::<ListTools>("ListToolsRequest", &PaginatedParams::default());
    request::<ListTools>("ListToolsRequest", &PaginatedParams::with_cursor("c1"));
    result(
        "ListToolsResult",
        &ListToolsResult::new(vec![t, Tool::without_args("noop")]).with_next_cursor("c2"),
    );

    let mut meta = RequestMeta::with_progress_token("p-1");
    meta.extra
        .insert("io.modelcontextprotocol/related-task".into(), json!({"taskId": "t-1"}));
    let params = CallToolParams::new("get_weather")
        .with_arguments(&json!({"location": "NYC", "n": [1, 2.5]}))
        .unwrap()
        .with_meta(meta);
    request::<CallTool>("CallToolRequest", &params);
    let mut with_task = CallToolParams::new("slow");
    with_task.task = Some(TaskMetadata { ttl: Some(1000) });
    request::<CallTool>("CallToolRequest", &with_task);

    result("CallToolResult", &CallToolResult::text("ok"));
    result("CallToolResult", &CallToolResult::error_text("boom"));
    result("CallToolResult", &CallToolResult::structured(json!({"t": 21.5})));
    result(
        "CallToolResult",
        &CallToolResult::success(all_content()).with_meta(meta_obj()),
    );
    notification::<ToolListChanged>("ToolListChangedNotification", &NotificationParams::default());
}

fn meta_obj() -> Meta {
    meta()
}

#[test]
fn resources_validate() {
    let r = Resource::new("file:///x", "x").with_annotations(Annotations::default().with_priority(0.1));
    assert_valid("Resource", &r);
    let tpl = ResourceTemplate::new("file:///{path}", "files")
        .with_title("Files")
        .with_mime_type("text/plain");
    assert_valid("ResourceTemplate", &tpl);
    request::<ListResources>("ListResourcesRequest", &PaginatedParams::default());
    result("ListResourcesResult", &ListResourcesResult::new(vec![r]));
    request::<ListResourceTemplates>("ListResourceTemplatesRequest", &PaginatedParams::default());
    result(
        "ListResourceTemplatesResult",
        &ListResourceTemplatesResult::new(vec![tpl]),
    );
    request::<ReadResource>("ReadResourceRequest", &ReadResourceParams::new("file:///x"));
    result(
        "ReadResourceResult",
        &ReadResourceResult::new(vec![
            ResourceContents::text("file:///x", Some("text/plain"), "hi"),
            ResourceContents::blob("file:///y", Some("image/png"), "AA=="),
        ]),
    );
    request::<Subscribe>(
        "SubscribeRequest",
        &SubscribeParams {
            uri: "file:///x".into(),
            meta: None,
        },
    );
    request::<Unsubscribe>(
        "UnsubscribeRequest",
        &UnsubscribeParams {
            uri: "file:///x".into(),
            meta: None,
        },
    );
    notification::<ResourceUpdated>(
        "ResourceUpdatedNotification",
        &ResourceUpdatedParams {
            uri: "file:///x".into(),
            meta: Some(meta()),
        },
    );
    notification::<ResourceListChanged>("ResourceListChangedNotification", &NotificationParams::default());
}

#[test]
fn prompts_validate() {
    let p = Prompt::new("review")
        .with_title("Review")
        .with_description("Review code")
        .with_argument(PromptArgument::new("code").with_description("The code").required(true))
        .with_icons(vec![Icon::new("https://x/p.png")]);
    assert_valid("Prompt", &p);
    assert_valid("PromptArgument", &PromptArgument::new("a"));
    request::<ListPrompts>("ListPromptsRequest", &PaginatedParams::default());
    result("ListPromptsResult", &ListPromptsResult::new(vec![p]));
    request::<GetPrompt>(
        "GetPromptRequest",
        &GetPromptParams::new("review").with_argument("code", "fn main() {}"),
    );
    let messages = all_content()
        .into_iter()
        .map(|c| PromptMessage::new(Role::User, c))
        .chain([PromptMessage::assistant_text("sure")])
        .collect();
    result("GetPromptResult", &GetPromptResult::new(messages).with_description("d"));
    notification::<PromptListChanged>("PromptListChangedNotification", &NotificationParams::default());
}

#[test]
fn completion_logging_notifications_validate() {
    let mut p = CompleteParams::new(CompletionReference::prompt("review"), "language", "py");
    p.context = Some(CompletionContext {
        arguments: Some(BTreeMap::from([("a".into(), "b".into())])),
    });
    request::<Complete>("CompleteRequest", &p);
    request::<Complete>(
        "CompleteRequest",
        &CompleteParams::new(CompletionReference::resource("file:///{p}"), "p", ""),
    );
    let mut r = CompleteResult::new(vec!["python".into(), "pytorch".into()]);
    r.completion.total = Some(10);
    r.completion.has_more = Some(true);
    result("CompleteResult", &r);

    for level in [LoggingLevel::Debug, LoggingLevel::Emergency] {
        assert_valid("LoggingLevel", &level);
    }
    request::<SetLevel>(
        "SetLevelRequest",
        &SetLevelParams {
            level: LoggingLevel::Warning,
            meta: None,
        },
    );
    notification::<LoggingMessage>(
        "LoggingMessageNotification",
        &LoggingMessageParams::new(LoggingLevel::Error, json!({"error": "x"})).with_logger("db"),
    );
    notification::<Progress>(
        "ProgressNotification",
        &ProgressParams::new(ProgressToken::from("abc"), 50.0)
            .with_total(100.0)
            .with_message("half"),
    );
    notification::<Progress>(
        "ProgressNotification",
        &ProgressParams::new(ProgressToken::from(3), 1.0),
    );
    notification::<Cancelled>(
        "CancelledNotification",
        &CancelledParams::new(RequestId::from("r1")).with_reason("user"),
    );
    notification::<Cancelled>("CancelledNotification", &CancelledParams::new(RequestId::from(5)));
}

#[test]
fn roots_sampling_validate() {
    request::<ListRoots>("ListRootsRequest", &RequestParams::default());
    let roots = ListRootsResult::new(vec![
        Root::new("file:///home/u/p").with_name("p"),
        Root::new("file:///tmp"),
    ]);
    assert_valid("Root", &roots.roots[0]);
    result("ListRootsResult", &roots);
    notification::<RootsListChanged>("RootsListChangedNotification", &NotificationParams::default());

    let tool_use = SamplingContent::ToolUse(ToolUseContent {
        id: "call_1".into(),
        name: "get_weather".into(),
        input: obj(json!({"location": "Paris"})),
        meta: None,
    });
    let tool_result = SamplingContent::ToolResult(ToolResultContent {
        tool_use_id: "call_1".into(),
        content: vec![ContentBlock::text("18C")],
        structured_content: Some(json!({"t": 18})),
        is_error: Some(false),
        meta: None,
    });
    assert_valid("ToolUseContent", &tool_use);
    assert_valid("ToolResultContent", &tool_result);
    let mut params = CreateMessageParams::new(
        vec![
            SamplingMessage::user_text("weather?"),
            SamplingMessage {
                role: Role::Assistant,
                content: vec![tool_use.clone()].into(),
                meta: None,
            },
            SamplingMessage {
                role: Role::User,
                content: vec![tool_result].into(),
                meta: Some(meta()),
            },
            SamplingMessage::new(
                Role::User,
                SamplingContent::Audio(AudioContent {
                    data: "AA==".into(),
                    mime_type: "audio/wav".into(),
                    annotations: None,
                    meta: None,
                }),
            ),
        ],
        100,
    )
    .with_system_prompt("be brief")
    .with_model_preferences(ModelPreferences {
        hints: Some(vec![ModelHint::new("claude")]),
        cost_priority: Some(0.3),
        speed_priority: Some(0.8),
        intelligence_priority: Some(0.5),
    })
    .with_tools(
        vec![tool()],
        Some(ToolChoice {
            mode: Some(ToolChoiceMode::Auto),
        }),
    );
    params.include_context = Some(IncludeContext::ThisServer);
    params.temperature = Some(0.7);
    params.stop_sequences = Some(vec!["\n\n".into()]);
    params.metadata = Some(obj(json!({"provider": {"x": 1}})));
    for m in &params.messages {
        assert_valid("SamplingMessage", m);
    }
    request::<CreateMessage>("CreateMessageRequest", &params);
    result("CreateMessageResult", &CreateMessageResult::text("claude-x", "hello"));
    let multi = CreateMessageResult {
        role: Role::Assistant,
        content: vec![SamplingContent::text("let me check"), tool_use].into(),
        model: "m".into(),
        stop_reason: Some(CreateMessageResult::TOOL_USE.into()),
        meta: None,
    };
    result("CreateMessageResult", &multi);
    assert_valid(
        "ToolChoice",
        &ToolChoice {
            mode: Some(ToolChoiceMode::Required),
        },
    );
    assert_valid("ModelPreferences", &ModelPreferences::default());
}

#[test]
fn elicitation_validates() {
    let form = ElicitParams::form("Who are you?", elicitation_schema());
    assert_valid("ElicitRequestFormParams", &form);
    request::<Elicit>("ElicitRequest", &form);
    let url = ElicitParams::url("Authorize", "https://example.com/auth?x=1", "e-1");
    assert_valid("ElicitRequestURLParams", &url);
    request::<Elicit>("ElicitRequest", &url);
    result(
        "ElicitResult",
        &ElicitResult::accept(obj(json!({"name": "a", "age": 3, "ok": true, "tags": ["x"]}))),
    );
    result("ElicitResult", &ElicitResult::decline());
    result("ElicitResult", &ElicitResult::cancel());
    notification::<ElicitationComplete>(
        "ElicitationCompleteNotification",
        &ElicitationCompleteParams {
            elicitation_id: "e-1".into(),
            meta: None,
        },
    );
}

#[test]
fn tasks_validate() {
    let t = task();
    assert_valid("Task", &t);
    let unlimited = Task::new("t-2", TaskStatus::InputRequired, "a", "b", None);
    assert_valid("Task", &unlimited);
    assert_eq!(serde_json::to_value(&unlimited).unwrap()["ttl"], Value::Null);
    for s in [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ] {
        assert_valid("TaskStatus", &s);
    }
    assert_valid("TaskMetadata", &TaskMetadata { ttl: Some(5) });
    assert_valid("RelatedTaskMetadata", &RelatedTaskMetadata { task_id: "t".into() });
    result(
        "CreateTaskResult",
        &CreateTaskResult {
            task: t.clone(),
            meta: None,
        },
    );
    request::<GetTask>("GetTaskRequest", &TaskIdParams::new("t-1"));
    result(
        "GetTaskResult",
        &TaskResult {
            task: t.clone(),
            meta: Some(meta()),
        },
    );
    request::<GetTaskPayload>("GetTaskPayloadRequest", &TaskIdParams::new("t-1"));
    let payload: GetTaskPayloadResult = obj(serde_json::to_value(CallToolResult::text("done")).unwrap());
    assert_valid("GetTaskPayloadResult", &payload);
    request::<ListTasks>("ListTasksRequest", &PaginatedParams::default());
    result(
        "ListTasksResult",
        &ListTasksResult {
            tasks: vec![t.clone(), unlimited],
            next_cursor: None,
            meta: None,
        },
    );
    request::<CancelTask>("CancelTaskRequest", &TaskIdParams::new("t-1"));
    result(
        "CancelTaskResult",
        &TaskResult {
            task: t.clone(),
            meta: None,
        },
    );
    notification::<TaskStatusNotification>("TaskStatusNotification", &TaskResult { task: t, meta: None });
}
