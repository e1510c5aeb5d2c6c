//! The headers of a stateless-era request (spec: 2026-07-28 `basic/transports/streamable-http`
//! "Request Metadata"): a 2026-07-28 request is POSTed without a session, with the headers that
//! mirror its body — `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and `Mcp-Param-*` for the
//! tool parameters annotated with `x-mcp-header` (learned from the `tools/list` results that
//! pass through).

use std::borrow::Cow;
use std::collections::HashMap;

use mcpkit_types::headers::{self, HeaderParam, PROTOCOL_VERSION};
use mcpkit_types::method::{CallTool, Method};
use mcpkit_types::schema::Tool;
use mcpkit_types::ProtocolVersion;
use reqwest::header::{HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// What the headers mirror of a request's params, read in one pass: of `_meta` only the
/// protocol version (the client's capabilities and info beside it are skipped, not built), the
/// item named, and the arguments as text (parsed only for a tool with mirrored parameters).
#[derive(Deserialize, Default)]
struct Mirrored<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<VersionOnly<'a>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(default, rename = "taskId")]
    task_id: Option<String>,
}

/// The params with nothing but `_meta`'s protocol version, for params whose other members are
/// not of the shapes [`Mirrored`] reads.
#[derive(Deserialize, Default)]
struct MetaOnly<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<VersionOnly<'a>>,
}

#[derive(Deserialize, Default)]
struct VersionOnly<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    protocol_version: Option<Cow<'a, str>>,
}

/// The headers of a stateless-era request, or `None` when `params` are not a 2026-07-28
/// request's.
pub(super) fn for_request(
    method: &str,
    params: Option<&RawValue>,
    tools: &HashMap<String, Vec<HeaderParam>>,
) -> Option<Vec<(HeaderName, HeaderValue)>> {
    let text = params.map_or("{}", RawValue::get);
    let body = serde_json::from_str::<Mirrored>(text)
        .or_else(|_| {
            serde_json::from_str::<MetaOnly>(text).map(|m| Mirrored {
                meta: m.meta,
                ..Mirrored::default()
            })
        })
        .ok()?;
    let version = body.meta?.protocol_version?;
    if !matches!(version.parse::<ProtocolVersion>(), Ok(v) if v.era() == mcpkit_types::Era::Stateless) {
        return None;
    }
    let mut out = Vec::with_capacity(4);
    let mut push = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            out.push((n, v));
        }
    };
    push(PROTOCOL_VERSION, &version);
    push(headers::MCP_METHOD, method);
    if let Some(member) = headers::name_member(method) {
        let value = match member {
            "uri" => &body.uri,
            "taskId" => &body.task_id,
            _ => &body.name,
        };
        if let Some(v) = value {
            push(headers::MCP_NAME, &headers::encode_value(v));
        }
    }
    let mirrored = match method {
        CallTool::NAME => body.name.as_ref().and_then(|n| tools.get(n)),
        _ => None,
    };
    if let Some(params) = mirrored.filter(|p| !p.is_empty()) {
        let args: Value = body
            .arguments
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or(Value::Null);
        for p in params {
            let text = headers::value_at(&args, &p.path).and_then(|v| headers::param_text(v, p.kind));
            if let Some(text) = text {
                push(&p.header(), &headers::encode_value(&text));
            }
        }
    }
    Some(out)
}

/// The W3C trace context a message carries in `params._meta` (`traceparent`, `tracestate`,
/// `baggage`), as the headers of the POST that carries it, so HTTP tracing between the two
/// peers (a proxy, a load balancer, the server's HTTP layer) sees the same trace. Nothing for
/// a message without a `traceparent`, found without parsing it.
pub(super) fn trace_context(frame: &[u8]) -> Vec<(HeaderName, HeaderValue)> {
    const TRACEPARENT: &str = "traceparent";
    if memchr::memmem::find(frame, TRACEPARENT.as_bytes()).is_none() {
        return Vec::new();
    }
    #[derive(Deserialize)]
    struct Message {
        #[serde(default)]
        params: Option<Params>,
    }
    #[derive(Deserialize)]
    struct Params {
        #[serde(default, rename = "_meta")]
        meta: Option<HashMap<String, Value>>,
    }
    let Ok(Message {
        params: Some(Params { meta: Some(meta) }),
    }) = serde_json::from_slice(frame)
    else {
        return Vec::new();
    };
    if !meta.contains_key(TRACEPARENT) {
        return Vec::new();
    }
    [TRACEPARENT, "tracestate", "baggage"]
        .into_iter()
        .filter_map(|key| {
            let value = HeaderValue::from_str(meta.get(key)?.as_str()?).ok()?;
            Some((HeaderName::from_static(key), value))
        })
        .collect()
}

#[derive(Deserialize)]
struct ToolsPage {
    #[serde(default)]
    tools: Vec<Tool>,
}

/// Learn the mirrored parameters of the tools in a `tools/list` result.
pub(super) fn learn_tools(result: &RawValue, into: &mut HashMap<String, Vec<HeaderParam>>) {
    let Ok(page) = serde_json::from_str::<ToolsPage>(result.get()) else {
        return;
    };
    for tool in page.tools {
        match headers::header_params(&tool.input_schema) {
            Ok(p) if !p.is_empty() => {
                into.insert(tool.name, p);
            }
            Ok(_) => {
                into.remove(&tool.name);
            }
            Err(reason) => {
                tracing::warn!("tool {:?} has invalid x-mcp-header annotations: {reason}", tool.name);
                into.remove(&tool.name);
            }
        }
    }
}
