//! Stage 1: a frame read into borrowed parts, checked and classified, the id salvaged from a
//! frame that is no valid message.

use super::*;

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
