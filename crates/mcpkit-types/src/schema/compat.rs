//! Adapting outgoing 2025-11-25-shaped messages to an older negotiated revision, so a peer on
//! 2024-11-05, 2025-03-26 or 2025-06-18 receives messages valid for *its* schema.
//!
//! None of the handshake-era schemas use `additionalProperties: false`, so members added later
//! (`title`, `icons`, `_meta`, `annotations.lastModified`, `execution`, …) are ignored by older
//! peers and are left alone. What does break an older schema:
//!
//! - content kinds it does not know: `audio` (added 2025-03-26) and `resource_link` (added
//!   2025-06-18) in tool results and prompt messages; `tool_use` / `tool_result` and array
//!   content in sampling messages and results (added 2025-11-25). These become a text block
//!   describing them ([`adapt_content`], [`adapt_sampling_content`]).
//! - `structuredContent` (added 2025-06-18): before it, the structured value is dropped and,
//!   if the result has no content, its JSON text is added as the spec recommends; from
//!   2025-06-18 to 2025-11-25 it must be an object (2026-07-28 allows any value), so a
//!   non-object moves to a text block.
//! - elicitation (added 2025-06-18): URL mode (2025-11-25) and the 2025-11-25 enum schemas
//!   (titled `oneOf` single-select, `array` multi-select) do not exist before; titled
//!   single-selects become the legacy `enum` + `enumNames`, multi-selects cannot be expressed
//!   ([`ElicitParams::for_version`] returns `None`).
//! - sampling `tools` / `toolChoice` / `task` (2025-11-25) are dropped before.
//!
//! 2026-07-28 result members (`resultType`, `ttlMs`, `cacheScope`) are stripped for every
//! handshake-era revision.

use serde_json::Value;

use super::completion::CompleteResult;
use super::content::ContentBlock;
use super::elicitation::{ElicitParams, ElicitationSchema};
use super::prompts::{GetPromptResult, ListPromptsResult};
use super::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use super::sampling::{
    CreateMessageParams, CreateMessageResult, SamplingContent, SamplingContentList, SamplingMessage,
};
use super::tools::{CallToolResult, ListToolsResult};
use crate::version::{Era, ProtocolVersion};

/// Describes an omitted audio block as text.
fn describe_audio(mime_type: &str, data_len: usize) -> String {
    format!("[audio content omitted: {mime_type}, {data_len} bytes base64]")
}

/// Turns a content block unknown to revision `v` into a text block describing it: `audio`
/// before 2025-03-26, `resource_link` before 2025-06-18. Other blocks are returned unchanged.
pub fn adapt_content(block: ContentBlock, v: ProtocolVersion) -> ContentBlock {
    match block {
        ContentBlock::Audio(a) if v < ProtocolVersion::V2025_03_26 => {
            let mut t = super::content::TextContent::new(describe_audio(&a.mime_type, a.data.len()));
            t.annotations = a.annotations;
            ContentBlock::Text(t)
        }
        ContentBlock::ResourceLink(link) if v < ProtocolVersion::V2025_06_18 => {
            let mut text = format!(
                "[resource: {}] {}",
                link.title.as_deref().unwrap_or(&link.name),
                link.uri
            );
            if let Some(mime) = &link.mime_type {
                text.push_str(&format!(" ({mime})"));
            }
            if let Some(desc) = &link.description {
                text.push_str(" - ");
                text.push_str(desc);
            }
            let mut t = super::content::TextContent::new(text);
            t.annotations = link.annotations;
            ContentBlock::Text(t)
        }
        other => other,
    }
}

