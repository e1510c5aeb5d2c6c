//! JSON-RPC 2.0 envelope with MCP's rules (spec: `basic/index` "Messages").
//!
//! Parsing is two-stage. Stage 1 ([`parse`]) reads a frame into a private envelope of borrowed
//! [`RawValue`]s, checks `jsonrpc`, and classifies the message by hand: a request has `id` and
//! `method`, a notification only `method`, a response `id` and exactly one of `result`/`error`.
//! When a frame is not a valid message it salvages the `id` where one can be read, so the error
//! reply still correlates. Stage 2 happens at dispatch, when `params` are deserialized straight
//! into the method's typed parameters.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

/// The only `jsonrpc` value MCP accepts.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, echoed exactly as received (`"1"` and `1` differ).
/// MCP forbids `null` ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("integer request id out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
        }
        d.deserialize_any(V)
    }
}

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
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// A classified incoming message, borrowing from the frame it was read from.
#[derive(Debug)]
pub enum MessageRef<'a> {
    /// A request: answer it.
    Request(RequestRef<'a>),
    /// A notification: never answered.
    Notification(NotificationRef<'a>),
    /// A response to one of our requests.
    Response(ResponseRef<'a>),
}

/// A request borrowed from its frame.
#[derive(Debug)]
pub struct RequestRef<'a> {
    /// The id to echo.
    pub id: RequestId,
    /// The method name.
    pub method: Cow<'a, str>,
    /// The raw params, if any.
    pub params: Option<&'a RawValue>,
}

/// A notification borrowed from its frame.
#[derive(Debug)]
pub struct NotificationRef<'a> {
    /// The method name.
    pub method: Cow<'a, str>,
    /// The raw params, if any.
    pub params: Option<&'a RawValue>,
}

/// A response borrowed from its frame.
#[derive(Debug)]
pub struct ResponseRef<'a> {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The raw result, or the error.
    pub outcome: Result<&'a RawValue, ErrorObject>,
}

/// Why a frame is not a message, and what (if anything) to answer.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameError {
    /// Not JSON at all: answer -32700 with `id: null`.
    Parse(String),
    /// JSON, but not a valid message: answer -32600, with the id when one could be read.
    Invalid {
        /// The salvaged id, if any.
        id: Option<RequestId>,
        /// What is wrong, for the error message.
        reason: &'static str,
    },
    /// A malformed response (e.g. both `result` and `error`): never answered, only logged.
    Ignore(&'static str),
}

impl FrameError {
    /// The error response to send for this frame, if any.
    pub fn reply(&self) -> Option<(Option<RequestId>, ErrorObject)> {
        match self {
            FrameError::Parse(m) => Some((None, ErrorObject::parse_error(format!("Parse error: {m}")))),
            FrameError::Invalid { id, reason } => Some((
                id.clone(),
                ErrorObject::invalid_request(format!("Invalid request: {reason}")),
            )),
            FrameError::Ignore(_) => None,
        }
    }
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The private stage-1 envelope: every member borrowed and untyped, so a wrong type in one
/// member never hides the others (an explicit `null` is kept as `Some("null")`).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

fn read_id(raw: Option<&RawValue>) -> Option<RequestId> {
    serde_json::from_str(raw?.get()).ok()
}

fn read_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()
}

