//! The client side of the stateless era (2026-07-28): choosing the era at connect time,
//! per-request protocol `_meta`, `resultType`, and driving multi round-trip requests through
//! the client's own sampling / elicitation / roots handlers (spec: 2026-07-28
//! `basic/versioning`, `basic/index` "_meta", `basic/patterns/mrtr`).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mcpkit_types::schema::{
    ClientCapabilities, Implementation, InputRequest, JsonObject, ListRootsResult, LoggingLevel, Root,
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
};
use mcpkit_types::{ErrorCode, ProtocolVersion};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{ElicitFn, SamplingFn};
use crate::error::{Error, Result};

/// How a client picks the protocol era when it connects (spec: 2026-07-28 `basic/versioning`
/// "Backward Compatibility").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConnectMode {
    /// The `initialize` handshake (every revision up to 2025-11-25). The default: every MCP
    /// server of the handshake era and every dual-era server speaks it.
    #[default]
    Legacy,
    /// Probe with `server/discover`: a modern server is spoken to statelessly, anything else
    /// (an error that is not a modern one, or silence) falls back to `initialize`.
    Auto,
    /// Speak this stateless-era revision and nothing else.
    Version(ProtocolVersion),
}

/// What a stateless-era connection adds to every request.
#[derive(Debug)]
pub(crate) struct Modern {
    pub(crate) version: ProtocolVersion,
    /// The protocol fields of `_meta`, built once.
    meta: JsonObject,
    pub(crate) log_level: RwLock<Option<LoggingLevel>>,
    pub(crate) max_rounds: usize,
}

impl Modern {
    pub(crate) fn new(
        version: ProtocolVersion,
        capabilities: &ClientCapabilities,
        info: &Implementation,
        max_rounds: usize,
    ) -> Modern {
        let mut meta = JsonObject::new();
        meta.insert(META_PROTOCOL_VERSION.into(), Value::String(version.as_str().into()));
        meta.insert(
            META_CLIENT_CAPABILITIES.into(),
            serde_json::to_value(capabilities).unwrap_or_else(|_| Value::Object(JsonObject::new())),
        );
        meta.insert(
            META_CLIENT_INFO.into(),
            serde_json::to_value(info).unwrap_or(Value::Null),
        );
        Modern {
            version,
            meta,
            log_level: RwLock::new(None),
            max_rounds,
        }
    }

    /// `params` (any serializable params) as an object carrying the protocol `_meta` fields;
    /// members the caller put in `_meta` (a progress token) are kept.
    pub(crate) fn params(&self, params: Value) -> Result<JsonObject> {
        let mut obj = match params {
            Value::Object(o) => o,
            Value::Null => JsonObject::new(),
            other => return Err(Error::Serialize(format!("params must be an object, not {other}"))),
        };
        let meta = obj.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(m) = meta {
            for (k, v) in &self.meta {
                m.entry(k.clone()).or_insert_with(|| v.clone());
            }
            if let Some(level) = *crate::sync::read(&self.log_level) {
                m.insert(
                    META_LOG_LEVEL.into(),
                    serde_json::to_value(level).unwrap_or(Value::Null),
                );
            }
        }
        Ok(obj)
    }
}

/// The `resultType` of a raw result and, for `input_required`, what it asks.
#[derive(Deserialize)]
struct Interim {
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<BTreeMap<String, InputRequest>>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

/// What one round of a request came back with.
pub(crate) enum Round {
    /// A final result (`complete`, or no `resultType` from an older server).
    Complete,
    /// The server needs these answers, and this state echoed, on a retry.
    InputRequired {
        requests: BTreeMap<String, InputRequest>,
        state: Option<String>,
    },
}

/// Spec: 2026-07-28 `basic/index` "ResultType": absent means complete; unknown is invalid.
pub(crate) fn round_of(raw: &RawValue) -> Result<Round> {
    let interim: Interim = serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))?;
    match interim.result_type.as_deref() {
        None | Some(RESULT_COMPLETE) => Ok(Round::Complete),
        Some(RESULT_INPUT_REQUIRED) => Ok(Round::InputRequired {
            requests: interim.input_requests.unwrap_or_default(),
            state: interim.request_state,
        }),
        Some(other) => Err(Error::InvalidResponse(format!("unknown resultType {other:?}"))),
    }
}

/// The client's own handlers, which answer input requests.
#[derive(Clone)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) elicitation: Option<ElicitFn>,
    pub(crate) roots: Option<Arc<RwLock<Vec<Root>>>>,
}

impl Handlers {
    /// Answer every input request of one round (spec: 2026-07-28 `basic/patterns/mrtr` "Client
    /// Requirements"): the `inputResponses` of the retry.
    pub(crate) async fn answer(&self, requests: BTreeMap<String, InputRequest>) -> Result<JsonObject> {
        let mut out = JsonObject::new();
        for (key, request) in requests {
            let value = match request {
                InputRequest::Sample(p) => {
                    let f = self.sampling.clone().ok_or(Error::MissingCapability("sampling"))?;
                    serde_json::to_value(f(p).await.map_err(Error::Rpc)?)
                }
                InputRequest::Elicit(p) => {
                    let f = self
                        .elicitation
                        .clone()
                        .ok_or(Error::MissingCapability("elicitation"))?;
                    serde_json::to_value(f(p).await.map_err(Error::Rpc)?)
                }
                InputRequest::ListRoots => {
                    let roots = self.roots.as_ref().ok_or(Error::MissingCapability("roots"))?;
                    let roots = roots.read().map(|r| r.clone()).unwrap_or_default();
                    serde_json::to_value(ListRootsResult {
                        roots,
                        ..Default::default()
                    })
                }
            };
            out.insert(key, value.map_err(|e| Error::Serialize(e.to_string()))?);
        }
        Ok(out)
    }
}

/// Whether a `server/discover` failure comes from a modern server (spec: 2026-07-28
/// `basic/transports/stdio` "Backward Compatibility"): only the codes this revision defines.
pub(crate) fn is_modern_error(e: &Error) -> bool {
    matches!(
        e.rpc().map(|e| e.code),
        Some(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
            | Some(ErrorCode::HEADER_MISMATCH)
            | Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
    )
}

/// The versions an UnsupportedProtocolVersion error says the server supports.
pub(crate) fn supported_of(e: &Error) -> Vec<String> {
    e.rpc()
        .and_then(|e| e.data.as_ref())
        .and_then(|d| d.get("supported"))
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default()
}

/// How long the `server/discover` probe waits by default before deciding the server is a silent
/// legacy one. Generous: a server process that is still starting (an interpreter loading its
/// modules on a busy machine) must not be mistaken for a legacy one.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
