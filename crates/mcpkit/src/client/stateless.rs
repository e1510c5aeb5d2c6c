//! The client side of the stateless era (2026-07-28): the per-request protocol `_meta`,
//! `resultType`, and the round loop that answers `input_required` with the client's own
//! sampling / elicitation / roots handlers and retries (spec: 2026-07-28 `basic/index`
//! "_meta", `basic/patterns/mrtr`).

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use mcpkit_types::schema::{
    ClientCapabilities, Implementation, InputRequest, JsonObject, ListRootsResult, LoggingLevel, Root,
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
};
use mcpkit_types::{ErrorCode, ProtocolVersion};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use mcpkit_types::method::{CallTool, GetPrompt, Method, ReadResource};

use super::{cache, Client, ElicitFn, SamplingFn};
use crate::engine::RequestOptions;
use crate::error::{Error, Result};

/// What a stateless-era connection adds to every request.
#[derive(Debug)]
pub(crate) struct Stateless {
    pub(crate) version: ProtocolVersion,
    /// The protocol fields of `_meta`, built once.
    meta: JsonObject,
    pub(crate) log_level: RwLock<Option<LoggingLevel>>,
    pub(crate) max_rounds: usize,
}

impl Stateless {
    pub(crate) fn new(
        version: ProtocolVersion,
        capabilities: &ClientCapabilities,
        info: &Implementation,
        max_rounds: usize,
    ) -> Stateless {
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
        Stateless {
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
        // A task handle (Tasks extension) is the request's final answer too.
        None | Some(RESULT_COMPLETE) | Some(mcpkit_types::ext::tasks::RESULT_TASK) => Ok(Round::Complete),
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
    pub(crate) roots_fn: Option<super::RootsFn>,
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
                InputRequest::ListRoots if self.roots_fn.is_some() => match &self.roots_fn {
                    Some(f) => serde_json::to_value(f().await.map_err(Error::Rpc)?),
                    None => return Err(Error::MissingCapability("roots")),
                },
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

/// Whether a `server/discover` failure comes from a stateless-era server (spec: 2026-07-28
/// `basic/transports/stdio` "Backward Compatibility"): only the codes this revision defines.
pub(crate) fn is_stateless_error(e: &Error) -> bool {
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

impl Client {
    /// Send one request the way the connection's era wants: as is on a handshake-era session;
    /// with the protocol `_meta` on the stateless wire, answering `input_required` rounds with
    /// this client's handlers and retrying (a fresh request id each time).
    pub(super) async fn call<M: Method>(&self, params: &M::Params, options: RequestOptions) -> Result<M::Result> {
        let Some(stateless) = &self.inner.stateless else {
            return self.inner.peer.request_with::<M>(params, options).await;
        };
        let value = serde_json::to_value(params).map_err(|e| Error::Serialize(e.to_string()))?;
        // Spec: 2026-07-28 `server/utilities/caching` "Cache Key": the method and the params
        // that shape the result (not `_meta`).
        let cache_key = cache::cacheable(M::NAME).then(|| value.to_string());
        if let Some(key) = &cache_key {
            if let Some(raw) = self.inner.cache.get(M::NAME, key) {
                return serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()));
            }
        }
        let (raw, rounds) = self.rounds(stateless, M::NAME, value, options).await?;
        // A result that took input rounds depends on the answers: never cached.
        if let (Some(key), 0) = (&cache_key, rounds) {
            self.inner.cache.put(M::NAME, key, &raw);
        }
        serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))
    }

    /// [`Client::call`] by method name, the final result kept raw (a task handle is final too).
    pub(super) async fn call_raw(
        &self,
        method: &'static str,
        params: &impl Serialize,
        options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        let value = serde_json::to_value(params).map_err(|e| Error::Serialize(e.to_string()))?;
        match &self.inner.stateless {
            None => {
                let raw = serde_json::value::to_raw_value(&value).map_err(|e| Error::Serialize(e.to_string()))?;
                self.inner.peer.request_raw(method, Some(&raw), options).await
            }
            Some(stateless) => Ok(self.rounds(stateless, method, value, options).await?.0),
        }
    }

    /// The input-round loop of one stateless-era request: the final result and how many
    /// rounds it took.
    async fn rounds(
        &self,
        stateless: &Stateless,
        method: &'static str,
        value: serde_json::Value,
        options: RequestOptions,
    ) -> Result<(Box<RawValue>, usize)> {
        let mut params = stateless.params(value)?;
        let may_ask = [CallTool::NAME, GetPrompt::NAME, ReadResource::NAME].contains(&method);
        for round in 0..=stateless.max_rounds {
            let round_options = RequestOptions {
                timeout: options.timeout,
                reset_timeout_on_progress: options.reset_timeout_on_progress,
                progress: options.progress.clone(),
                related: None,
            };
            let raw = self
                .inner
                .peer
                .request_raw(method, Some(&params), round_options)
                .await?;
            match round_of(&raw)? {
                Round::Complete => return Ok((raw, round)),
                Round::InputRequired { .. } if !may_ask => {
                    return Err(Error::InvalidResponse(format!(
                        "{} answered input_required, which only {}, {} and {} may",
                        method,
                        CallTool::NAME,
                        GetPrompt::NAME,
                        ReadResource::NAME
                    )))
                }
                Round::InputRequired { requests, state } => {
                    let answers = self.inner.handlers.answer(requests).await?;
                    params.insert("inputResponses".into(), serde_json::Value::Object(answers));
                    match state {
                        Some(s) => params.insert("requestState".into(), serde_json::Value::String(s)),
                        None => params.remove("requestState"),
                    };
                }
            }
        }
        Err(Error::Protocol(format!(
            "{} still needed input after {} rounds",
            method, stateless.max_rounds
        )))
    }
}
