//! Schema conformance: representative values of every schema type validate against the official
//! JSON Schema of 2025-11-25, the spec's own examples round-trip exactly, and compat-adapted
//! messages validate against the older revisions' schemas.
//!
//! The spec checkout is found at `$MCPKIT_SPEC_DIR` or `<repo>/../shared/spec`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use mcpkit_types::method::*;
use mcpkit_types::schema::*;
use mcpkit_types::{ProtocolVersion, RequestId};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

fn spec_dir() -> PathBuf {
    match std::env::var_os("MCPKIT_SPEC_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/spec")),
    }
}

fn load_schema(version: &str) -> Value {
    let path = spec_dir().join("schema").join(version).join("schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn schema(version: &str) -> &'static Value {
    static CACHE: OnceLock<std::sync::Mutex<BTreeMap<String, &'static Value>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
    cache
        .entry(version.to_owned())
        .or_insert_with(|| Box::leak(Box::new(load_schema(version))))
}

/// Validates `instance` against definition `def` of revision `version`; returns the errors.
fn errors_for(version: &str, def: &str, instance: &Value) -> Vec<String> {
    let full = schema(version);
    let (key, defs) = match full.get("$defs") {
        Some(d) => ("$defs", d),
        None => ("definitions", &full["definitions"]),
    };
    assert!(defs.get(def).is_some(), "{version} has no definition {def}");
    let wrapper = json!({
        "$schema": full["$schema"],
        "$ref": format!("#/{key}/{def}"),
        key: defs,
    });
    let validator = jsonschema::validator_for(&wrapper).unwrap();
    validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[track_caller]
fn assert_valid_in(version: &str, def: &str, value: &impl Serialize) {
    let instance = serde_json::to_value(value).unwrap();
    let errors = errors_for(version, def, &instance);
    assert!(
        errors.is_empty(),
        "{def} invalid for {version}: {errors:#?}\ninstance: {instance:#}"
    );
}

#[track_caller]
fn assert_valid(def: &str, value: &impl Serialize) {
    assert_valid_in("2025-11-25", def, value);
}

#[track_caller]
fn request<M: Method>(def: &str, params: &M::Params) {
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": M::NAME, "params": params});
    assert_valid(def, &msg);
    // And the typed params parse back to the same value.
    let back: M::Params = serde_json::from_str(&msg["params"].to_string()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), msg["params"]);
}

#[track_caller]
fn notification<N: NotificationMethod>(def: &str, params: &N::Params) {
    let msg = json!({"jsonrpc": "2.0", "method": N::NAME, "params": params});
    assert_valid(def, &msg);
}

#[track_caller]
fn result<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(def: &str, value: &T) {
    assert_valid(def, value);
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, value, "{def} did not round-trip");
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn meta() -> Meta {
    obj(json!({"vendor.example/trace": "abc", "nested": {"x": [1, 2]}}))
}

fn all_content() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("hello").with_annotations(
            Annotations::default()
                .with_audience([Role::User, Role::Assistant])
                .with_priority(0.5)
                .with_last_modified("2025-01-12T15:00:58Z"),
        ),
        ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ContentBlock::audio("UklGRg==", "audio/wav"),
        ContentBlock::resource_link(
            Resource::new("file:///project/src/main.rs", "main.rs")
                .with_title("Main")
                .with_description("Entry point")
                .with_mime_type("text/x-rust")
                .with_size(42)
                .with_icons(vec![Icon::new("https://example.com/i.png")
                    .with_mime_type("image/png")
                    .with_sizes(["48x48"])
                    .with_theme(IconTheme::Dark)]),
        ),
        ContentBlock::resource(ResourceContents::text("file:///a.txt", Some("text/plain"), "abc")),
        ContentBlock::resource(ResourceContents::blob("file:///a.bin", None, "AAEC")),
    ]
}

