//! Content blocks (spec: `server/tools` "Tool Result", `server/prompts`, schema `ContentBlock`).

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use super::common::{Annotations, Meta};
use super::resources::Resource;

/// Text content (spec: schema `TextContent`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text content from a string.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Base64 image content (spec: schema `ImageContent`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Base64 audio content (spec: schema `AudioContent`, 2025-03-26+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A link to a resource (spec: schema `ResourceLink`, 2025-06-18+): a [`Resource`] tagged
/// `"type": "resource_link"`.
pub type ResourceLink = Resource;

/// A resource embedded in a message (spec: schema `EmbeddedResource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A content block in tool results and prompt messages (spec: schema `ContentBlock`),
/// tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"` (2025-03-26+).
    Audio(AudioContent),
    /// `"type": "resource_link"` (2025-06-18+).
    ResourceLink(ResourceLink),
    /// `"type": "resource"`: an embedded resource.
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
    /// An image block from base64 data and a MIME type.
    pub fn image(data_b64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent {
            data: data_b64.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }
    /// An audio block from base64 data and a MIME type.
    pub fn audio(data_b64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent {
            data: data_b64.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        })
    }
    /// An embedded resource block.
    pub fn resource(contents: ResourceContents) -> Self {
        ContentBlock::Resource(EmbeddedResource {
            resource: contents,
            annotations: None,
            meta: None,
        })
    }
    /// A resource link block.
    pub fn resource_link(link: ResourceLink) -> Self {
        ContentBlock::ResourceLink(link)
    }
    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
    /// Sets the annotations of any block kind.
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        let slot = match &mut self {
            ContentBlock::Text(c) => &mut c.annotations,
            ContentBlock::Image(c) => &mut c.annotations,
            ContentBlock::Audio(c) => &mut c.annotations,
            ContentBlock::ResourceLink(c) => &mut c.annotations,
            ContentBlock::Resource(c) => &mut c.annotations,
        };
        *slot = Some(annotations);
        self
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

/// Text contents of a resource (spec: schema `TextResourceContents`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Binary contents of a resource (spec: schema `BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded data.
    pub blob: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Contents of a resource: text or blob (spec: `server/resources`, schema
/// `TextResourceContents | BlobResourceContents`). Told apart by the presence of `blob` or
/// `text` (no tag exists on the wire).
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceContents {
    /// Has a `text` member.
    Text(TextResourceContents),
    /// Has a `blob` member.
    Blob(BlobResourceContents),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: text.into(),
            meta: None,
        })
    }
    /// Binary contents from base64 data.
    pub fn blob(uri: impl Into<String>, mime_type: Option<&str>, blob_b64: impl Into<String>) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            blob: blob_b64.into(),
            meta: None,
        })
    }
    /// The resource URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text(t) => &t.uri,
            ResourceContents::Blob(b) => &b.uri,
        }
    }
    /// The MIME type, if given.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text(t) => t.mime_type.as_deref(),
            ResourceContents::Blob(b) => b.mime_type.as_deref(),
        }
    }
}

impl Serialize for ResourceContents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ResourceContents::Text(t) => t.serialize(s),
            ResourceContents::Blob(b) => b.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Meta::deserialize(d)?;
        let is_blob = map.contains_key("blob");
        let is_text = map.contains_key("text");
        let value = serde_json::Value::Object(map);
        match (is_text, is_blob) {
            (true, false) => serde_json::from_value(value)
                .map(ResourceContents::Text)
                .map_err(de::Error::custom),
            (false, true) => serde_json::from_value(value)
                .map(ResourceContents::Blob)
                .map_err(de::Error::custom),
            (true, true) => Err(de::Error::custom("resource contents has both `text` and `blob`")),
            (false, false) => Err(de::Error::custom("resource contents needs `text` or `blob`")),
        }
    }
}
