//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`, revision 2026-01-26):
//! interactive HTML views that hosts render for a tool's results.
//!
//! - Server side (feature `server`): link a tool to its view with [`ToolDef::ui`](crate::ToolDef::ui)
//!   and choose who may call it with [`ToolDef::visibility`](crate::ToolDef::visibility); serve
//!   the view as a [`UiResource`]; ask [`RequestContext::client_supports_apps`](crate::RequestContext::client_supports_apps).
//!   The [`Apps`] extension is then served by itself.
//! - Host side (feature `client`): [`host`], the bridge between a view and the server, which
//!   enforces visibility and builds the view's sandbox policy.
//!
//! See `guide/apps.md`.

#[cfg(feature = "client")]
pub mod host;
mod meta;
#[cfg(feature = "server")]
mod server;

pub use meta::{settings, visible_to_model, Csp, Permission, Permissions, ToolUi, ViewMeta, Visibility};
pub use meta::{EXTENSION_ID, LEGACY_RESOURCE_URI_KEY, MIME_TYPE, URI_SCHEME};
#[cfg(feature = "server")]
pub use server::{Apps, UiResource};
