//! Types of the stateless era (2026-07-28): the per-request protocol fields of `_meta`,
//! `server/discover`, multi round-trip requests and `subscriptions/listen`
//! (spec: 2026-07-28 `basic/index` "_meta", `server/discover`, `basic/patterns/mrtr`,
//! `basic/patterns/subscriptions`).

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::common::{CacheScope, Implementation, JsonObject, Meta, RequestMeta, RequestParams};
use super::elicitation::ElicitParams;
use super::lifecycle::{ClientCapabilities, ServerCapabilities};
use super::logging::LoggingLevel;
use super::sampling::CreateMessageParams;

/// `_meta` key: the protocol revision of this request (required on 2026-07-28 requests).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required on 2026-07-28 requests).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: who the client is (optional).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the lowest log level the server may emit for this request (optional).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key: who the server is.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification and result `_meta` key: the `subscriptions/listen` request a message belongs to.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `resultType` of an ordinary result.
pub const RESULT_COMPLETE: &str = "complete";
/// `resultType` of an interim result asking for more input.
pub const RESULT_INPUT_REQUIRED: &str = "input_required";

/// The per-request protocol fields of a 2026-07-28 request's `_meta`, as read by a server.
/// Every member is optional here so that a missing one can be named in the error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProtocolMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
}

/// The `_meta` of any request's params, reading only the protocol fields (everything else in the
/// params is skipped without being built).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProtocolMetaOf {
    /// The `_meta` member, if any.
    #[serde(rename = "_meta", default)]
    pub meta: Option<ProtocolMeta>,
}

/// Result of `server/discover` (spec: 2026-07-28 `server/discover`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every protocol revision the server speaks.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// Cache lifetime in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata (carries `io.modelcontextprotocol/serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl DiscoverResult {
    /// The server's identity from `_meta`, if it gave one.
    pub fn server_info(&self) -> Option<Implementation> {
        let v = self.meta.as_ref()?.get(META_SERVER_INFO)?;
        serde_json::from_value(v.clone()).ok()
    }
}

/// One request a server needs the client to fulfil before it can finish (spec: 2026-07-28
/// `InputRequest`): the same requests a handshake-era server sends on its own.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitParams),
    /// `sampling/createMessage`.
    Sample(CreateMessageParams),
    /// `roots/list`.
    ListRoots,
}

impl InputRequest {
    /// The method this request stands for.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => "elicitation/create",
            InputRequest::Sample(_) => "sampling/createMessage",
            InputRequest::ListRoots => "roots/list",
        }
    }

    /// The client capability this request needs (`elicitation`, `sampling` or `roots`).
    pub fn capability(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => "elicitation",
            InputRequest::Sample(_) => "sampling",
            InputRequest::ListRoots => "roots",
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a, P: Serialize> {
            method: &'a str,
            params: P,
        }
        match self {
            InputRequest::Elicit(p) => Wire {
                method: self.method(),
                params: p,
            }
            .serialize(s),
            InputRequest::Sample(p) => Wire {
                method: self.method(),
                params: p,
            }
            .serialize(s),
            InputRequest::ListRoots => Wire {
                method: self.method(),
                params: RequestParams::default(),
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            method: String,
            #[serde(default)]
            params: Option<Box<RawValue>>,
        }
        let w = Wire::deserialize(d)?;
        let params = w.params.as_deref().map_or("{}", RawValue::get);
        match w.method.as_str() {
            "elicitation/create" => serde_json::from_str(params).map(InputRequest::Elicit),
            "sampling/createMessage" => serde_json::from_str(params).map(InputRequest::Sample),
            "roots/list" => Ok(InputRequest::ListRoots),
            other => return Err(D::Error::custom(format!("unknown input request method {other:?}"))),
        }
        .map_err(D::Error::custom)
    }
}

/// An interim result: the server needs the client to answer `input_requests` and retry the
/// request with the answers and `request_state` (spec: 2026-07-28 `InputRequiredResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `"input_required"`.
    pub result_type: String,
    /// What the client must answer, by server-chosen key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque state to echo on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Answers to input requests, by the keys of the `inputRequests` they answer.
pub type InputResponses = JsonObject;

/// Which notifications a `subscriptions/listen` stream carries (spec: 2026-07-28
/// `SubscriptionFilter`). Every kind is opt-in.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Tasks extension (SEP-2663 "Task Status Notifications"): `notifications/tasks` for these
    /// task ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Params of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsListenParams {
    /// What to deliver.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Params of `notifications/subscriptions/acknowledged`: the part of the filter the server honours.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// The honoured filter.
    pub notifications: SubscriptionFilter,
    /// Notification metadata (carries the subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A client's answer to one [`InputRequest`] (spec: 2026-07-28 `InputResponse`).
#[derive(Debug, Clone, PartialEq)]
pub enum InputResponse {
    /// Answer to `elicitation/create`.
    Elicit(super::elicitation::ElicitResult),
    /// Answer to `sampling/createMessage`.
    Sample(super::sampling::CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(super::roots::ListRootsResult),
}

impl InputRequest {
    /// Read the answer to this request from `value` (an entry of `inputResponses`).
    pub fn parse_response(&self, value: &serde_json::Value) -> Result<InputResponse, serde_json::Error> {
        use serde::de::IntoDeserializer as _;
        let d = value.clone().into_deserializer();
        Ok(match self {
            InputRequest::Elicit(_) => InputResponse::Elicit(Deserialize::deserialize(d)?),
            InputRequest::Sample(_) => InputResponse::Sample(Deserialize::deserialize(d)?),
            InputRequest::ListRoots => InputResponse::ListRoots(Deserialize::deserialize(d)?),
        })
    }
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InputResponse::Elicit(r) => r.serialize(s),
            InputResponse::Sample(r) => r.serialize(s),
            InputResponse::ListRoots(r) => r.serialize(s),
        }
    }
}
