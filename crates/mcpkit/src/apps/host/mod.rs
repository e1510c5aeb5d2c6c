//! The host side of MCP Apps: what a Rust host (a webview, a browser page served by the host)
//! needs to render a server's views.
//!
//! - [`AppBridge`]: the host end of one view's postMessage JSON-RPC. Feed it each message the
//!   view posts and post back what it hands you; it answers `ui/initialize`, proxies the
//!   view's `tools/call` and `resources/read` to the view's own server through a [`Client`](crate::Client)
//!   (only tools whose visibility includes `app`), and sends the tool's input and result.
//! - [`content_security_policy`] and [`allow_attribute`]: the iframe's sandbox from the view's
//!   metadata; [`model_tools`]: the tools to give the model.

mod bridge;
pub mod messages;
mod sandbox;

pub use bridge::{AppBridge, Outlet, View, ViewEvent};
pub use sandbox::{allow_attribute, content_security_policy, model_tools};
