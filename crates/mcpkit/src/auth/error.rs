//! The error of every authorization step.

/// Why authorization failed. Each message names the document, URL or parameter at fault.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A metadata document (RFC 9728 protected-resource metadata, RFC 8414 authorization-server
    /// metadata) could not be found, read or trusted.
    #[error("authorization metadata: {0}")]
    Metadata(String),
    /// The protected-resource metadata names a different resource than the MCP server.
    #[error("the protected-resource metadata is for resource {found:?}, not for the MCP server {expected:?}")]
    ResourceMismatch {
        /// The MCP server URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// The authorization-server metadata names a different issuer than the one it was fetched
    /// for (RFC 8414 section 3.3).
    #[error("the authorization server metadata has issuer {found:?}, but it was fetched for issuer {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata URL was built from.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// Client registration failed or is impossible.
    #[error("client registration: {0}")]
    Registration(String),
    /// The authorization response was refused (error from the authorization server, `state` or
    /// `iss` mismatch, no code).
    #[error("authorization response: {0}")]
    Authorization(String),
    /// The token endpoint refused the request or sent an unusable response.
    #[error("token endpoint: {0}")]
    Token(String),
    /// The server keeps asking for more scope than step-up authorization obtained.
    #[error("step-up authorization gave up after {0} attempts (the server still answers insufficient_scope)")]
    StepUpLimit(u32),
    /// The server refused the request for a reason authorization cannot fix.
    #[error("the MCP server refused the request: {0}")]
    Forbidden(String),
    /// A network failure talking to the authorization server or metadata endpoints.
    #[error("HTTP: {0}")]
    Http(String),
    /// The client is configured in a way that cannot work (for example, no way to register).
    #[error("configuration: {0}")]
    Config(String),
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
}
