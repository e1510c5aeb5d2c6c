//! The Skills extension, `io.modelcontextprotocol/skills` (SEP-2640).

/// The extension's identifier.
pub const ID: &str = "io.modelcontextprotocol/skills";