/// Turns a sampling block unknown to revision `v` into a text block: `audio` before
/// 2025-03-26, `tool_use` / `tool_result` before 2025-11-25.
pub fn adapt_sampling_content(block: SamplingContent, v: ProtocolVersion) -> SamplingContent {
    match block {
        SamplingContent::Audio(a) if v < ProtocolVersion::V2025_03_26 => {
            SamplingContent::text(describe_audio(&a.mime_type, a.data.len()))
        }
        SamplingContent::ToolUse(u) if v < ProtocolVersion::V2025_11_25 => {
            SamplingContent::text(format!("[tool use {}: {} {}]", u.id, u.name, Value::Object(u.input)))
        }
        SamplingContent::ToolResult(r) if v < ProtocolVersion::V2025_11_25 => {
            let mut parts: Vec<String> = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(str::to_owned))
                .collect();
            if parts.is_empty() {
                if let Some(s) = &r.structured_content {
                    parts.push(s.to_string());
                }
            }
            let status = if r.is_error == Some(true) { "error" } else { "result" };
            SamplingContent::text(format!("[tool {status} for {}] {}", r.tool_use_id, parts.join("\n")))
        }
        other => other,
    }
}

/// Adapts sampling content to revision `v`: before 2025-11-25 content is a single block, so
/// several blocks are adapted and merged into one text block (or kept if only one remains).
fn adapt_sampling_list(list: SamplingContentList, v: ProtocolVersion) -> SamplingContentList {
    match list {
        SamplingContentList::Single(b) => SamplingContentList::Single(adapt_sampling_content(b, v)),
        SamplingContentList::Multiple(blocks) if v < ProtocolVersion::V2025_11_25 => {
            let mut blocks: Vec<SamplingContent> = blocks.into_iter().map(|b| adapt_sampling_content(b, v)).collect();
            if blocks.len() == 1 {
                if let Some(b) = blocks.pop() {
                    return SamplingContentList::Single(b);
                }
            }
            let text = blocks
                .iter()
                .map(|b| match b {
                    SamplingContent::Text(t) => t.text.clone(),
                    SamplingContent::Image(i) => format!("[image content omitted: {}]", i.mime_type),
                    SamplingContent::Audio(a) => describe_audio(&a.mime_type, a.data.len()),
                    // Unreachable after adaptation, described anyway.
                    SamplingContent::ToolUse(u) => format!("[tool use {}: {}]", u.id, u.name),
                    SamplingContent::ToolResult(r) => format!("[tool result for {}]", r.tool_use_id),
                })
                .collect::<Vec<_>>()
                .join("\n");
            SamplingContentList::Single(SamplingContent::text(text))
        }
        SamplingContentList::Multiple(blocks) => {
            SamplingContentList::Multiple(blocks.into_iter().map(|b| adapt_sampling_content(b, v)).collect())
        }
    }
}

fn handshake(v: ProtocolVersion) -> bool {
    v.era() == Era::Handshake
}

impl CallToolResult {
    /// Adapts this result to revision `v`: unknown content kinds become text
    /// ([`adapt_content`]); `structuredContent` is dropped before 2025-06-18 (its JSON becomes
    /// the text content if there is none) and must be an object until 2026-07-28;
    /// `resultType` is dropped in the handshake era.
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        self.content = self.content.into_iter().map(|b| adapt_content(b, v)).collect();
        let keep_structured = match &self.structured_content {
            None => true,
            Some(_) if v < ProtocolVersion::V2025_06_18 => false,
            Some(s) => !handshake(v) || s.is_object(),
        };
        if !keep_structured {
            if let Some(s) = self.structured_content.take() {
                if self.content.is_empty() {
                    self.content.push(ContentBlock::text(s.to_string()));
                }
            }
        }
        if handshake(v) {
            self.result_type = None;
        }
        self
    }
}

impl GetPromptResult {
    /// Adapts this result to revision `v`: unknown content kinds in messages become text
    /// ([`adapt_content`]); `resultType` is dropped in the handshake era.
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        for m in &mut self.messages {
            let block = std::mem::replace(&mut m.content, ContentBlock::text(String::new()));
            m.content = adapt_content(block, v);
        }
        if handshake(v) {
            self.result_type = None;
        }
        self
    }
}

macro_rules! strip_cacheable {
    ($($ty:ty),*) => {$(
        impl $ty {
            /// Adapts this result to revision `v`: drops the 2026-07-28 members (`resultType`,
            /// `ttlMs`, `cacheScope`) in the handshake era; everything else is valid as is.
            pub fn for_version(mut self, v: ProtocolVersion) -> Self {
                if handshake(v) {
                    self.result_type = None;
                    self.ttl_ms = None;
                    self.cache_scope = None;
                }
                self
            }
        }
    )*};
}

