//! Sampling: the server asks the client's LLM for a completion (spec: `client/sampling`).

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::common::{JsonObject, Meta, RequestMeta, Role};
use super::content::{AudioContent, ContentBlock, ImageContent, TextContent};
use super::tasks::TaskMetadata;
use super::tools::Tool;

/// Params of `sampling/createMessage` (spec: `client/sampling`, `CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Model selection preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which servers' context to include (soft-deprecated beyond `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum tokens to sample.
    pub max_tokens: u64,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may call (2025-11-25; needs the `sampling.tools` capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use tools (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Request task augmentation (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl CreateMessageParams {
    /// Params sampling at most `max_tokens` after `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageParams {
            messages,
            max_tokens,
            ..Default::default()
        }
    }
    /// Sets the system prompt.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }
    /// Sets the model preferences.
    pub fn with_model_preferences(mut self, prefs: ModelPreferences) -> Self {
        self.model_preferences = Some(prefs);
        self
    }
    /// Sets the tools and tool choice.
    pub fn with_tools(mut self, tools: Vec<Tool>, choice: Option<ToolChoice>) -> Self {
        self.tools = Some(tools);
        self.tool_choice = choice;
        self
    }
}

/// Which MCP servers' context to include in sampling (spec: `includeContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// No context.
    None,
    /// Context from the requesting server.
    ThisServer,
    /// Context from all servers.
    AllServers,
}

/// A message in a sampling conversation (spec: `client/sampling`, `SamplingMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// One block or (2025-11-25) an array of blocks.
    pub content: SamplingContentList,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A message with one block.
    pub fn new(role: Role, content: SamplingContent) -> Self {
        SamplingMessage {
            role,
            content: SamplingContentList::Single(content),
            meta: None,
        }
    }
    /// A user text message.
    pub fn user_text(text: impl Into<String>) -> Self {
        SamplingMessage::new(Role::User, SamplingContent::text(text))
    }
    /// An assistant text message.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        SamplingMessage::new(Role::Assistant, SamplingContent::text(text))
    }
}

/// Sampling content: a single block or an array of blocks (2025-11-25). The wire shape is kept,
/// so a message round-trips exactly. Distinguished by JSON type (object vs array), by hand.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingContentList {
    /// A single block (the only form before 2025-11-25).
    Single(SamplingContent),
    /// An array of blocks.
    Multiple(Vec<SamplingContent>),
}

impl SamplingContentList {
    /// The blocks as a slice.
    pub fn as_slice(&self) -> &[SamplingContent] {
        match self {
            SamplingContentList::Single(b) => std::slice::from_ref(b),
            SamplingContentList::Multiple(v) => v,
        }
    }
    /// The blocks as a vector.
    pub fn into_vec(self) -> Vec<SamplingContent> {
        match self {
            SamplingContentList::Single(b) => vec![b],
            SamplingContentList::Multiple(v) => v,
        }
    }
    /// Iterates over the blocks.
    pub fn iter(&self) -> std::slice::Iter<'_, SamplingContent> {
        self.as_slice().iter()
    }
}

impl From<SamplingContent> for SamplingContentList {
    fn from(b: SamplingContent) -> Self {
        SamplingContentList::Single(b)
    }
}

impl From<Vec<SamplingContent>> for SamplingContentList {
    fn from(v: Vec<SamplingContent>) -> Self {
        SamplingContentList::Multiple(v)
    }
}

impl Serialize for SamplingContentList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SamplingContentList::Single(b) => b.serialize(s),
            SamplingContentList::Multiple(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContentList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = SamplingContentList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block or an array of content blocks")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                SamplingContent::deserialize(MapAccessDeserializer::new(map)).map(SamplingContentList::Single)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::<SamplingContent>::deserialize(SeqAccessDeserializer::new(seq)).map(SamplingContentList::Multiple)
            }
        }
        d.deserialize_any(V)
    }
}

/// A block in sampling messages (spec: `SamplingMessageContentBlock`), tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContent {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `"type": "tool_use"` (2025-11-25).
    ToolUse(ToolUseContent),
    /// `"type": "tool_result"` (2025-11-25).
    ToolResult(ToolResultContent),
}

impl SamplingContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text(TextContent::new(text))
    }
    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContent::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// The model asks to call a tool (spec: `ToolUseContent`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Id matched by the `tool_result`.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, kept verbatim.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, sent back to the model (spec: `ToolResultContent`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `tool_use` id this answers.
    pub tool_use_id: String,
    /// Unstructured result.
    pub content: Vec<ContentBlock>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// How the model may use tools (spec: `ToolChoice`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// The mode (default `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// `ToolChoice.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides.
    Auto,
    /// The model must call a tool.
    Required,
    /// The model must not call tools.
    None,
}

/// Model selection preferences (spec: `client/sampling` "Model Preferences", `ModelPreferences`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// Weight of cost, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// Weight of speed, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// Weight of capability, 0..=1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// A model name hint (spec: `ModelHint`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A (partial) model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ModelHint {
    /// A hint naming `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ModelHint {
            name: Some(name.into()),
        }
    }
}

/// Result of `sampling/createMessage` (spec: `client/sampling`, `CreateMessageResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Role of the generated message.
    pub role: Role,
    /// The generated content.
    pub content: SamplingContentList,
    /// The model used.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CreateMessageResult {
    /// `stopReason` when the model finished its turn.
    pub const END_TURN: &'static str = "endTurn";
    /// `stopReason` when a stop sequence was hit.
    pub const STOP_SEQUENCE: &'static str = "stopSequence";
    /// `stopReason` when `maxTokens` was reached.
    pub const MAX_TOKENS: &'static str = "maxTokens";
    /// `stopReason` when the model wants to use a tool.
    pub const TOOL_USE: &'static str = "toolUse";

    /// An assistant text result from `model`.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: SamplingContentList::Single(SamplingContent::text(text)),
            model: model.into(),
            stop_reason: Some(Self::END_TURN.into()),
            meta: None,
        }
    }
}
