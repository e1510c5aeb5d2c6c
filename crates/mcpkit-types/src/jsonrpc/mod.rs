//! JSON-RPC 2.0 envelope with MCP's rules (spec: `basic/index` "Messages").
//!
//! Parsing is two-stage. Stage 1 ([`parse`]) reads a frame into a private envelope of borrowed
//! [`RawValue`]s, checks `jsonrpc`, and classifies the message by hand: a request has `id` and
//! `method`, a notification only `method`, a response `id` and exactly one of `result`/`error`.
//! When a frame is not a valid message it salvages the `id` where one can be read, so the error
//! reply still correlates. Stage 2 happens at dispatch, when `params` are deserialized straight
//! into the method's typed parameters.

mod error;
mod outgoing;
mod parse;

pub use error::{ErrorCode, ErrorObject};
pub use outgoing::{OutgoingError, OutgoingNotification, OutgoingRequest, OutgoingResult};
pub use parse::{parse, FrameError, MessageRef, NotificationRef, RequestRef, ResponseRef};

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
