//! The harness of the schema tests: validation of any value against a definition of any
//! revision's official JSON Schema (through mcpkit-test-support's validator; the spec checkout
//! is found at `$MCPKIT_SPEC_DIR` or `<repo>/../shared/spec`), typed request, notification and
//! result checks, and representative values of the richer types.
#![allow(dead_code, unused_imports, unreachable_pub)]

pub use mcpkit_test_support::schema::{spec_dir, SchemaValidator};
use mcpkit_types::method::*;
use mcpkit_types::schema::*;
use mcpkit_types::{ProtocolVersion, RequestId};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// Validates `instance` against definition `def` of revision `version`; returns the errors.
pub fn errors_for(version: &str, def: &str, instance: &Value) -> Vec<String> {
    SchemaValidator::revision(version).errors(def, instance)
}

/// The schema file of revision `version`, as JSON.
pub fn schema(version: &str) -> &'static Value {
    SchemaValidator::revision(version).document()
}

#[track_caller]
pub fn assert_valid_in(version: &str, def: &str, value: &impl Serialize) {
    let instance = serde_json::to_value(value).unwrap();
    let errors = errors_for(version, def, &instance);
    assert!(
        errors.is_empty(),
        "{def} invalid for {version}: {errors:#?}\ninstance: {instance:#}"
    );
}

#[track_caller]
pub fn assert_valid(def: &str, value: &impl Serialize) {
    assert_valid_in("2025-11-25", def, value);
}

#[track_caller]
pub fn request<M: Method>(def: &str, params: &M::Params) {
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": M::NAME, "params": params});
    assert_valid(def, &msg);
    // And the typed params parse back to the same value.
    let back: M::Params = serde_json::from_str(&msg["params"].to_string()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), msg["params"]);
}

#[track_caller]
pub fn notification<N: NotificationMethod>(def: &str, params: &N::Params) {
    let msg = json!({"jsonrpc": "2.0", "method": N::NAME, "params": params});
    assert_valid(def, &msg);
}

#[track_caller]
pub fn result<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(def: &str, value: &T) {
    assert_valid(def, value);
    let text = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&text).unwrap();
    assert_eq!(&back, value, "{def} did not round-trip");
}

pub fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

pub fn meta() -> Meta {
    obj(json!({"vendor.example/trace": "abc", "nested": {"x": [1, 2]}}))
}

pub fn all_content() -> Vec<ContentBlock> {
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

pub fn tool() -> Tool {
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

pub fn task() -> Task {
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

pub fn elicitation_schema() -> ElicitationSchema {
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
