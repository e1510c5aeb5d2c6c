//! The error object of a JSON-RPC response and its codes (spec: `basic/index` "Responses").

use super::*;

/// A JSON-RPC error code. A newtype rather than an enum so unknown codes round-trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// Resource not found (2025-11-25 and earlier; `-32602` with `data.uri` from 2026-07-28).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// A URL-mode elicitation must complete first (2025-11-25, `URLElicitationRequiredError`).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// An HTTP header disagrees with the body (2026-07-28, `HeaderMismatchError`).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// The request was cancelled (local use: never sent on the wire by mcpkit).
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// The request timed out (local use, as in other SDKs).
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// Too many requests: a rate or concurrency limit of the server refused this one; `data`
    /// carries `retryAfterMs`. mcpkit's code, in the range JSON-RPC leaves to servers; over
    /// HTTP it comes with status 429 and `Retry-After`.
    pub const RATE_LIMITED: ErrorCode = ErrorCode(-32029);
    /// The caller's token lacks scopes an item requires; `data.requiredScopes` names them.
    /// mcpkit's code; over HTTP it comes with status 403 and, behind an OAuth resource layer,
    /// the step-up `WWW-Authenticate` challenge.
    pub const INSUFFICIENT_SCOPE: ErrorCode = ErrorCode(-32003);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Additional information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// Attach `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    /// -32700.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, message)
    }
    /// -32600.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }
    /// -32601 naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
    /// -32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }
    /// -32603.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }
    /// "Resource not found" with `data.uri` (spec: `server/resources` "Error Handling"): what a
    /// resource or template handler returns for a URI it has nothing at. The code is -32002,
    /// which 2025-11-25 and earlier use; a 2026-07-28 server must answer -32602 instead, and
    /// mcpkit's server does so for a handler's -32002 on a request of that revision.
    pub fn resource_not_found(uri: &str) -> Self {
        let mut data = serde_json::Map::new();
        data.insert("uri".into(), Value::String(uri.to_owned()));
        Self::new(ErrorCode::RESOURCE_NOT_FOUND, format!("Resource not found: {uri}")).with_data(Value::Object(data))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}