/// Stage 1: classify one frame (one JSON text) without typing its params or result.
pub fn parse(frame: &[u8]) -> Result<MessageRef<'_>, FrameError> {
    let text = std::str::from_utf8(frame).map_err(|e| FrameError::Parse(format!("invalid UTF-8: {e}")))?;
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        // Derived struct deserializers accept arrays positionally: reject anything that is not
        // an object (batches are not allowed since 2025-06-18) before serde sees it.
        return match serde_json::from_str::<de::IgnoredAny>(text) {
            Ok(_) if trimmed.starts_with('[') => Err(FrameError::Invalid {
                id: None,
                reason: "batches are not supported",
            }),
            Ok(_) => Err(FrameError::Invalid {
                id: None,
                reason: "a message must be a JSON object",
            }),
            Err(e) => Err(FrameError::Parse(e.to_string())),
        };
    }
    let env: Envelope<'_> = match serde_json::from_str(text) {
        Ok(env) => env,
        Err(e) if e.is_data() => {
            // Valid JSON, bad shape (e.g. a duplicate member): answer with the id if readable.
            let id = serde_json::from_str::<IdOnly<'_>>(text)
                .ok()
                .and_then(|o| read_id(o.id));
            return Err(FrameError::Invalid {
                id,
                reason: "malformed message object",
            });
        }
        Err(e) => return Err(FrameError::Parse(e.to_string())),
    };
    let id_raw = env.id;
    let id = read_id(id_raw);
    let invalid = |reason| {
        Err(FrameError::Invalid {
            id: read_id(id_raw),
            reason,
        })
    };
    match env.jsonrpc.map(|v| v.get()) {
        Some("\"2.0\"") => {}
        Some(v) if read_str_eq(v, JSONRPC_VERSION) => {}
        _ => return invalid("\"jsonrpc\" must be \"2.0\""),
    }
    if let Some(method) = env.method {
        let Some(method) = read_str(method) else {
            return invalid("\"method\" must be a string");
        };
        if env.result.is_some() || env.error.is_some() {
            return invalid("a request cannot carry \"result\" or \"error\"");
        }
        if let Some(p) = env.params {
            // MCP params are always objects (JSON-RPC's by-position arrays are not used).
            if p.get().as_bytes().first() != Some(&b'{') {
                return invalid("\"params\" must be an object");
            }
        }
        return match id_raw {
            None => Ok(MessageRef::Notification(NotificationRef {
                method,
                params: env.params,
            })),
            Some(raw) if raw.get() == "null" => invalid("request ids must not be null"),
            Some(_) => match id {
                Some(id) => Ok(MessageRef::Request(RequestRef {
                    id,
                    method,
                    params: env.params,
                })),
                None => invalid("\"id\" must be a string or an integer"),
            },
        };
    }
    match (env.result, env.error) {
        (Some(_), Some(_)) => Err(FrameError::Ignore("response has both \"result\" and \"error\"")),
        (None, None) => invalid("missing \"method\""),
        (result, error) => {
            let Some(id) = id else {
                return Err(FrameError::Ignore("response without a usable id"));
            };
            let outcome = match (result, error) {
                (Some(r), _) => Ok(r),
                (_, Some(e)) => Err(serde_json::from_str::<ErrorObject>(e.get())
                    .unwrap_or_else(|_| ErrorObject::internal(format!("malformed error object: {}", e.get())))),
                (None, None) => unreachable_outcome(),
            };
            Ok(MessageRef::Response(ResponseRef { id, outcome }))
        }
    }
}

fn read_str_eq(raw: &str, expected: &str) -> bool {
    serde_json::from_str::<Cow<'_, str>>(raw).is_ok_and(|s| s == expected)
}

#[allow(clippy::unreachable)]
fn unreachable_outcome() -> ! {
    unreachable!("the (None, None) case is handled above")
}

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

/// An owned message, for transports and tests that keep messages around.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Box<RawValue>>,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Box<RawValue>>,
    },
    /// A response.
    Response {
        /// The id answered.
        id: RequestId,
        /// The result or error.
        outcome: Result<Box<RawValue>, ErrorObject>,
    },
}

impl MessageRef<'_> {
    /// Copy into an owned [`Message`].
    pub fn to_owned_message(&self) -> Message {
        match self {
            MessageRef::Request(r) => Message::Request {
                id: r.id.clone(),
                method: r.method.to_string(),
                params: r.params.map(ToOwned::to_owned),
            },
            MessageRef::Notification(n) => Message::Notification {
                method: n.method.to_string(),
                params: n.params.map(ToOwned::to_owned),
            },
            MessageRef::Response(r) => Message::Response {
                id: r.id.clone(),
                outcome: r.outcome.clone().map(ToOwned::to_owned),
            },
        }
    }
}

