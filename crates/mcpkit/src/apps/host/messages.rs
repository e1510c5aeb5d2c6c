//! The messages between a view and its host (SEP-1865, "Communication Protocol" and "MCP Apps
//! Specific Messages", protocol `2026-01-26`): one descriptor per method, as for the core
//! methods, and their params and results.

use mcpkit_types::method::{Method, NotificationMethod};
use mcpkit_types::schema::{CallToolResult, Implementation, JsonObject, RequestParams, Tool};
use mcpkit_types::RequestId;
use serde::{Deserialize, Serialize};

use crate::apps::{Csp, Permissions};

/// The protocol version of the view–host messages.
pub const PROTOCOL_VERSION: &str = "2026-01-26";

/// Declare a request descriptor.
macro_rules! request {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $ty;
        impl Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Declare a notification descriptor.
macro_rules! notification {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $ty;
        impl NotificationMethod for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
        }
    };
}

request!(
    /// `ui/initialize` (view → host): the view's handshake.
    Initialize, "ui/initialize", InitializeParams, InitializeResult
);
notification!(
    /// `ui/notifications/initialized` (view → host): the host may now send notifications.
    Initialized, "ui/notifications/initialized", JsonObject
);
notification!(
    /// `ui/notifications/tool-input` (host → view): the complete arguments of the tool call.
    ToolInput, "ui/notifications/tool-input", ToolInputParams
);
notification!(
    /// `ui/notifications/tool-input-partial` (host → view): arguments still streaming.
    ToolInputPartial, "ui/notifications/tool-input-partial", ToolInputParams
);
notification!(
    /// `ui/notifications/tool-result` (host → view): the tool call's result.
    ToolResult, "ui/notifications/tool-result", CallToolResult
);
notification!(
    /// `ui/notifications/tool-cancelled` (host → view): the tool call was cancelled.
    ToolCancelled, "ui/notifications/tool-cancelled", ToolCancelledParams
);
notification!(
    /// `ui/notifications/host-context-changed` (host → view): the fields that changed.
    HostContextChanged, "ui/notifications/host-context-changed", HostContext
);
notification!(
    /// `ui/notifications/size-changed` (view → host): the view's content size.
    SizeChanged, "ui/notifications/size-changed", SizeChangedParams
);
request!(
    /// `ui/resource-teardown` (host → view): the view is about to be removed.
    ResourceTeardown, "ui/resource-teardown", ToolCancelledParams, JsonObject
);
request!(
    /// `ui/open-link` (view → host): open a URL in the user's browser.
    OpenLink, "ui/open-link", OpenLinkParams, JsonObject
);
request!(
    /// `ui/message` (view → host): add a message to the conversation.
    UiMessage, "ui/message", JsonObject, JsonObject
);
request!(
    /// `ui/update-model-context` (view → host): context for the model's next turns.
    UpdateModelContext, "ui/update-model-context", JsonObject, JsonObject
);
request!(
    /// `ui/request-display-mode` (view → host): ask for another display mode.
    RequestDisplayMode, "ui/request-display-mode", DisplayModeParams, DisplayModeParams
);
request!(
    /// `ping` (either way).
    Ping, "ping", RequestParams, JsonObject
);

/// Params of `ui/initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeParams {
    /// The view's protocol version.
    #[serde(default)]
    pub protocol_version: String,
    /// Who the view is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_info: Option<Implementation>,
    /// What the view can do (`McpUiAppCapabilities`), kept as sent.
    #[serde(default)]
    pub app_capabilities: JsonObject,
}

/// Result of `ui/initialize` (`McpUiInitializeResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InitializeResult {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol_version: String,
    /// Who the host is.
    pub host_info: Implementation,
    /// What the host does for the view.
    pub host_capabilities: HostCapabilities,
    /// Where and how the view is shown.
    pub host_context: HostContext,
}

/// An empty object: a capability present without settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Supported {}

/// What the host does for the view (`McpUiHostCapabilities`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct HostCapabilities {
    /// It opens links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_links: Option<Supported>,
    /// It proxies `tools/call` to the view's server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tools: Option<JsonObject>,
    /// It proxies `resources/read` to the view's server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_resources: Option<JsonObject>,
    /// It accepts log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Supported>,
    /// The sandbox it applies: what of the view's declared CSP and permissions it granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
}

/// The sandbox a host applies to a view.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Sandbox {
    /// The permissions granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<Permissions>,
    /// The origins approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<Csp>,
}

/// Where and how the view is shown (`McpUiHostContext`); members this type does not name are
/// kept in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostContext {
    /// The tool call that opened the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_info: Option<ToolInfo>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// `inline`, `fullscreen` or `pip`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_mode: Option<String>,
    /// The display modes the host supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_display_modes: Option<Vec<String>>,
    /// BCP 47 language tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// IANA time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// `web`, `desktop` or `mobile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// The other members (styles, container dimensions, …).
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The tool call that opened a view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolInfo {
    /// The id of the `tools/call` request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The tool's definition.
    pub tool: Tool,
}

impl ToolInfo {
    /// The call `id` of `tool`.
    pub fn new(id: Option<RequestId>, tool: Tool) -> ToolInfo {
        ToolInfo { id, tool }
    }
}

/// Params of `ui/notifications/tool-input` and `…-partial`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolInputParams {
    /// The tool call's arguments.
    pub arguments: JsonObject,
}

/// Params of `ui/notifications/tool-cancelled` and `ui/resource-teardown`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCancelledParams {
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Params of `ui/notifications/size-changed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SizeChangedParams {
    /// Width in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<f64>,
    /// Height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<f64>,
}

/// Params of `ui/open-link`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OpenLinkParams {
    /// The URL.
    pub url: String,
}

/// Params and result of `ui/request-display-mode`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DisplayModeParams {
    /// `inline`, `fullscreen` or `pip`.
    pub mode: String,
}
