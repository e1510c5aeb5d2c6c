//! Messages to send, serialized straight from borrowed parts.

use super::*;

/// An outgoing request, serialized without building a `Value`.
#[derive(Serialize)]
pub struct OutgoingRequest<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    /// The request id.
    pub id: &'a RequestId,
    /// The method.
    pub method: &'a str,
    /// The params.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<&'a P>,
}

impl<'a, P: Serialize + ?Sized> OutgoingRequest<'a, P> {
    /// A request frame.
    pub fn new(id: &'a RequestId, method: &'a str, params: Option<&'a P>) -> Self {
        OutgoingRequest {
            jsonrpc: JSONRPC_VERSION,
            id,
            method,
            params,
        }
    }
}

/// An outgoing notification.
#[derive(Serialize)]
pub struct OutgoingNotification<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    /// The method.
    pub method: &'a str,
    /// The params.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<&'a P>,
}

impl<'a, P: Serialize + ?Sized> OutgoingNotification<'a, P> {
    /// A notification frame.
    pub fn new(method: &'a str, params: Option<&'a P>) -> Self {
        OutgoingNotification {
            jsonrpc: JSONRPC_VERSION,
            method,
            params,
        }
    }
}

/// An outgoing success response.
#[derive(Serialize)]
pub struct OutgoingResult<'a, R: Serialize + ?Sized> {
    jsonrpc: &'static str,
    /// The id being answered.
    pub id: &'a RequestId,
    /// The result.
    pub result: &'a R,
}

impl<'a, R: Serialize + ?Sized> OutgoingResult<'a, R> {
    /// A result frame.
    pub fn new(id: &'a RequestId, result: &'a R) -> Self {
        OutgoingResult {
            jsonrpc: JSONRPC_VERSION,
            id,
            result,
        }
    }
}

/// An outgoing error response. `id` is `null` only when none could be read.
#[derive(Serialize)]
pub struct OutgoingError<'a> {
    jsonrpc: &'static str,
    /// The id being answered, or `null`.
    pub id: Option<&'a RequestId>,
    /// The error.
    pub error: &'a ErrorObject,
}

impl<'a> OutgoingError<'a> {
    /// An error frame.
    pub fn new(id: Option<&'a RequestId>, error: &'a ErrorObject) -> Self {
        OutgoingError {
            jsonrpc: JSONRPC_VERSION,
            id,
            error,
        }
    }
}
