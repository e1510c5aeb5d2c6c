//! Streamable HTTP (spec: `basic/transports` "Streamable HTTP").
//!
//! - [`server`]: the server side as an axum `Router` (a `tower::Service`) to mount anywhere,
//!   plus a one-call [`server::serve`].
//! - [`event_store`]: where SSE events are kept for `Last-Event-ID` resumption.
//! - [`legacy_server`]: the deprecated 2024-11-05 HTTP+SSE endpoints, to mount beside it.
//! - [`client`]: the client side: Streamable HTTP, falling back to HTTP+SSE.

#[cfg(feature = "http-client")]
pub mod client;
#[cfg(feature = "http-server")]
pub mod event_store;
#[cfg(feature = "http-server")]
pub mod legacy_server;
#[cfg(feature = "http-server")]
mod modern;
#[cfg(feature = "http-server")]
mod security;
#[cfg(feature = "http-server")]
pub mod server;
#[cfg(feature = "http-server")]
mod session;

/// `Mcp-Session-Id`.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// `Last-Event-ID`.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";
