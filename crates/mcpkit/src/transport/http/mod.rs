//! Streamable HTTP (spec: `basic/transports` "Streamable HTTP"), the client side, and the
//! header names both sides use. The server side is the server's HTTP front end,
//! `server::http`.
//!
//! - [`client`]: the client side: Streamable HTTP, falling back to HTTP+SSE.

#[cfg(feature = "http-client")]
pub mod client;

/// `Mcp-Session-Id`.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// `Last-Event-ID`.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";
