//! Shared building blocks (spec: `basic/index`, schema `Annotations`, `Icon`, `Implementation`, …).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::stateless::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION};

/// The open `_meta` object attached to most messages (spec: `basic/index` "General fields").
pub type Meta = serde_json::Map<String, Value>;

/// An arbitrary JSON object (JSON Schemas, capability objects, `experimental`, …).
pub type JsonObject = serde_json::Map<String, Value>;

/// An opaque pagination cursor (spec: `server/utilities/pagination`, `Cursor`).
pub type Cursor = String;

/// A progress token: a string or an integer, echoed exactly (spec: `basic/utilities/progress`,
/// `ProgressToken`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl fmt::Display for ProgressToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgressToken::Number(n) => write!(f, "{n}"),
            ProgressToken::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

impl Serialize for ProgressToken {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ProgressToken::Number(n) => s.serialize_i64(*n),
            ProgressToken::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for ProgressToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = ProgressToken;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer progress token")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ProgressToken, E> {
                Ok(ProgressToken::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ProgressToken, E> {
                i64::try_from(v)
                    .map(ProgressToken::Number)
                    .map_err(|_| E::custom("integer progress token out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// The sender or recipient of a message (spec: schema `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (client side).
    User,
    /// The assistant (model side).
    Assistant,
}

/// Hints for how a client should use or display an object (spec: schema `Annotations`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// Sets the audience.
    pub fn with_audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = Some(audience.into_iter().collect());
        self
    }
    /// Sets the priority (0..=1).
    pub fn with_priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }
    /// Sets the last-modified timestamp.
    pub fn with_last_modified(mut self, ts: impl Into<String>) -> Self {
        self.last_modified = Some(ts.into());
        self
    }
}

/// The theme an icon is designed for (spec: schema `Icon.theme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon for display in a user interface (spec: schema `Icon`, 2025-11-25+).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI of the icon.
    pub src: String,
    /// Optional MIME type override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// Theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon from its source URI.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            ..Default::default()
        }
    }
    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }
    /// Sets the sizes.
    pub fn with_sizes(mut self, sizes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.sizes = Some(sizes.into_iter().map(Into::into).collect());
        self
    }
    /// Sets the theme.
    pub fn with_theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }
}

/// Name and version of an MCP implementation (spec: `basic/lifecycle`, schema `Implementation`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Human-readable description (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Website URL (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation from its name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
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
    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }
    /// Sets the website URL.
    pub fn with_website_url(mut self, url: impl Into<String>) -> Self {
        self.website_url = Some(url.into());
        self
    }
}

/// The `_meta` object of a request: a `progressToken` plus any other members, kept verbatim
/// (spec: schema `RequestParams._meta`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMeta {
    /// Token for out-of-band progress notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// Every other member (e.g. `io.modelcontextprotocol/related-task`).
    #[serde(flatten)]
    pub extra: Meta,
}

// By hand rather than derived: a derived `flatten` buffers every member before sorting them
// out, and stateless-era requests carry their whole client identity here.
impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = RequestMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a _meta object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
                let mut meta = RequestMeta::default();
                let mut seen_token = false;
                let skip_protocol = SKIP_PROTOCOL_MEMBERS.with(Cell::get);
                while let Some(MemberName(key)) = map.next_key::<MemberName<'de>>()? {
                    if key == "progressToken" {
                        if std::mem::replace(&mut seen_token, true) {
                            return Err(de::Error::duplicate_field("progressToken"));
                        }
                        meta.progress_token = map.next_value()?;
                    } else if skip_protocol && PROTOCOL_MEMBERS.contains(&key.as_ref()) {
                        map.next_value::<de::IgnoredAny>()?;
                    } else {
                        let value = map.next_value()?;
                        meta.extra.insert(key.into_owned(), value);
                    }
                }
                Ok(meta)
            }
        }
        d.deserialize_map(V)
    }
}

/// The per-request protocol members of a 2026-07-28 `_meta`.
const PROTOCOL_MEMBERS: [&str; 4] = [
    META_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
];

thread_local! {
    /// Set while a [`ProtocolMembersSkipped`] lives.
    static SKIP_PROTOCOL_MEMBERS: Cell<bool> = const { Cell::new(false) };
}

/// While one of these lives, the 2026-07-28 protocol members
/// (`io.modelcontextprotocol/protocolVersion`, `clientCapabilities`, `clientInfo`, `logLevel`)
/// are left out of every [`RequestMeta`] this thread decodes. For a server that has already
/// read them into the request's session: building them again as `Value`s, only to drop them,
/// was most of what a stateless request's `_meta` cost. A thread flag rather than a parameter,
/// because the `_meta` sits inside each method's derived params; a guard rather than a closure,
/// so that it is not instantiated once per params type.
#[doc(hidden)]
#[must_use = "the members are left out only while the guard lives"]
pub struct ProtocolMembersSkipped(bool);

impl ProtocolMembersSkipped {
    /// Leave the protocol members out until the guard is dropped.
    pub fn start() -> Self {
        ProtocolMembersSkipped(SKIP_PROTOCOL_MEMBERS.with(|s| s.replace(true)))
    }
}

impl Drop for ProtocolMembersSkipped {
    fn drop(&mut self) {
        SKIP_PROTOCOL_MEMBERS.with(|s| s.set(self.0));
    }
}

/// A JSON string (a member name, or a value read without its type), borrowed from the text
/// when it holds no escapes (a skipped member then costs no allocation).
#[doc(hidden)]
pub struct MemberName<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for MemberName<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> de::Visitor<'de> for V<'a> {
            type Value = MemberName<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<MemberName<'a>, E> {
                Ok(MemberName(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MemberName<'a>, E> {
                Ok(MemberName(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<MemberName<'a>, E> {
                Ok(MemberName(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

impl RequestMeta {
    /// A `_meta` carrying only a progress token.
    pub fn with_progress_token(token: impl Into<ProgressToken>) -> Self {
        RequestMeta {
            progress_token: Some(token.into()),
            extra: Meta::new(),
        }
    }
}

/// Params of a request that takes only an optional `_meta` (e.g. `ping`, `roots/list`;
/// spec: schema `RequestParams`). Deserializes from `{}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Params of `ping` (spec: `basic/utilities/ping`).
pub type PingParams = RequestParams;

/// Params of a paginated list request (spec: `server/utilities/pagination`,
/// `PaginatedRequestParams`). All optional; deserializes from `{}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedParams {
    /// Cursor returned as `nextCursor` by the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl PaginatedParams {
    /// Params asking for the page after `cursor`.
    pub fn with_cursor(cursor: impl Into<Cursor>) -> Self {
        PaginatedParams {
            cursor: Some(cursor.into()),
            meta: None,
        }
    }
}

/// A result with no content, e.g. the answer to `ping` (spec: schema `EmptyResult`).
/// Unknown members are kept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EmptyResult {
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Any other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Whether a cacheable result may be shared between users (2026-07-28 `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Cacheable for this user only.
    Private,
    /// Cacheable for everyone.
    Public,
}
