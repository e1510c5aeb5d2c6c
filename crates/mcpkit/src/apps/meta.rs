//! The metadata both sides of MCP Apps read and write (SEP-1865, revision 2026-01-26, "UI
//! Resource Format" and "Resource Discovery"): a tool's link to its view and who may call it,
//! and a view's security and rendering settings.

use mcpkit_types::schema::{JsonObject, Meta, ResourceContents, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The extension's identifier, under which a host declares support.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an HTML view.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The scheme every view's URI starts with.
pub const URI_SCHEME: &str = "ui://";
/// The flat `_meta` key of a tool's view, deprecated by the nested `ui.resourceUri` but still
/// read by hosts; mcpkit writes both.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// The extension's settings as a host and a server declare them (SEP-1865, "Client<>Server
/// Capability Negotiation"): `{"mimeTypes": ["text/html;profile=mcp-app"]}`.
pub fn settings() -> JsonObject {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), json!([MIME_TYPE]));
    settings
}

/// Who may see and call a tool ("Visibility").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model: listed to it and callable by it.
    Model,
    /// The views of the tool's own server, through the host.
    App,
}

/// A tool's `_meta.ui` (`McpUiToolMeta`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUi {
    /// The `ui://` URI of the view that renders the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call it; `None` means both (the spec's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
}

impl ToolUi {
    /// What `tool` declares, reading the nested key and, for the view, the flat legacy key;
    /// `None` when it declares neither. Read leniently and on the safe side: a visibility entry
    /// mcpkit does not know grants nothing, so `["widget"]` lets no one call the tool.
    pub fn of(tool: &Tool) -> Option<ToolUi> {
        let meta = tool.meta.as_ref()?;
        let nested = meta.get("ui").and_then(Value::as_object);
        let visibility = nested.and_then(|ui| ui.get("visibility")).map(|v| {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|who| serde_json::from_value(who.clone()).ok())
                .collect()
        });
        let resource_uri = nested
            .and_then(|ui| ui.get("resourceUri"))
            .or_else(|| meta.get(LEGACY_RESOURCE_URI_KEY))
            .and_then(Value::as_str)
            .map(str::to_owned);
        (nested.is_some() || resource_uri.is_some()).then_some(ToolUi {
            resource_uri,
            visibility,
        })
    }

    /// Whether `visibility` lets `who` call the tool (absent: everyone).
    pub fn allows(&self, who: Visibility) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&who))
    }
}

/// Whether the model may see and call `tool`: true unless its visibility leaves out `model`.
pub fn visible_to_model(tool: &Tool) -> bool {
    ToolUi::of(tool).is_none_or(|ui| ui.allows(Visibility::Model))
}

/// The origins a view may reach (`McpUiResourceCsp`); each list empty by default, which
/// allows none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested frames (`frame-src`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Base URIs the document may set (`base-uri`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

/// A browser capability a view asks for (`McpUiResourcePermissions`); hosts map each to the
/// iframe's `allow` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// `camera`.
    Camera,
    /// `microphone`.
    Microphone,
    /// `geolocation`.
    Geolocation,
    /// `clipboard-write`.
    ClipboardWrite,
}

impl Permission {
    /// Every permission, in the order hosts list them.
    pub const ALL: [Permission; 4] = [
        Permission::Camera,
        Permission::Microphone,
        Permission::Geolocation,
        Permission::ClipboardWrite,
    ];

    /// Its Permissions Policy feature name.
    pub fn feature(self) -> &'static str {
        match self {
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
            Permission::Geolocation => "geolocation",
            Permission::ClipboardWrite => "clipboard-write",
        }
    }
}

/// An empty object: the wire form of a permission asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Asked {}

/// The permissions a view asks for, as on the wire (`{"camera": {}, …}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Permissions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    camera: Option<Asked>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    microphone: Option<Asked>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    geolocation: Option<Asked>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    clipboard_write: Option<Asked>,
}

impl Permissions {
    /// Asking for each of `permissions`.
    pub fn of(permissions: impl IntoIterator<Item = Permission>) -> Permissions {
        let mut out = Permissions::default();
        for p in permissions {
            *out.slot(p) = Some(Asked {});
        }
        out
    }

    /// Whether `permission` is asked for.
    pub fn asks(&self, permission: Permission) -> bool {
        match permission {
            Permission::Camera => self.camera.is_some(),
            Permission::Microphone => self.microphone.is_some(),
            Permission::Geolocation => self.geolocation.is_some(),
            Permission::ClipboardWrite => self.clipboard_write.is_some(),
        }
    }

    fn slot(&mut self, permission: Permission) -> &mut Option<Asked> {
        match permission {
            Permission::Camera => &mut self.camera,
            Permission::Microphone => &mut self.microphone,
            Permission::Geolocation => &mut self.geolocation,
            Permission::ClipboardWrite => &mut self.clipboard_write,
        }
    }
}

/// A view's `_meta.ui` (`McpUiResourceMeta`), on its `resources/read` contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewMeta {
    /// The origins it may reach; absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
    /// The browser capabilities it asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// A dedicated sandbox origin, in the host's own format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl ViewMeta {
    /// What a `resources/read` content declares (`None`: nothing, or not in this shape).
    pub fn of(contents: &ResourceContents) -> Option<ViewMeta> {
        let meta = match contents {
            ResourceContents::Text(t) => t.meta.as_ref(),
            ResourceContents::Blob(b) => b.meta.as_ref(),
        };
        ViewMeta::in_meta(meta?)
    }

    /// What `meta["ui"]` declares.
    pub fn in_meta(meta: &Meta) -> Option<ViewMeta> {
        serde_json::from_value(meta.get("ui")?.clone()).ok()
    }

    #[cfg(feature = "server")]
    pub(crate) fn is_empty(&self) -> bool {
        *self == ViewMeta::default()
    }
}
