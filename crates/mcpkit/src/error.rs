//! The local error type: what a call through mcpkit can fail with. Wire errors from the peer are
//! kept whole in [`Error::Rpc`], separate from transport failures.

use std::sync::Arc;
use std::time::Duration;

use mcpkit_types::ErrorObject;

/// Everything a call or a connection can fail with.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error.
    #[error("the peer answered with an error: {0}")]
    Rpc(ErrorObject),
    /// The connection is closed; the request can no longer be answered.
    #[error("the connection is closed")]
    ConnectionClosed,
    /// Reading or writing the transport failed.
    #[error("transport error: {0}")]
    Transport(Arc<std::io::Error>),
    /// No answer within the configured timeout (a `notifications/cancelled` was sent).
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The peer's answer did not have the shape the method's schema requires.
    #[error("invalid response from the peer: {0}")]
    InvalidResponse(String),
    /// The peer broke the protocol (for example, an unsupported negotiated version).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server chose a protocol version this client does not speak.
    #[error("the server chose protocol version {0:?}, which this client does not support")]
    UnsupportedVersion(String),
    /// The request needs a capability the peer did not declare.
    #[error("the peer did not declare the {0} capability")]
    MissingCapability(&'static str),
    /// The request belongs to an extension (or one of its settings) the server did not declare.
    #[error("the server did not declare {0}")]
    MissingExtension(String),
    /// What the server sent for a skill fails verification against the skill's entry (Skills
    /// extension, "Integrity and Verification"): the content must not be used.
    #[error("skill verification failed: {0}")]
    Skill(mcpkit_types::ext::skills::format::VerifyError),
    /// A tool's `structuredContent` did not match its `outputSchema`.
    #[error("structured content of tool {tool:?} does not match its output schema: {reason}")]
    OutputSchema {
        /// The tool.
        tool: String,
        /// The first validation error.
        reason: String,
    },
    /// A value could not be serialized to JSON.
    #[error("could not serialize: {0}")]
    Serialize(String),
    /// Stateless era: the client has not answered this input request yet. The handler should
    /// return (with `?`); the client gets an `input_required` result and retries with the answer.
    #[error("waiting for the client's input (the request ends with input_required and is retried)")]
    InputRequired,
    /// The type given to [`RequestContext::elicit_as`](crate::server::RequestContext::elicit_as)
    /// cannot be an elicitation form (spec: `client/elicitation`, `requestedSchema`); the
    /// message names the field. Nothing was sent.
    #[error("{0}")]
    ElicitationForm(String),
}

impl Error {
    /// The JSON-RPC error, if the peer answered with one.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the client's transport failed the request itself rather than the peer
    /// answering it: the HTTP client transport answers a request it could not deliver, or
    /// whose answer it could not read, with an [`Error::Rpc`] of its own (-32603), marked so
    /// in its `data` (see [`transport_failure`]). A proxy tells its callers the server is
    /// unreachable instead of passing that error on.
    pub fn is_transport_failure(&self) -> bool {
        self.rpc().is_some_and(is_transport_made)
    }
}

/// The key of the `data` member the client's transport puts in an error it made itself.
const TRANSPORT_MARK: &str = "mcpkit/transportFailure";

/// The -32603 a client transport answers a request with when it failed the request itself
/// (not delivered, or its answer unreadable), marked for [`Error::is_transport_failure`].
#[cfg(feature = "http-client")]
pub(crate) fn transport_failure(message: &str) -> ErrorObject {
    ErrorObject::internal(message).with_data(serde_json::json!({ TRANSPORT_MARK: true }))
}

fn is_transport_made(e: &ErrorObject) -> bool {
    e.data
        .as_ref()
        .and_then(|d| d.get(TRANSPORT_MARK))
        .is_some_and(|m| m == &serde_json::Value::Bool(true))
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Transport(Arc::new(e))
    }
}

impl From<ErrorObject> for Error {
    fn from(e: ErrorObject) -> Self {
        Error::Rpc(e)
    }
}

/// A handler error as a JSON-RPC error: the peer's own error kept, a missing client capability
/// as MissingRequiredClientCapability (-32021) naming it, anything else internal.
impl From<Error> for ErrorObject {
    fn from(e: Error) -> Self {
        match e {
            Error::Rpc(e) => e,
            Error::MissingCapability(cap) => missing_capability(cap),
            other => ErrorObject::internal(other.to_string()),
        }
    }
}

/// Spec: 2026-07-28 `MissingRequiredClientCapabilityError`; `cap` may be dotted
/// (`elicitation.url`).
pub(crate) fn missing_capability(cap: &str) -> ErrorObject {
    let mut required = serde_json::Value::Object(Default::default());
    for part in cap.split('.').rev() {
        let mut m = serde_json::Map::new();
        m.insert(part.to_owned(), required);
        required = serde_json::Value::Object(m);
    }
    ErrorObject::new(
        mcpkit_types::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("This request needs the client's {cap} capability, which it did not declare"),
    )
    .with_data(serde_json::json!({ "requiredCapabilities": required }))
}

/// Convenience alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(feature = "client")]
pub(crate) fn unsupported(v: &str) -> Error {
    match v.parse::<mcpkit_types::ProtocolVersion>() {
        Ok(v) => Error::UnsupportedVersion(v.to_string()),
        Err(_) => Error::UnsupportedVersion(v.to_owned()),
    }
}