fn tool() -> Tool {
    Tool::new(
        "get_weather",
        obj(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"location": {"type": "string", "x-custom": {"keep": true}}},
            "required": ["location"],
            "additionalProperties": false,
            "$defs": {"unit": {"enum": ["c", "f"]}}
        })),
    )
    .with_title("Weather")
    .with_description("Get the weather")
    .with_output_schema(obj(json!({"type": "object", "properties": {"t": {"type": "number"}}})))
    .with_annotations(
        ToolAnnotations::default()
            .with_title("Weather")
            .read_only(true)
            .open_world(true),
    )
    .with_icons(vec![Icon::new("data:image/png;base64,AA==")])
    .with_execution(ToolExecution {
        task_support: Some(TaskSupport::Optional),
    })
    .with_meta(meta())
}

fn task() -> Task {
    let mut t = Task::new(
        "t-1",
        TaskStatus::Working,
        "2025-11-25T10:00:00Z",
        "2025-11-25T10:00:01Z",
        Some(60_000),
    );
    t.status_message = Some("running".into());
    t.poll_interval = Some(500);
    t
}

fn elicitation_schema() -> ElicitationSchema {
    ElicitationSchema::new()
        .with_required_property(
            "name",
            json!({"type": "string", "title": "Name", "minLength": 1, "default": "x"}),
        )
        .with_property("email", json!({"type": "string", "format": "email"}))
        .with_property(
            "age",
            json!({"type": "integer", "minimum": 0, "maximum": 150, "default": 30}),
        )
        .with_property("ok", json!({"type": "boolean", "default": true}))
        .with_property(
            "color",
            json!({"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}),
        )
        .with_property(
            "size",
            json!({"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}),
        )
}

// ---------------------------------------------------------------------------------------------
// Every type validates against its 2025-11-25 definition.

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

// ---------------------------------------------------------------------------------------------
// The spec's own examples round-trip exactly.

/// Numbers compared by value (`1` and `1.0` are the same JSON number).
fn normalize(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect()),
        other => other.clone(),
    }
}

fn rt<T: Serialize + DeserializeOwned>(v: &Value) -> Value {
    // Through text, as on the wire (raw-valued fields need a text deserializer).
    let typed: T = serde_json::from_str(&v.to_string()).unwrap_or_else(|e| panic!("parse {v:#}: {e}"));
    serde_json::to_value(&typed).unwrap()
}

fn rt_params(method: &str, v: &Value) -> Option<Value> {
    Some(match method {
        "initialize" => rt::<<Initialize as Method>::Params>(v),
        "ping" => rt::<<Ping as Method>::Params>(v),
        "tools/list" => rt::<<ListTools as Method>::Params>(v),
        "tools/call" => rt::<<CallTool as Method>::Params>(v),
        "resources/list" => rt::<<ListResources as Method>::Params>(v),
        "resources/templates/list" => rt::<<ListResourceTemplates as Method>::Params>(v),
        "resources/read" => rt::<<ReadResource as Method>::Params>(v),
        "resources/subscribe" => rt::<<Subscribe as Method>::Params>(v),
        "prompts/list" => rt::<<ListPrompts as Method>::Params>(v),
        "prompts/get" => rt::<<GetPrompt as Method>::Params>(v),
        "completion/complete" => rt::<<Complete as Method>::Params>(v),
        "sampling/createMessage" => rt::<<CreateMessage as Method>::Params>(v),
        "elicitation/create" => rt::<<Elicit as Method>::Params>(v),
        "notifications/initialized" => rt::<<Initialized as NotificationMethod>::Params>(v),
        "notifications/tools/list_changed" => rt::<<ToolListChanged as NotificationMethod>::Params>(v),
        "notifications/prompts/list_changed" => rt::<<PromptListChanged as NotificationMethod>::Params>(v),
        "notifications/resources/list_changed" => rt::<<ResourceListChanged as NotificationMethod>::Params>(v),
        "notifications/resources/updated" => rt::<<ResourceUpdated as NotificationMethod>::Params>(v),
        "notifications/elicitation/complete" => rt::<<ElicitationComplete as NotificationMethod>::Params>(v),
        _ => return None,
    })
}

fn rt_result(method: &str, v: &Value) -> Option<Value> {
    Some(match method {
        "initialize" => rt::<<Initialize as Method>::Result>(v),
        "tools/list" => rt::<<ListTools as Method>::Result>(v),
        "tools/call" => rt::<<CallTool as Method>::Result>(v),
        "resources/list" => rt::<<ListResources as Method>::Result>(v),
        "resources/templates/list" => rt::<<ListResourceTemplates as Method>::Result>(v),
        "resources/read" => rt::<<ReadResource as Method>::Result>(v),
        "prompts/list" => rt::<<ListPrompts as Method>::Result>(v),
        "prompts/get" => rt::<<GetPrompt as Method>::Result>(v),
        "completion/complete" => rt::<<Complete as Method>::Result>(v),
        "sampling/createMessage" => rt::<<CreateMessage as Method>::Result>(v),
        "elicitation/create" => rt::<<Elicit as Method>::Result>(v),
        _ => return None,
    })
}

#[test]
fn spec_examples_round_trip() {
    let docs = spec_dir().join("docs/2025-11-25");
    let files = [
        "basic/lifecycle.md",
        "server/tools.md",
        "server/prompts.md",
        "server/resources.md",
        "server/utilities/completion.md",
        "client/sampling.md",
        "client/elicitation.md",
    ];
    let mut checked = 0;
    for file in files {
        let text = std::fs::read_to_string(docs.join(file)).unwrap();
        let mut last_method: Option<String> = None;
        for block in text.split("```json\n").skip(1).filter_map(|b| b.split("```").next()) {
            let Ok(v) = serde_json::from_str::<Value>(block) else {
                continue;
            };
            if let Some(method) = v.get("method").and_then(Value::as_str) {
                last_method = Some(method.to_owned());
                let params = v.get("params").cloned().unwrap_or_else(|| json!({}));
                if let Some(back) = rt_params(method, &params) {
                    let mut expected = params.clone();
                    // Form-mode elicitation is always sent with an explicit `mode`.
                    if method == "elicitation/create" && expected.get("mode").is_none() {
                        expected["mode"] = json!("form");
                    }
                    assert_eq!(normalize(&back), normalize(&expected), "{file}: {method} params");
                    checked += 1;
                }
            } else if let (Some(res), Some(method)) = (v.get("result"), last_method.as_deref()) {
                if let Some(back) = rt_result(method, res) {
                    assert_eq!(normalize(&back), normalize(res), "{file}: {method} result");
                    checked += 1;
                }
            } else if v.get("type").is_some() && v.get("text").is_some() || v.get("data").is_some() {
                let back = rt::<ContentBlock>(&v);
                assert_eq!(normalize(&back), normalize(&v), "{file}: content block");
                checked += 1;
            }
        }
    }
    eprintln!("{checked} spec examples round-tripped");
    assert!(checked >= 40, "only {checked} examples checked");
}

// ---------------------------------------------------------------------------------------------
// Serde details.

#[test]
fn open_objects_keep_unknown_members() {
    let caps: ServerCapabilities = serde_json::from_value(json!({
        "tools": {"listChanged": true, "x-future": 1},
        "logging": {},
        "extensions": {"io.example/a": {"b": 2}}
    }))
    .unwrap();
    assert_eq!(caps.tools.as_ref().unwrap().extra["x-future"], json!(1));
    assert_eq!(
        serde_json::to_value(&caps).unwrap(),
        json!({"tools": {"listChanged": true, "x-future": 1}, "logging": {}, "extensions": {"io.example/a": {"b": 2}}})
    );
    assert_eq!(serde_json::to_string(&ClientCapabilities::default()).unwrap(), "{}");
    assert_eq!(serde_json::to_string(&RootsCapability::default()).unwrap(), "{}");
    let t = tool();
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(
        v["inputSchema"]["properties"]["location"]["x-custom"],
        json!({"keep": true})
    );
    assert_eq!(v["inputSchema"]["$defs"], json!({"unit": {"enum": ["c", "f"]}}));
    let req_meta: RequestMeta =
        serde_json::from_value(json!({"progressToken": 1, "io.modelcontextprotocol/related-task": {"taskId": "t"}}))
            .unwrap();
    assert_eq!(req_meta.progress_token, Some(ProgressToken::Number(1)));
    assert!(req_meta.extra.contains_key("io.modelcontextprotocol/related-task"));
}

#[test]
fn request_meta_reads_like_the_schema_says() {
    let text = r#"{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","x":{"y":[1]}}"#;
    let meta: RequestMeta = serde_json::from_str(text).unwrap();
    assert_eq!(meta.progress_token, Some(ProgressToken::String("p".into())));
    assert_eq!(meta.extra.len(), 2);
    assert_eq!(serde_json::to_string(&meta).unwrap(), text);
    let meta: RequestMeta = serde_json::from_str(r#"{"progressToken":null}"#).unwrap();
    assert_eq!(meta, RequestMeta::default());
    let dup = serde_json::from_str::<RequestMeta>(r#"{"progressToken":1,"progressToken":2}"#).unwrap_err();
    assert!(dup.to_string().contains("duplicate field `progressToken`"), "{dup}");
    assert!(serde_json::from_str::<RequestMeta>(r#"{"progressToken":1.5}"#).is_err());
    assert!(serde_json::from_str::<RequestMeta>("[1]").is_err());
}

#[test]
fn hand_written_unions() {
    assert_eq!(
        serde_json::from_str::<ProgressToken>("\"1\"").unwrap(),
        ProgressToken::String("1".into())
    );
    assert_eq!(
        serde_json::from_str::<ProgressToken>("1").unwrap(),
        ProgressToken::Number(1)
    );
    assert!(serde_json::from_str::<ProgressToken>("1.5").is_err());
    assert!(serde_json::from_str::<ProgressToken>("null").is_err());

    assert!(matches!(
        serde_json::from_value::<ResourceContents>(json!({"uri": "u", "blob": "AA=="})).unwrap(),
        ResourceContents::Blob(_)
    ));
    assert!(matches!(
        serde_json::from_value::<ResourceContents>(json!({"uri": "u", "text": ""})).unwrap(),
        ResourceContents::Text(_)
    ));
    assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "u"})).is_err());
    assert!(serde_json::from_value::<ResourceContents>(json!({"uri": "u", "text": "", "blob": ""})).is_err());

    let single: SamplingMessage =
        serde_json::from_str(r#"{"role":"user","content":{"type":"text","text":"hi"}}"#).unwrap();
    assert!(matches!(single.content, SamplingContentList::Single(_)));
    let many: SamplingMessage =
        serde_json::from_str(r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#).unwrap();
    assert!(matches!(many.content, SamplingContentList::Multiple(ref v) if v.len() == 1));
    assert_eq!(
        serde_json::to_value(&many).unwrap()["content"],
        json!([{"type": "text", "text": "hi"}])
    );
    assert!(serde_json::from_str::<SamplingMessage>(r#"{"role":"user","content":"hi"}"#).is_err());

    let no_mode: ElicitParams =
        serde_json::from_value(json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}))
            .unwrap();
    assert!(matches!(no_mode, ElicitParams::Form(_)));
    let url: ElicitParams =
        serde_json::from_value(json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"}))
            .unwrap();
    assert!(matches!(url, ElicitParams::Url(_)));
    assert!(serde_json::from_value::<ElicitParams>(json!({"mode": "telepathy", "message": "m"})).is_err());

    let r: CompletionReference = serde_json::from_value(json!({"type": "ref/resource", "uri": "a://{b}"})).unwrap();
    assert_eq!(r, CompletionReference::resource("a://{b}"));
    assert!(serde_json::from_value::<ContentBlock>(json!({"type": "hologram"})).is_err());
}

#[test]
fn call_tool_arguments_stay_raw() {
    let text = r#"{"name":"t","arguments":{"b":1,"a":[true, null]}}"#;
    let p: CallToolParams = serde_json::from_str(text).unwrap();
    assert_eq!(p.arguments.as_ref().unwrap().get(), r#"{"b":1,"a":[true, null]}"#);
    #[derive(serde::Deserialize)]
    struct Args {
        b: u32,
    }
    assert_eq!(p.arguments_as::<Args>().unwrap().b, 1);
    let none = CallToolParams::new("t");
    assert_eq!(none.arguments_as::<JsonObject>().unwrap(), JsonObject::new());
    assert_eq!(p.clone(), p);
}

#[test]
fn optional_params_parse_from_absent() {
    let p: PaginatedParams = parse_params(None).unwrap();
    assert_eq!(p, PaginatedParams::default());
    let p: <Ping as Method>::Params = parse_params(None).unwrap();
    assert_eq!(p, PingParams::default());
    let p: NotificationParams = parse_params(None).unwrap();
    assert_eq!(p, NotificationParams::default());
    let raw = serde_json::value::to_raw_value(&json!({"cursor": "c"})).unwrap();
    let p: PaginatedParams = parse_params(Some(&raw)).unwrap();
    assert_eq!(p.cursor.as_deref(), Some("c"));
    assert_eq!(serde_json::to_string(&PaginatedParams::default()).unwrap(), "{}");
}

#[test]
fn logging_levels_are_ordered() {
    let levels = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    let parsed: Vec<LoggingLevel> = levels
        .iter()
        .map(|l| serde_json::from_value(json!(l)).unwrap())
        .collect();
    for w in parsed.windows(2) {
        assert!(w[0] < w[1]);
    }
    assert!(LoggingLevel::Warning >= LoggingLevel::Info);
}

#[test]
fn method_catalogue_is_complete() {
    let schema = schema("2025-11-25");
    let names = |def: &str| -> Vec<String> {
        schema["$defs"][def]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let name = r["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
                schema["$defs"][name]["properties"]["method"]["const"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let sorted = |v: &[&str]| {
        let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    let check = |def: &str, ours: &[&str]| {
        let mut theirs = names(def);
        theirs.sort();
        assert_eq!(sorted(ours), theirs, "{def}");
    };
    check("ClientRequest", ALL_CLIENT_REQUESTS);
    check("ServerRequest", ALL_SERVER_REQUESTS);
    check("ClientNotification", ALL_CLIENT_NOTIFICATIONS);
    check("ServerNotification", ALL_SERVER_NOTIFICATIONS);
}

// ---------------------------------------------------------------------------------------------
// Compat: adapted messages validate against the older revisions' schemas.

const OLDER: [(ProtocolVersion, &str); 3] = [
    (ProtocolVersion::V2024_11_05, "2024-11-05"),
    (ProtocolVersion::V2025_03_26, "2025-03-26"),
    (ProtocolVersion::V2025_06_18, "2025-06-18"),
];

#[test]
fn unadapted_messages_are_invalid_for_old_revisions() {
    // The compat tests below have teeth: these fail before adaptation.
    let r = CallToolResult::success(vec![ContentBlock::audio("AA==", "audio/wav")]);
    assert!(!errors_for("2024-11-05", "CallToolResult", &serde_json::to_value(&r).unwrap()).is_empty());
    let link = CallToolResult::success(vec![ContentBlock::resource_link(Resource::new("file:///x", "x"))]);
    assert!(!errors_for("2025-03-26", "CallToolResult", &serde_json::to_value(&link).unwrap()).is_empty());
}

#[test]
fn compat_results_validate_against_older_schemas() {
    for (v, name) in OLDER {
        let mut call = CallToolResult::success(all_content());
        call.structured_content = Some(json!({"t": 1}));
        call.result_type = Some("complete".into());
        let adapted = call.for_version(v);
        assert_valid_in(name, "CallToolResult", &adapted);
        assert!(adapted.result_type.is_none());
        if v < ProtocolVersion::V2025_06_18 {
            assert!(adapted.structured_content.is_none());
        }
        let structured_only = CallToolResult {
            structured_content: Some(json!([1, 2])),
            ..Default::default()
        };
        let adapted = structured_only.for_version(v);
        assert_valid_in(name, "CallToolResult", &adapted);
        assert_eq!(adapted.content[0].as_text(), Some("[1,2]"));

        let messages = all_content()
            .into_iter()
            .map(|c| PromptMessage::new(Role::User, c))
            .collect();
        assert_valid_in(name, "GetPromptResult", &GetPromptResult::new(messages).for_version(v));

        let mut list = ListToolsResult::new(vec![tool()]);
        list.ttl_ms = Some(1000);
        list.cache_scope = Some(CacheScope::Public);
        let list = list.for_version(v);
        assert_valid_in(name, "ListToolsResult", &list);
        assert!(list.ttl_ms.is_none() && list.tools[0].execution.is_none());
        assert_eq!(list.tools[0].input_schema, tool().input_schema);

        assert_valid_in(
            name,
            "ReadResourceResult",
            &ReadResourceResult::new(vec![
                ResourceContents::text("u:", None, "t"),
                ResourceContents::blob("u:", None, "AA=="),
            ])
            .for_version(v),
        );
        assert_valid_in(
            name,
            "ListResourcesResult",
            &ListResourcesResult::new(vec![Resource::new("u:", "n")]).for_version(v),
        );
        assert_valid_in(
            name,
            "ListPromptsResult",
            &ListPromptsResult::new(vec![Prompt::new("p")]).for_version(v),
        );
        assert_valid_in(
            name,
            "CompleteResult",
            &CompleteResult::new(vec!["a".into()]).for_version(v),
        );
        assert_valid_in(
            name,
            "InitializeResult",
            &InitializeResult::new(
                name,
                ServerCapabilities {
                    tools: Some(ToolsCapability::default()),
                    ..Default::default()
                },
                Implementation::new("s", "1")
                    .with_title("S")
                    .with_icons(vec![Icon::new("https://x")]),
            ),
        );
    }
}

#[test]
fn compat_sampling_validates_against_older_schemas() {
    let tool_use = SamplingContent::ToolUse(ToolUseContent {
        id: "c1".into(),
        name: "w".into(),
        input: obj(json!({"q": 1})),
        meta: None,
    });
    let tool_result = SamplingContent::ToolResult(ToolResultContent {
        tool_use_id: "c1".into(),
        content: vec![ContentBlock::text("sunny")],
        ..Default::default()
    });
    let audio = SamplingContent::Audio(AudioContent {
        data: "AA==".into(),
        mime_type: "audio/wav".into(),
        ..Default::default()
    });
    for (v, name) in OLDER {
        let result = CreateMessageResult {
            role: Role::Assistant,
            content: vec![SamplingContent::text("checking"), tool_use.clone()].into(),
            model: "m".into(),
            stop_reason: Some("toolUse".into()),
            meta: None,
        };
        assert_valid_in(name, "CreateMessageResult", &result.for_version(v));
        let audio_result = CreateMessageResult {
            content: audio.clone().into(),
            ..CreateMessageResult::text("m", "")
        };
        assert_valid_in(name, "CreateMessageResult", &audio_result.for_version(v));

        let params = CreateMessageParams::new(
            vec![
                SamplingMessage::user_text("hi"),
                SamplingMessage {
                    role: Role::Assistant,
                    content: vec![tool_use.clone()].into(),
                    meta: None,
                },
                SamplingMessage {
                    role: Role::User,
                    content: vec![tool_result.clone(), audio.clone()].into(),
                    meta: None,
                },
            ],
            10,
        )
        .with_tools(vec![tool()], None)
        .for_version(v);
        assert!(params.tools.is_none());
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": params});
        assert_valid_in(name, "CreateMessageRequest", &msg);
    }
}

#[test]
fn compat_elicitation() {
    let v = ProtocolVersion::V2025_06_18;
    let form = ElicitParams::form("Who?", elicitation_schema()).for_version(v).unwrap();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": form});
    assert_valid_in("2025-06-18", "ElicitRequest", &msg);
    let ElicitParams::Form(f) = &form else {
        panic!("form expected")
    };
    assert_eq!(
        f.requested_schema.properties().unwrap()["size"]["enumNames"],
        json!(["Small", "Large"])
    );
    // Not representable before 2025-11-25 / 2025-06-18.
    assert!(ElicitParams::url("m", "https://x", "1").for_version(v).is_none());
    assert!(ElicitParams::form("m", ElicitationSchema::new())
        .for_version(ProtocolVersion::V2025_03_26)
        .is_none());
    let multi = ElicitationSchema::new().with_property(
        "tags",
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
    );
    assert!(ElicitParams::form("m", multi).for_version(v).is_none());
    // Unchanged for 2025-11-25.
    let same = ElicitParams::form("Who?", elicitation_schema());
    assert_eq!(same.clone().for_version(ProtocolVersion::V2025_11_25), Some(same));
}
