//! The Tasks extension, `io.modelcontextprotocol/tasks` (SEP-2663).

/// The extension's identifier.
pub const ID: &str = "io.modelcontextprotocol/tasks";
