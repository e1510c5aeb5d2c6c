//! Prompts (spec: `server/prompts`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{CacheScope, Cursor, Icon, JsonObject, Meta, RequestMeta, Role};
use super::content::ContentBlock;

/// A prompt template the server offers (spec: `server/prompts`, `Prompt`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Accepted arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Prompt {
    /// A prompt from its name.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            ..Default::default()
        }
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
    /// Adds an argument.
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }
    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }
}

/// An argument a prompt accepts (spec: `PromptArgument`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// An argument from its name.
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            ..Default::default()
        }
    }
    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets `required`.
    pub fn required(mut self, required: bool) -> Self {
        self.required = Some(required);
        self
    }
}

/// Result of `prompts/list` (spec: `server/prompts`, `ListPromptsResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts.
    pub prompts: Vec<Prompt>,
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

impl ListPromptsResult {
    /// A single page with these prompts.
    pub fn new(prompts: Vec<Prompt>) -> Self {
        ListPromptsResult {
            prompts,
            ..Default::default()
        }
    }
}

/// Params of `prompts/get` (spec: `server/prompts`, `GetPromptRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptParams {
    /// Prompt name.
    pub name: String,
    /// Argument values (strings only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
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

impl GetPromptParams {
    /// Params getting `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        GetPromptParams {
            name: name.into(),
            ..Default::default()
        }
    }
    /// Adds an argument.
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), value.into());
        self
    }
}

/// Result of `prompts/get` (spec: `server/prompts`, `GetPromptResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetPromptResult {
    /// Description of the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Result kind (2026-07-28 `resultType`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            messages,
            ..Default::default()
        }
    }
    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// A message in a prompt (spec: `PromptMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message from a role and a content block.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        PromptMessage { role, content }
    }
    /// A user text message.
    pub fn user_text(text: impl Into<String>) -> Self {
        PromptMessage::new(Role::User, ContentBlock::text(text))
    }
    /// An assistant text message.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        PromptMessage::new(Role::Assistant, ContentBlock::text(text))
    }
}
