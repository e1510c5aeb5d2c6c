//! The 2026-07-28 rules of the HTTP endpoint (spec: 2026-07-28 `basic/transports/streamable-http`
//! "Request Metadata", "Server Validation"): the headers that mirror the body must match it,
//! and JSON-RPC errors map to HTTP statuses.

use axum::http::{HeaderMap, StatusCode};
use mcpkit_types::headers::{self, name_member};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::PROTOCOL_VERSION_HEADER;
use crate::server::Server;

/// Whether a POST is a stateless-era request: no session, and a protocol version header that
/// names no handshake-era revision (a version we do not know is answered statelessly too,
/// with UnsupportedProtocolVersion).
pub(crate) fn is_modern(headers: &HeaderMap, has_session: bool) -> bool {
    if has_session {
        return false;
    }
    match headers.get(PROTOCOL_VERSION_HEADER).and_then(|v| v.to_str().ok()) {
        Some(v) => !matches!(v.trim().parse::<ProtocolVersion>(), Ok(v) if v.era() == mcpkit_types::Era::Handshake),
        None => false,
    }
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct ProbeParams {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    uri: Option<Value>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<ProbeMeta>,
}

#[derive(Deserialize, Default)]
struct ProbeMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    protocol_version: Option<Value>,
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ErrorObject> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim_matches([' ', '\t'])))
            .map_err(|_| mismatch(format!("{name} holds characters that are not allowed in a header"))),
    }
}

/// Check the mirrored headers of a request against its body (only requests reach here).
pub(crate) fn check_headers(headers: &HeaderMap, frame: &[u8], server: &Server) -> Result<(), ErrorObject> {
    let probe: Probe<'_> =
        serde_json::from_slice(frame).map_err(|e| ErrorObject::invalid_request(format!("Invalid request: {e}")))?;
    let Some(method) = probe.method.as_deref() else {
        return Ok(());
    };
    let params: ProbeParams = probe
        .params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or_default();

    match header(headers, headers::MCP_METHOD)? {
        None => return Err(mismatch("the Mcp-Method header is required".into())),
        Some(h) if h != method => {
            return Err(mismatch(format!(
                "Mcp-Method header value {h:?} does not match body method {method:?}"
            )))
        }
        Some(_) => {}
    }
    if let (Some(h), Some(Value::String(body))) = (
        header(headers, PROTOCOL_VERSION_HEADER)?,
        params.meta.as_ref().and_then(|m| m.protocol_version.as_ref()),
    ) {
        if h != body {
            return Err(mismatch(format!(
                "MCP-Protocol-Version header {h:?} does not match _meta protocolVersion {body:?}"
            )));
        }
    }
    if let Some(member) = name_member(method) {
        let body = match member {
            "uri" => params.uri.as_ref(),
            _ => params.name.as_ref(),
        };
        if let Some(Value::String(body)) = body {
            let Some(h) = header(headers, headers::MCP_NAME)? else {
                return Err(mismatch(format!("the Mcp-Name header is required for {method}")));
            };
            let decoded = headers::decode_value(h).map_err(|e| mismatch(format!("Mcp-Name: {e}")))?;
            if &decoded != body {
                return Err(mismatch(format!(
                    "Mcp-Name header value {decoded:?} does not match body value {body:?}"
                )));
            }
        }
    }
    if method == "tools/call" {
        if let Some(Value::String(tool)) = &params.name {
            let args = params.arguments.unwrap_or(Value::Null);
            for p in server.tool_header_params(tool) {
                let name = p.header();
                let h = header(headers, &name)?;
                let decoded = h
                    .map(headers::decode_value)
                    .transpose()
                    .map_err(|e| mismatch(format!("Mcp-Param-{}: {e}", p.name)))?;
                match (headers::value_at(&args, &p.path), decoded) {
                    (Some(body), Some(d)) if headers::matches(&d, body, p.kind) => {}
                    (Some(body), Some(d)) => {
                        return Err(mismatch(format!(
                            "Mcp-Param-{} header value {d:?} does not match body value {body}",
                            p.name
                        )))
                    }
                    (Some(_), None) => {
                        return Err(mismatch(format!(
                            "the Mcp-Param-{} header is required when arguments.{} is present",
                            p.name,
                            p.path.join(".")
                        )))
                    }
                    (None, _) => {}
                }
            }
        }
    }
    Ok(())
}

/// The HTTP status of a stateless-era JSON reply: 404 for an unknown method, 400 for a request
/// the server refuses as malformed (spec: 2026-07-28 `basic/index` "_meta",
/// `basic/transports/streamable-http`), 200 otherwise.
pub(crate) fn status_of(reply: &[u8]) -> StatusCode {
    #[derive(Deserialize)]
    struct Reply {
        error: Option<Code>,
    }
    #[derive(Deserialize)]
    struct Code {
        code: i32,
    }
    let Ok(Reply { error: Some(e) }) = serde_json::from_slice::<Reply>(reply) else {
        return StatusCode::OK;
    };
    match ErrorCode(e.code) {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::INVALID_PARAMS
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}