strip_cacheable!(
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListPromptsResult,
    ReadResourceResult
);

impl ListToolsResult {
    /// Adapts this result to revision `v`: drops the 2026-07-28 members in the handshake era,
    /// and `execution` (task support, 2025-11-25 only) outside 2025-11-25. Input and output
    /// schemas are never touched.
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        if handshake(v) {
            self.result_type = None;
            self.ttl_ms = None;
            self.cache_scope = None;
        }
        if v != ProtocolVersion::V2025_11_25 {
            for t in &mut self.tools {
                t.execution = None;
            }
        }
        self
    }
}

impl CompleteResult {
    /// Adapts this result to revision `v`: drops `resultType` in the handshake era.
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        if handshake(v) {
            self.result_type = None;
        }
        self
    }
}

impl SamplingMessage {
    /// Adapts this message to revision `v` (see [`adapt_sampling_content`]; arrays become a
    /// single block before 2025-11-25).
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        self.content = adapt_sampling_list(self.content, v);
        self
    }
}

impl CreateMessageParams {
    /// Adapts these params to revision `v`: messages as in [`SamplingMessage::for_version`];
    /// `tools`, `toolChoice` and `task` are dropped before 2025-11-25.
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        self.messages = self.messages.into_iter().map(|m| m.for_version(v)).collect();
        if v < ProtocolVersion::V2025_11_25 {
            self.tools = None;
            self.tool_choice = None;
            self.task = None;
        }
        self
    }
}

impl CreateMessageResult {
    /// Adapts this result to revision `v`: content as in [`SamplingMessage::for_version`].
    pub fn for_version(mut self, v: ProtocolVersion) -> Self {
        self.content = adapt_sampling_list(self.content, v);
        self
    }
}

impl ElicitationSchema {
    /// Adapts the schema to revision `v`. Before 2025-11-25, a titled single-select
    /// (`oneOf: [{const, title}]`) becomes the legacy `enum` + `enumNames`. Returns `None` when
    /// a property cannot be expressed (a multi-select `array`).
    pub fn for_version(mut self, v: ProtocolVersion) -> Option<Self> {
        if v >= ProtocolVersion::V2025_11_25 {
            return Some(self);
        }
        if let Some(Value::Object(props)) = self.0.get_mut("properties") {
            for prop in props.values_mut() {
                let Value::Object(p) = prop else { continue };
                if p.get("type").and_then(Value::as_str) == Some("array") {
                    return None;
                }
                if let Some(Value::Array(options)) = p.remove("oneOf") {
                    let mut values = Vec::with_capacity(options.len());
                    let mut names = Vec::with_capacity(options.len());
                    for o in &options {
                        let c = o.get("const").cloned().unwrap_or(Value::Null);
                        let t = o.get("title").cloned().unwrap_or_else(|| c.clone());
                        values.push(c);
                        names.push(t);
                    }
                    p.insert("type".into(), Value::String("string".into()));
                    p.insert("enum".into(), Value::Array(values));
                    p.insert("enumNames".into(), Value::Array(names));
                }
            }
        }
        Some(self)
    }
}

impl ElicitParams {
    /// Adapts these params to revision `v`. Returns `None` when the request cannot be sent:
    /// any elicitation before 2025-06-18, URL mode before 2025-11-25, or a form schema that
    /// does not exist there (see [`ElicitationSchema::for_version`]). `task` is dropped before
    /// 2025-11-25.
    pub fn for_version(self, v: ProtocolVersion) -> Option<Self> {
        if v < ProtocolVersion::V2025_06_18 {
            return None;
        }
        match self {
            ElicitParams::Url(_) if v < ProtocolVersion::V2025_11_25 => None,
            ElicitParams::Url(u) => Some(ElicitParams::Url(u)),
            ElicitParams::Form(mut f) => {
                f.requested_schema = f.requested_schema.for_version(v)?;
                if v < ProtocolVersion::V2025_11_25 {
                    f.task = None;
                }
                Some(ElicitParams::Form(f))
            }
        }
    }
}
