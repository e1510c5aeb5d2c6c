//! Tools (spec: `server/tools`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::common::{CacheScope, Cursor, Icon, JsonObject, Meta, RequestMeta};
use super::content::ContentBlock;
use super::tasks::TaskMetadata;

/// A tool the server offers (spec: `server/tools`, `Tool`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments, kept verbatim (every keyword preserved).
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`, kept verbatim (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties such as task support (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The schema `{"type": "object", "properties": {}}`, for tools without arguments.
pub fn empty_object_schema() -> JsonObject {
    let mut m = JsonObject::new();
    m.insert("type".into(), Value::String("object".into()));
    m.insert("properties".into(), Value::Object(JsonObject::new()));
    m
}

impl Tool {
    /// A tool from its name and input schema (kept verbatim).
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            input_schema,
            ..Default::default()
        }
    }
    /// A tool without arguments (`{"type": "object", "properties": {}}`).
    pub fn without_args(name: impl Into<String>) -> Self {
        Tool::new(name, empty_object_schema())
    }
    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets the output schema.
    pub fn with_output_schema(mut self, schema: JsonObject) -> Self {
        self.output_schema = Some(schema);
        self
    }
    /// Sets the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }
    /// Sets the execution properties.
    pub fn with_execution(mut self, execution: ToolExecution) -> Self {
        self.execution = Some(execution);
        self
    }
    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}

/// Hints about a tool's behaviour; untrusted unless the server is (spec: `ToolAnnotations`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// May perform destructive updates (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeated calls with the same arguments have no extra effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets `readOnlyHint`.
    pub fn read_only(mut self, v: bool) -> Self {
        self.read_only_hint = Some(v);
        self
    }
    /// Sets `destructiveHint`.
    pub fn destructive(mut self, v: bool) -> Self {
        self.destructive_hint = Some(v);
        self
    }
    /// Sets `idempotentHint`.
    pub fn idempotent(mut self, v: bool) -> Self {
        self.idempotent_hint = Some(v);
        self
    }
    /// Sets `openWorldHint`.
    pub fn open_world(mut self, v: bool) -> Self {
        self.open_world_hint = Some(v);
        self
    }
}

/// Execution properties of a tool (spec: `ToolExecution`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool may be called as a task (default `forbidden`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Whether a tool supports task-augmented calls (spec: `ToolExecution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Must not be called as a task.
    Forbidden,
    /// May be called as a task.
    Optional,
    /// Must be called as a task.
    Required,
}

/// Result of `tools/list` (spec: `server/tools`, `ListToolsResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools.
    pub tools: Vec<Tool>,
    /// Cursor for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result kind (2026-07-28 `resultType`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// Cache lifetime in milliseconds (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ListToolsResult {
    /// A single page with these tools.
    pub fn new(tools: Vec<Tool>) -> Self {
        ListToolsResult {
            tools,
            ..Default::default()
        }
    }
    /// Sets the next cursor.
    pub fn with_next_cursor(mut self, cursor: impl Into<Cursor>) -> Self {
        self.next_cursor = Some(cursor.into());
        self
    }
}

/// Params of `tools/call` (spec: `server/tools`, `CallToolRequestParams`).
///
/// `arguments` stays raw JSON until the tool reads it (via [`CallToolParams::arguments_as`]), so
/// dispatch never builds a `Value` tree. `PartialEq` compares the raw text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// Tool name.
    pub name: String,
    /// The arguments object, unparsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Box<RawValue>>,
    /// Request task augmentation (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Answers to earlier input requests (2026-07-28 `inputResponses`), kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<JsonObject>,
    /// Opaque state echoed from an `input_required` result (2026-07-28 `requestState`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl PartialEq for CallToolParams {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.arguments.as_ref().map(|r| r.get()) == other.arguments.as_ref().map(|r| r.get())
            && self.task == other.task
            && self.input_responses == other.input_responses
            && self.request_state == other.request_state
            && self.meta == other.meta
    }
}

impl CallToolParams {
    /// Params calling `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolParams {
            name: name.into(),
            arguments: None,
            task: None,
            input_responses: None,
            request_state: None,
            meta: None,
        }
    }
    /// Sets the arguments by serializing `args` (should serialize to a JSON object).
    pub fn with_arguments<T: Serialize + ?Sized>(mut self, args: &T) -> Result<Self, serde_json::Error> {
        self.arguments = Some(serde_json::value::to_raw_value(args)?);
        Ok(self)
    }
    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: RequestMeta) -> Self {
        self.meta = Some(meta);
        self
    }
    /// Deserializes the arguments; absent arguments read as `{}`.
    pub fn arguments_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.arguments.as_ref().map_or("{}", |r| r.get()))
    }
}

/// Result of `tools/call` (spec: `server/tools` "Tool Result", `CallToolResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result, conforming to the tool's `outputSchema` if any (2025-06-18+; an object
    /// before 2026-07-28, any JSON value after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool call failed (a tool error, visible to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result kind (2026-07-28 `resultType`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with these content blocks.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }
    /// A failed result (`isError: true`) with these content blocks.
    pub fn error(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            is_error: Some(true),
            ..Default::default()
        }
    }
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
    /// A failed result (`isError: true`) with one text block.
    pub fn error_text(text: impl Into<String>) -> Self {
        CallToolResult::error(vec![ContentBlock::text(text)])
    }
    /// A structured result; also adds the serialized JSON as a text block, as the spec
    /// recommends for backwards compatibility.
    pub fn structured(value: Value) -> Self {
        let text = value.to_string();
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            structured_content: Some(value),
            ..Default::default()
        }
    }
    /// Whether `isError` is true.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
    /// Sets `_meta`.
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}
