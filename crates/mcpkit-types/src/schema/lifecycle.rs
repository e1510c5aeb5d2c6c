//! Initialization and capabilities (spec: `basic/lifecycle`).

use serde::{Deserialize, Serialize};

use super::common::{Implementation, JsonObject, Meta, RequestMeta};

/// Params of `initialize` (spec: `basic/lifecycle`, `InitializeRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The latest revision the client supports; kept as a string so unknown revisions can be
    /// negotiated down rather than rejected.
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// The client's name and version.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl InitializeParams {
    /// Params from a version string, capabilities and client info.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeParams {
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
            meta: None,
        }
    }
}

/// Result of `initialize` (spec: `basic/lifecycle`, `InitializeResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose.
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// The server's name and version.
    pub server_info: Implementation,
    /// Usage hints for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InitializeResult {
    /// A result from a version string, capabilities and server info.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: protocol_version.into(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
        }
    }
    /// Sets the instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }
}

/// Capabilities a client supports (spec: `basic/lifecycle`, `ClientCapabilities`). Serializes as
/// `{}` when empty; unknown members are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Filesystem roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// LLM sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Elicitation (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Non-standard experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Task-augmented requests (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions, by identifier, each with its settings object (spec: 2026-07-28
    /// `basic/versioning` "Extension negotiation"). Read them with `extension(id)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `roots` client capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client emits `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `sampling` client capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Supports `includeContext` other than `"none"` (soft-deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Supports `tools` and `toolChoice` (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `elicitation` client capability. An empty object means form mode only.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// URL mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCapability {
    /// Form mode is supported: `form` present, or neither mode listed (backwards compatibility).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }
    /// URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// The `tasks` capability of either side (2025-11-25). `requests` lists which requests may be
/// task-augmented (client: `sampling.createMessage`, `elicitation.create`; server: `tools.call`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TasksCapability {
    /// Supports `tasks/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<JsonObject>,
    /// Supports `tasks/cancel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<JsonObject>,
    /// Task-augmentable requests, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<JsonObject>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Capabilities a server supports (spec: `basic/lifecycle`, `ServerCapabilities`). Serializes as
/// `{}` when empty; unknown members are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Log message notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Argument autocompletion (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Non-standard experimental capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Task-augmented requests (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksCapability>,
    /// Extensions, by identifier, each with its settings object (spec: 2026-07-28
    /// `basic/versioning` "Extension negotiation"). Read them with `extension(id)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `tools` server capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server emits `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `prompts` server capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server emits `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `resources` server capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server emits `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The settings object declared for extension `id` in an `extensions` map; a member whose value
/// is not an object declares nothing.
fn extension_in<'a>(map: Option<&'a JsonObject>, id: &str) -> Option<&'a JsonObject> {
    map?.get(id)?.as_object()
}

/// `map` with extension `id` declared with `settings`.
fn with_extension_in(map: &mut Option<JsonObject>, id: &str, settings: JsonObject) {
    map.get_or_insert_with(JsonObject::new)
        .insert(id.to_owned(), serde_json::Value::Object(settings));
}

impl ClientCapabilities {
    /// The settings the client declared for extension `id`, if it declared it.
    pub fn extension(&self, id: &str) -> Option<&JsonObject> {
        extension_in(self.extensions.as_ref(), id)
    }

    /// Declare extension `id` with `settings` (an empty object: support without settings).
    pub fn with_extension(mut self, id: &str, settings: JsonObject) -> Self {
        with_extension_in(&mut self.extensions, id, settings);
        self
    }
}

impl ServerCapabilities {
    /// The settings the server declared for extension `id`, if it declared it.
    pub fn extension(&self, id: &str) -> Option<&JsonObject> {
        extension_in(self.extensions.as_ref(), id)
    }

    /// Declare extension `id` with `settings` (an empty object: support without settings).
    pub fn with_extension(mut self, id: &str, settings: JsonObject) -> Self {
        with_extension_in(&mut self.extensions, id, settings);
        self
    }
}
