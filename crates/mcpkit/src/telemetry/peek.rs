//! What a span needs from a message, read only when a span or a metric is recorded: the tool or
//! prompt name, the resource URI, the trace context and the stateless-era protocol version in
//! `_meta`, and a result's `isError`. Borrowed where the JSON has no escapes; every other
//! member (a tool's arguments, a result's content) is skipped, never built.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The members of `params` telemetry reads.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Params<'a> {
    #[serde(borrow, default)]
    pub(crate) name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(crate) uri: Option<Cow<'a, str>>,
    #[serde(rename = "_meta", borrow, default)]
    pub(crate) meta: Option<Meta<'a>>,
}

/// The members of `params._meta` telemetry reads: the W3C trace context keys, unprefixed as
/// SEP-414 has them, and the 2026-07-28 protocol version.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(not(feature = "otel"), allow(dead_code, reason = "read by the trace context"))]
pub(crate) struct Meta<'a> {
    #[serde(borrow, default, deserialize_with = "text")]
    pub(crate) traceparent: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub(crate) tracestate: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "text")]
    pub(crate) baggage: Option<Cow<'a, str>>,
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        borrow,
        default,
        deserialize_with = "text"
    )]
    pub(crate) protocol_version: Option<Cow<'a, str>>,
}

/// A string member, or `None` for a member of any other type (a `traceparent` of `42` is
/// ignored like a malformed one; it does not hide the rest of the message from the span).
fn text<'de, 'a, D>(d: D) -> Result<Option<Cow<'a, str>>, D::Error>
where
    D: serde::Deserializer<'de>,
    'de: 'a,
{
    let raw: &'a RawValue = Deserialize::deserialize(d)?;
    let json = raw.get();
    if !json.starts_with('"') {
        return Ok(None);
    }
    // Borrowed unless the string has escapes.
    Ok(serde_json::from_str::<&'a str>(json)
        .map(Cow::Borrowed)
        .or_else(|_| serde_json::from_str::<String>(json).map(Cow::Owned))
        .ok())
}

impl<'a> Params<'a> {
    /// The members of `raw`; none when it is absent or not an object (such params are refused
    /// by the handler, not here).
    pub(crate) fn of(raw: Option<&'a RawValue>) -> Params<'a> {
        raw.and_then(|r| serde_json::from_str(r.get()).ok()).unwrap_or_default()
    }

    /// The members of the `params` of a whole serialized request or notification.
    pub(crate) fn of_frame(frame: &'a [u8]) -> Params<'a> {
        #[derive(Deserialize)]
        struct Frame<'a> {
            #[serde(borrow, default)]
            params: Option<&'a RawValue>,
        }
        let params = serde_json::from_slice::<Frame<'a>>(frame).ok().and_then(|f| f.params);
        Params::of(params)
    }
}

/// Whether a `tools/call` result says `isError: true`.
pub(crate) fn is_tool_error(result: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct ToolResult {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<ToolResult>(result.get()).is_ok_and(|r| r.is_error == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpkit_types::method::{CallTool, Method};

    #[test]
    fn reads_name_meta_and_is_error_and_skips_the_rest() {
        let raw = RawValue::from_string(
            r#"{"name":"echo","arguments":{"big":[1,2,3]},"_meta":{"traceparent":"00-x","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#.into(),
        )
        .unwrap_or_else(|_| unreachable!());
        let p = Params::of(Some(&raw));
        assert_eq!(p.name.as_deref(), Some("echo"));
        let meta = p.meta.unwrap_or_default();
        assert_eq!(meta.traceparent.as_deref(), Some("00-x"));
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{}","params":{{"name":"add"}}}}"#,
            CallTool::NAME
        );
        assert_eq!(Params::of_frame(frame.as_bytes()).name.as_deref(), Some("add"));
        let err = RawValue::from_string(r#"{"content":[],"isError":true}"#.into()).unwrap_or_else(|_| unreachable!());
        assert!(is_tool_error(&err));
        let ok = RawValue::from_string(r#"{"content":[{"type":"text","text":"isError"}]}"#.into())
            .unwrap_or_else(|_| unreachable!());
        assert!(!is_tool_error(&ok));
    }
}