impl Message {
    /// Serialize to one JSON text.
    pub fn to_json(&self) -> String {
        let r = match self {
            Message::Request { id, method, params } => {
                serde_json::to_string(&OutgoingRequest::new(id, method, params.as_deref()))
            }
            Message::Notification { method, params } => {
                serde_json::to_string(&OutgoingNotification::new(method, params.as_deref()))
            }
            Message::Response { id, outcome: Ok(r) } => serde_json::to_string(&OutgoingResult::new(id, &**r)),
            Message::Response { id, outcome: Err(e) } => serde_json::to_string(&OutgoingError::new(Some(id), e)),
        };
        // Serializing these borrowed shapes cannot fail: every member is already valid JSON.
        r.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid_id(frame: &str) -> Option<RequestId> {
        match parse(frame.as_bytes()) {
            Err(FrameError::Invalid { id, .. }) => id,
            other => panic!("expected Invalid for {frame}, got {other:?}"),
        }
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let m = parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert!(
            matches!(m, MessageRef::Request(RequestRef { id: RequestId::Number(7), ref method, params: None }) if method == "ping")
        );
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#).unwrap();
        assert!(matches!(m, MessageRef::Notification(_)));
        let m = parse(br#"{"jsonrpc":"2.0","id":"a","result":{"x":1}}"#).unwrap();
        match m {
            MessageRef::Response(r) => {
                assert_eq!(r.id, RequestId::from("a"));
                assert_eq!(r.outcome.unwrap().get(), r#"{"x":1}"#);
            }
            _ => panic!(),
        }
        let m = parse(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope","data":[1]}}"#).unwrap();
        match m {
            MessageRef::Response(r) => assert_eq!(r.outcome.unwrap_err().code, ErrorCode::METHOD_NOT_FOUND),
            _ => panic!(),
        }
    }

    #[test]
    fn big_integer_ids_are_exact_and_string_ids_differ() {
        let m = parse(br#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#).unwrap();
        let MessageRef::Request(r) = m else { panic!() };
        assert_eq!(r.id, RequestId::Number(9007199254740993));
        assert_eq!(serde_json::to_string(&r.id).unwrap(), "9007199254740993");
        assert_ne!(RequestId::from("1"), RequestId::from(1));
    }

    #[test]
    fn bad_frames_salvage_the_id() {
        assert!(matches!(parse(b"{not json"), Err(FrameError::Parse(_))));
        assert!(matches!(parse(b"\xff\xfe"), Err(FrameError::Parse(_))));
        assert_eq!(
            invalid_id(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
            Some(RequestId::Number(3))
        );
        assert_eq!(invalid_id(r#"{"id":"k","method":"x"}"#), Some(RequestId::from("k")));
        assert_eq!(invalid_id(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#), None);
        assert_eq!(invalid_id(r#"{}"#), None);
        assert_eq!(invalid_id(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), None);
        assert_eq!(
            invalid_id(r#"{"jsonrpc":"2.0","id":4,"method":7}"#),
            Some(RequestId::Number(4))
        );
        assert_eq!(
            invalid_id(r#"{"jsonrpc":"2.0","id":5,"method":"x","params":3}"#),
            Some(RequestId::Number(5))
        );
        assert_eq!(invalid_id(r#"{"jsonrpc":"2.0","id":6,"id":6,"method":"x"}"#), None);
        assert_eq!(
            invalid_id(r#"{"jsonrpc":"2.0","id":8,"method":"x","method":"y"}"#),
            Some(RequestId::Number(8))
        );
        assert_eq!(invalid_id(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#), None);
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#),
            Err(FrameError::Ignore(_))
        ));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"#);
        s.push_str(&"[".repeat(200_000));
        assert!(parse(s.as_bytes()).is_err());
        let deep = "[".repeat(200_000);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn outgoing_frames_are_exact() {
        let id = RequestId::Number(1);
        let p = serde_json::json!({"a": 1});
        assert_eq!(
            serde_json::to_string(&OutgoingRequest::new(&id, "tools/list", Some(&p))).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1}}"#
        );
        let e = ErrorObject::method_not_found("x");
        assert_eq!(
            serde_json::to_string(&OutgoingError::new(None, &e)).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: x"}}"#
        );
    }
}
