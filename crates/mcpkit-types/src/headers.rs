//! The HTTP headers that mirror a 2026-07-28 request's body (spec: 2026-07-28
//! `basic/transports/streamable-http` "Request Metadata"): `Mcp-Method`, `Mcp-Name`, and the
//! `Mcp-Param-{Name}` headers of tool parameters annotated with `x-mcp-header`, with the
//! `=?base64?…?=` form for values that are not plain header text. Pure functions, shared by the
//! client (which sends them) and the server (which checks them).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{Map, Value};

/// `Mcp-Session-Id`: the handshake-era session (spec: `basic/transports` "Session Management").
pub const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`: the revision in use (spec: `basic/transports` "Protocol Version
/// Header").
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Last-Event-ID`: where a resumed SSE stream picks up (spec: `basic/transports` "Resumability
/// and Redelivery").
pub const LAST_EVENT_ID: &str = "last-event-id";
/// `Mcp-Method`: the request's method.
pub const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name`: `params.name` (tools/call, prompts/get), `params.uri` (resources/read) or
/// `params.taskId` (the Tasks extension's `tasks/get`, `tasks/update`, `tasks/cancel`).
pub const MCP_NAME: &str = "mcp-name";
/// Prefix of the headers mirroring annotated tool parameters.
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// The schema keyword that marks a tool parameter for mirroring.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// The body member `Mcp-Name` mirrors for `method`, if any.
pub fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // SEP-2663 "Streamable HTTP: Routing Headers".
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// The JSON type of a mirrored parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"` (compared numerically).
    Integer,
    /// `"type": "boolean"` (`true` / `false`).
    Boolean,
}

/// One tool parameter mirrored into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The `x-mcp-header` value: the header is `Mcp-Param-{name}`.
    pub name: String,
    /// The chain of `properties` keys from the schema root to the parameter.
    pub path: Vec<String>,
    /// Its type.
    pub kind: ParamKind,
}

impl HeaderParam {
    /// The header name, lower-cased (`mcp-param-region`).
    pub fn header(&self) -> String {
        format!("{MCP_PARAM_PREFIX}{}", self.name.to_ascii_lowercase())
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn count_annotations(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key(X_MCP_HEADER)) + m.values().map(count_annotations).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

fn collect(schema: &Map<String, Value>, path: &mut Vec<String>, out: &mut Vec<HeaderParam>) -> Result<(), String> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (key, prop) in props {
        let Value::Object(prop) = prop else { continue };
        path.push(key.clone());
        if let Some(name) = prop.get(X_MCP_HEADER) {
            let Some(name) = name.as_str() else {
                return Err(format!("x-mcp-header of {:?} is not a string", path.join(".")));
            };
            if name.is_empty() || !name.chars().all(is_tchar) {
                return Err(format!("x-mcp-header {name:?} is not a valid header name token"));
            }
            let kind = match prop.get("type").and_then(Value::as_str) {
                Some("string") => ParamKind::String,
                Some("integer") => ParamKind::Integer,
                Some("boolean") => ParamKind::Boolean,
                other => {
                    return Err(format!(
                        "x-mcp-header {name:?} is on a parameter of type {other:?}; only string, integer and boolean may be mirrored"
                    ))
                }
            };
            if out.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
                return Err(format!("x-mcp-header {name:?} is used twice"));
            }
            out.push(HeaderParam {
                name: name.to_owned(),
                path: path.clone(),
                kind,
            });
        }
        collect(prop, path, out)?;
        path.pop();
    }
    Ok(())
}

/// The mirrored parameters of a tool's `inputSchema`. An `Err` names why the annotations are
/// invalid (a client must then leave the tool out of its list).
pub fn header_params(schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    collect(schema, &mut Vec::new(), &mut out)?;
    let total = count_annotations(&Value::Object(schema.clone()));
    if total != out.len() {
        return Err("x-mcp-header is only allowed on parameters reached through `properties` alone".into());
    }
    Ok(out)
}

