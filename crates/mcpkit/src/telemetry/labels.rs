//! Attribute names of the convention, and the bounded values metric labels may take: a client
//! can send any method name, tool name or error code, and none of those may become a new metric
//! series unless the catalogue holds it.

use mcpkit_types::ext::{skills, tasks};
use mcpkit_types::method::{
    Discover, Method, NotificationMethod, SubscriptionsAcknowledged, SubscriptionsListen, ALL_CLIENT_NOTIFICATIONS,
    ALL_CLIENT_REQUESTS, ALL_SERVER_NOTIFICATIONS, ALL_SERVER_REQUESTS,
};
use mcpkit_types::ErrorCode;

#[cfg_attr(not(feature = "otel"), allow(dead_code, reason = "a metric label"))]
pub(crate) const METHOD: &str = "mcp.method.name";
pub(crate) const SESSION_ID: &str = "mcp.session.id";
pub(crate) const PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub(crate) const REQUEST_ID: &str = "jsonrpc.request.id";
pub(crate) const TOOL: &str = "gen_ai.tool.name";
pub(crate) const PROMPT: &str = "gen_ai.prompt.name";
pub(crate) const OPERATION: &str = "gen_ai.operation.name";
pub(crate) const RESOURCE_URI: &str = "mcp.resource.uri";
pub(crate) const STATUS_CODE: &str = "rpc.response.status_code";
pub(crate) const ERROR_TYPE: &str = "error.type";
pub(crate) const TRANSPORT: &str = "network.transport";
pub(crate) const PROTOCOL_NAME: &str = "network.protocol.name";

/// The value the conventions use for anything outside a known set.
pub(crate) const OTHER: &str = "_OTHER";
/// `error.type` of a `tools/call` result with `isError: true`.
pub(crate) const TOOL_ERROR: &str = "tool_error";
/// `gen_ai.operation.name` of a tool call.
pub(crate) const EXECUTE_TOOL: &str = "execute_tool";

/// Method names of the extensions mcpkit speaks, beside the core catalogue.
const EXTENSION_METHODS: &[&str] = &[
    Discover::NAME,
    SubscriptionsListen::NAME,
    SubscriptionsAcknowledged::NAME,
    tasks::GetTask::NAME,
    tasks::UpdateTask::NAME,
    tasks::CancelTask::NAME,
    tasks::TaskStatusChanged::NAME,
    skills::ListSkills::NAME,
    skills::GetSkill::NAME,
    skills::ReadDirectory::NAME,
];

/// `method` as a label: its catalogue name (a `&'static str`, so recording allocates nothing),
/// or `_OTHER` for a name the catalogue does not hold.
pub(crate) fn method(method: &str) -> &'static str {
    [
        ALL_CLIENT_REQUESTS,
        ALL_SERVER_REQUESTS,
        ALL_CLIENT_NOTIFICATIONS,
        ALL_SERVER_NOTIFICATIONS,
        EXTENSION_METHODS,
    ]
    .iter()
    .flat_map(|names| names.iter())
    .find(|n| **n == method)
    .copied()
    .unwrap_or(OTHER)
}

/// A JSON-RPC error code as `error.type` / `rpc.response.status_code`: the code itself when it
/// is one of JSON-RPC's reserved codes or MCP's (a bounded set), `_OTHER` otherwise (a peer
/// can answer with any integer).
pub(crate) fn error_code(code: ErrorCode) -> &'static str {
    match code.0 {
        -32700 => "-32700",
        -32600 => "-32600",
        -32601 => "-32601",
        -32602 => "-32602",
        -32603 => "-32603",
        -32800 => "-32800",
        -32042 => "-32042",
        -32022 => "-32022",
        -32021 => "-32021",
        -32020 => "-32020",
        -32002 => "-32002",
        -32001 => "-32001",
        -32000 => "-32000",
        _ => OTHER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_catalogue_names_and_known_codes_are_label_values() {
        use mcpkit_types::method::{CallTool, GetTask, Initialized, Method, NotificationMethod};
        assert_eq!(method(CallTool::NAME), CallTool::NAME);
        assert_eq!(method(Initialized::NAME), Initialized::NAME);
        assert_eq!(method(GetTask::NAME), GetTask::NAME);
        // The stateless era's listen stream opens with this one.
        let acknowledged = mcpkit_types::method::SubscriptionsAcknowledged::NAME;
        assert_eq!(method(acknowledged), acknowledged);
        assert_eq!(method(&format!("{}2", CallTool::NAME)), OTHER);
        assert_eq!(method(""), OTHER);
        assert_eq!(error_code(ErrorCode::INVALID_PARAMS), "-32602");
        assert_eq!(error_code(ErrorCode(12345)), OTHER);
    }
}