/// The value at `path` in the call's arguments, when present and not null.
pub fn value_at<'a>(arguments: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut v = arguments;
    for key in path {
        v = v.as_object()?.get(key)?;
    }
    (!v.is_null()).then_some(v)
}

/// Integers must stay within JavaScript's safe range.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// A parameter value as header text (before encoding), or `None` when its type is wrong.
pub fn param_text(value: &Value, kind: ParamKind) -> Option<String> {
    match (kind, value) {
        (ParamKind::String, Value::String(s)) => Some(s.clone()),
        (ParamKind::Integer, Value::Number(n)) => {
            let i = n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))?;
            // `unsigned_abs`: `i64::MIN.abs()` overflows.
            (i.unsigned_abs() <= MAX_SAFE_INTEGER.unsigned_abs()).then(|| i.to_string())
        }
        (ParamKind::Boolean, Value::Bool(b)) => Some(b.to_string()),
        _ => None,
    }
}

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Encode header text: as is when it is plain visible ASCII without surrounding whitespace,
/// otherwise (or when it looks like the sentinel form) as `=?base64?…?=`.
pub fn encode_value(text: &str) -> String {
    let visible = text
        .chars()
        .all(|c| c == ' ' || c == '\t' || ('\x21'..='\x7e').contains(&c));
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    let looks_encoded = text.starts_with(SENTINEL_START) && text.ends_with(SENTINEL_END);
    let plain = visible && !padded && !looks_encoded;
    if plain {
        text.to_owned()
    } else {
        format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(text.as_bytes()))
    }
}

/// Decode a received header value (surrounding whitespace ignored). `Err` when the sentinel
/// form holds invalid Base64 or non-UTF-8 bytes.
pub fn decode_value(header: &str) -> Result<String, String> {
    let h = header.trim_matches([' ', '\t']);
    match h
        .strip_prefix(SENTINEL_START)
        .and_then(|r| r.strip_suffix(SENTINEL_END))
    {
        Some(b64) => {
            let bytes = STANDARD
                .decode(b64)
                .map_err(|e| format!("invalid Base64 in header value: {e}"))?;
            String::from_utf8(bytes).map_err(|_| "Base64 header value is not UTF-8".to_owned())
        }
        None => Ok(h.to_owned()),
    }
}

/// Whether a decoded header value stands for the body value (integers compared numerically).
pub fn matches(decoded: &str, body: &Value, kind: ParamKind) -> bool {
    match kind {
        ParamKind::Integer => {
            let h = decoded.parse::<f64>().ok();
            let b = body.as_f64();
            matches!((h, b), (Some(h), Some(b)) if h == b)
        }
        _ => param_text(body, kind).is_some_and(|t| t == decoded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encoding_follows_the_spec_table() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(decode_value(" =?base64?SGVsbG8=?= ").unwrap(), "Hello");
        assert!(decode_value("=?base64?SGVsbG8?=").is_err(), "missing padding");
        assert!(decode_value("=?base64?SGV$bG8=?=").is_err(), "bad alphabet");
        assert_eq!(decode_value("plain").unwrap(), "plain");
    }

    #[test]
    fn annotations_are_collected_and_checked() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "nested":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
            "q":{"type":"string"}}});
        let p = header_params(schema.as_object().unwrap()).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].header(), "mcp-param-region");
        assert_eq!(p[1].path, vec!["nested".to_owned(), "n".to_owned()]);
        let bad = json!({"properties":{"a":{"type":"number","x-mcp-header":"A"}}});
        assert!(header_params(bad.as_object().unwrap()).is_err());
        let dup =
            json!({"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}});
        assert!(header_params(dup.as_object().unwrap()).is_err());
        let unreachable = json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}});
        assert!(header_params(unreachable.as_object().unwrap()).is_err());
        assert!(matches("42.0", &json!(42), ParamKind::Integer));
        assert!(!matches("43", &json!(42), ParamKind::Integer));
    }
}
