//! Serving the stateless era (2026-07-28) beside the handshake era: per-request protocol
//! metadata, `resultType` and caching hints on results, multi round-trip input, `server/discover`
//! and `subscriptions/listen` (spec: 2026-07-28 `basic/index` "_meta", `basic/versioning`,
//! `basic/patterns/*`, `server/discover`, `server/utilities/caching`).

use crate::sync::lock;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcpkit_types::schema::{
    CacheScope, ClientCapabilities, DiscoverResult, Implementation, InputRequest, InputRequiredResult, JsonObject,
    LoggingLevel, ProtocolMeta, ProtocolMetaOf, SubscriptionFilter, SubscriptionsAcknowledgedParams,
    SubscriptionsListenParams, META_SERVER_INFO, META_SUBSCRIPTION_ID, RESULT_INPUT_REQUIRED,
};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion, RequestId};
use serde::de::{MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::request_state::{RequestStateKeys, StatePayload};
use super::Server;
use crate::engine::{HandlerResult, Peer};
use crate::wire::{params, to_raw};

/// The protocol fields of one stateless-era request, validated.
#[derive(Debug, Clone)]
pub(crate) struct Modern {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Implementation>,
    pub(crate) log_level: Option<LoggingLevel>,
}

/// Read the protocol fields of a request's `_meta` (nothing else in the params is built).
pub(crate) fn read_meta(raw: Option<&RawValue>) -> Result<Option<ProtocolMeta>, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    serde_json::from_str::<ProtocolMetaOf>(text)
        .map(|m| m.meta)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid _meta: {e}")))
}

/// Every revision this server speaks, newest first.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    ProtocolVersion::ALL.iter().rev().map(|v| v.as_str()).collect()
}

/// Spec: 2026-07-28 `basic/versioning` "Protocol Version Negotiation".
pub(crate) fn unsupported_version(requested: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
        .with_data(json!({ "supported": supported_versions(), "requested": requested }))
}

/// Spec: 2026-07-28 `basic/index` "_meta": the required fields must be there (-32602), and the
/// version must be one we serve statelessly (-32022).
pub(crate) fn validate(meta: Option<ProtocolMeta>) -> Result<Modern, ErrorObject> {
    let missing = |what: &str| {
        ErrorObject::invalid_params(format!(
            "Invalid params: the request's _meta must carry {what} (required on every 2026-07-28 request)"
        ))
        .with_data(json!({ "path": format!("_meta.{what}") }))
    };
    let Some(meta) = meta else {
        return Err(missing("io.modelcontextprotocol/protocolVersion"));
    };
    let Some(requested) = meta.protocol_version else {
        return Err(missing("io.modelcontextprotocol/protocolVersion"));
    };
    let version = match requested.parse::<ProtocolVersion>() {
        Ok(v) if v.era() == mcpkit_types::Era::Stateless => v,
        _ => return Err(unsupported_version(&requested)),
    };
    let Some(capabilities) = meta.client_capabilities else {
        return Err(missing("io.modelcontextprotocol/clientCapabilities"));
    };
    Ok(Modern {
        version,
        capabilities,
        client_info: meta.client_info,
        log_level: meta.log_level,
    })
}

/// Caching hints for one kind of result (spec: 2026-07-28 `server/utilities/caching`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the client may consider the result fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may share the cached result.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint with this lifetime and scope.
    pub fn new(ttl: std::time::Duration, scope: CacheScope) -> Self {
        CacheHint {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            scope,
        }
    }
}

/// The members of a result object, values kept raw and keys borrowed when they hold no escapes.
struct TopLevel<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

/// An object key, borrowed from the text when it can be.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for TopLevel<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TopLevel<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(4));
                while let Some((k, v)) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                    out.push((k.0, v));
                }
                Ok(TopLevel(out))
            }
        }
        d.deserialize_map(V)
    }
}

fn push_member(out: &mut String, first: &mut bool, key: &str, value: &str) {
    if !*first {
        out.push(',');
    }
    *first = false;
    // Keys we write are plain ASCII; keys we copy came from serde_json and are re-escaped.
    if key.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        out.push_str(&Value::String(key.to_owned()).to_string());
    } else {
        out.push('"');
        out.push_str(key);
        out.push('"');
    }
    out.push(':');
    out.push_str(value);
}

/// Complete a result for the stateless wire without rebuilding it: `resultType: "complete"`,
/// the server's identity in `_meta`, and caching hints when the method is cacheable. Members the
/// handler already set are kept.
pub(crate) fn finish(raw: &RawValue, server_info: &RawValue, cache: Option<CacheHint>) -> HandlerResult {
    let top: TopLevel<'_> =
        serde_json::from_str(raw.get()).map_err(|e| ErrorObject::internal(format!("result is not an object: {e}")))?;
    let has = |k: &str| top.0.iter().any(|(n, _)| n == k);
    let mut out = String::with_capacity(raw.get().len() + server_info.get().len() + 96);
    let mut first = true;
    out.push('{');
    if !has("resultType") {
        push_member(&mut out, &mut first, "resultType", "\"complete\"");
    }
    if let Some(c) = cache {
        if !has("ttlMs") {
            push_member(&mut out, &mut first, "ttlMs", &c.ttl_ms.to_string());
        }
        if !has("cacheScope") {
            let scope = match c.scope {
                CacheScope::Public => "\"public\"",
                CacheScope::Private => "\"private\"",
            };
            push_member(&mut out, &mut first, "cacheScope", scope);
        }
    }
    let mut meta_done = false;
    for (k, v) in &top.0 {
        if k == "_meta" {
            let mut meta: JsonObject = serde_json::from_str(v.get()).unwrap_or_default();
            if !meta.contains_key(META_SERVER_INFO) {
                let info: Value = serde_json::from_str(server_info.get()).unwrap_or(Value::Null);
                meta.insert(META_SERVER_INFO.to_owned(), info);
            }
            let text = serde_json::to_string(&meta).map_err(|e| ErrorObject::internal(e.to_string()))?;
            push_member(&mut out, &mut first, k, &text);
            meta_done = true;
        } else {
            push_member(&mut out, &mut first, k, v.get());
        }
    }
    if !meta_done {
        push_member(&mut out, &mut first, "_meta", "{");
        push_member(&mut out, &mut true, META_SERVER_INFO, server_info.get());
        out.push('}');
    }
    out.push('}');
    RawValue::from_string(out).map_err(|e| ErrorObject::internal(e.to_string()))
}

/// Spec: 2026-07-28 `server/discover`.
pub(crate) fn discover(server: &Server) -> HandlerResult {
    let result = DiscoverResult {
        supported_versions: supported_versions().into_iter().map(str::to_owned).collect(),
        capabilities: server.capabilities(),
        instructions: server.inner.instructions.clone(),
        ..Default::default()
    };
    let raw = to_raw(&result)?;
    finish(&raw, &server.inner.info_json, Some(server.inner.cache.lists))
}

/// What the handler of one stateless request has asked of the client, and what it got
/// (spec: 2026-07-28 `basic/patterns/mrtr`).
#[derive(Debug, Default)]
pub(crate) struct InputState {
    /// Answers from earlier rounds (in `requestState`) and from this round's `inputResponses`.
    answers: JsonObject,
    /// Answers the handler read in this run: carried into the next `requestState`.
    used: Mutex<JsonObject>,
    /// Requests the handler made that have no answer yet.
    pending: Mutex<BTreeMap<String, InputRequest>>,
    /// Why an input call failed (missing capability, malformed answer), if one did.
    failure: Mutex<Option<ErrorObject>>,
    next_key: AtomicUsize,
    /// The handler's own state, from the previous round and for the next.
    handler_state: Mutex<Option<Value>>,
}

impl InputState {
    /// The state of a request: open its `requestState` (if any) and merge `inputResponses`.
    pub(crate) fn open(
        keys: &RequestStateKeys,
        method: &str,
        digest: &dyn Fn() -> String,
        state: Option<&str>,
        responses: Option<JsonObject>,
    ) -> Result<InputState, ErrorObject> {
        let mut s = InputState::default();
        if let Some(state) = state {
            let payload = keys.open(state, method, &digest()).map_err(|e| {
                ErrorObject::invalid_params(format!("Invalid requestState: {e}"))
                    .with_data(json!({ "path": "requestState" }))
            })?;
            s.answers = payload.a;
            *lock(&s.handler_state) = payload.s;
        }
        if let Some(r) = responses {
            s.answers.extend(r);
        }
        Ok(s)
    }

    pub(crate) fn next_key(&self, request: &InputRequest) -> String {
        let n = self.next_key.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", request.capability())
    }

    pub(crate) fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.get(key)
    }

    pub(crate) fn mark_used(&self, key: &str, value: Value) {
        lock(&self.used).insert(key.to_owned(), value);
    }

    pub(crate) fn ask(&self, key: String, request: InputRequest) {
        lock(&self.pending).insert(key, request);
    }

    pub(crate) fn fail(&self, error: ErrorObject) {
        lock(&self.failure).get_or_insert(error);
    }

    pub(crate) fn handler_state(&self) -> Option<Value> {
        lock(&self.handler_state).clone()
    }

    pub(crate) fn set_handler_state(&self, value: Value) {
        *lock(&self.handler_state) = Some(value);
    }

    /// The reply once the handler is done. While any input call is unanswered the request ends
    /// with `input_required`, whatever the handler made of the missing answer (its result was
    /// computed without it). Otherwise a handler that failed after an input call failed (missing
    /// capability, malformed answer) gets that call's error; any other outcome stands.
    /// `Ok(Settled::Complete)` still needs [`finish`].
    pub(crate) fn settle(
        &self,
        outcome: HandlerResult,
        failed: bool,
        keys: &RequestStateKeys,
        method: &str,
        digest: &dyn Fn() -> String,
        server_info: &RawValue,
    ) -> Result<Settled, ErrorObject> {
        let pending = std::mem::take(&mut *lock(&self.pending));
        if pending.is_empty() {
            if failed {
                if let Some(e) = lock(&self.failure).take() {
                    return Err(e);
                }
            }
            return outcome.map(Settled::Complete);
        }
        let payload = StatePayload {
            m: method.to_owned(),
            d: digest(),
            a: std::mem::take(&mut *lock(&self.used)),
            s: self.handler_state(),
            ..Default::default()
        };
        let request_state = keys
            .seal(payload)
            .ok_or_else(|| ErrorObject::internal("could not seal requestState"))?;
        let mut meta = JsonObject::new();
        meta.insert(
            META_SERVER_INFO.to_owned(),
            serde_json::from_str(server_info.get()).unwrap_or(Value::Null),
        );
        to_raw(&InputRequiredResult {
            result_type: RESULT_INPUT_REQUIRED.to_owned(),
            input_requests: Some(pending),
            request_state: Some(request_state),
            meta: Some(meta),
        })
        .map(Settled::InputRequired)
    }
}

/// How a request that may ask for input ended.
pub(crate) enum Settled {
    /// An ordinary result, to be completed with [`finish`].
    Complete(Box<RawValue>),
    /// A finished `input_required` result.
    InputRequired(Box<RawValue>),
}

/// A change a `subscriptions/listen` stream may carry.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(Arc<str>),
}

impl Change {
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Change::Tools => "notifications/tools/list_changed",
            Change::Prompts => "notifications/prompts/list_changed",
            Change::Resources => "notifications/resources/list_changed",
            Change::ResourceUpdated(_) => "notifications/resources/updated",
        }
    }

    fn wanted_by(&self, f: &SubscriptionFilter) -> bool {
        match self {
            Change::Tools => f.tools_list_changed == Some(true),
            Change::Prompts => f.prompts_list_changed == Some(true),
            Change::Resources => f.resources_list_changed == Some(true),
            Change::ResourceUpdated(uri) => f
                .resource_subscriptions
                .as_ref()
                .is_some_and(|s| s.iter().any(|u| u.as_str() == &**uri)),
        }
    }
}

/// The part of `asked` this server honours: only kinds it can ever send.
fn honoured(server: &Server, asked: SubscriptionFilter) -> SubscriptionFilter {
    let snap = server.snapshot();
    let yes = |offered: bool, asked: Option<bool>| (offered && asked == Some(true)).then_some(true);
    SubscriptionFilter {
        tools_list_changed: yes(server.offers_tools(&snap), asked.tools_list_changed),
        prompts_list_changed: yes(snap.offers_prompts(), asked.prompts_list_changed),
        resources_list_changed: yes(snap.offers_resources(), asked.resources_list_changed),
        resource_subscriptions: asked.resource_subscriptions.filter(|_| snap.offers_resources()),
    }
}

/// Spec: 2026-07-28 `basic/patterns/subscriptions`. Acknowledge, then forward the changes the
/// filter asks for, each tagged with the subscription id, until the client cancels (no reply) or
/// the server ends subscriptions (a graceful `complete` reply).
pub(crate) async fn listen(
    server: Server,
    peer: Peer,
    id: RequestId,
    raw: Option<Box<RawValue>>,
    cancel: tokio_util::sync::CancellationToken,
) -> HandlerResult {
    let p: SubscriptionsListenParams = params(raw.as_deref())?;
    let filter = honoured(&server, p.notifications);
    // Subscribe before acknowledging, so nothing after the acknowledgement is missed.
    let mut changes = server.inner.changes.subscribe();
    let tag = json!({ META_SUBSCRIPTION_ID: id });
    let ack = SubscriptionsAcknowledgedParams {
        notifications: filter.clone(),
        meta: tag.as_object().cloned(),
    };
    peer.notify_related("notifications/subscriptions/acknowledged", Some(&ack), &id)
        .map_err(|e| ErrorObject::internal(e.to_string()))?;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return Err(ErrorObject::internal("subscription cancelled")),
            _ = server.inner.ending.cancelled() => break,
            change = changes.recv() => match change {
                Ok(change) if change.wanted_by(&filter) => {
                    let params = match &change {
                        Change::ResourceUpdated(uri) => json!({ "uri": &**uri, "_meta": tag }),
                        _ => json!({ "_meta": tag }),
                    };
                    if peer.notify_related(change.method(), Some(&params), &id).is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!("subscription {id} missed {n} changes");
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    let result = json!({ "resultType": "complete", "_meta": tag });
    to_raw(&result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn finish_adds_result_type_server_info_and_cache_hints() {
        let info = raw(r#"{"name":"s","version":"1"}"#);
        let hint = CacheHint {
            ttl_ms: 5,
            scope: CacheScope::Public,
        };
        let out = finish(&raw(r#"{"tools":[]}"#), &info, Some(hint)).unwrap();
        assert_eq!(
            out.get(),
            r#"{"resultType":"complete","ttlMs":5,"cacheScope":"public","tools":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#
        );
        let out = finish(
            &raw(r#"{"content":[],"_meta":{"k":1},"resultType":"complete"}"#),
            &info,
            None,
        )
        .unwrap();
        assert_eq!(
            out.get(),
            r#"{"content":[],"_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"resultType":"complete"}"#
        );
        let out = finish(&raw("{}"), &info, None).unwrap();
        assert_eq!(
            out.get(),
            r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#
        );
        // Escaped member names come out escaped again, and the result is still valid JSON.
        let out = finish(&raw(r#"{"a\"b\\c\u0001":1,"\u00e9":2}"#), &info, None).unwrap();
        let v: Value = serde_json::from_str(out.get()).unwrap();
        assert_eq!(v["a\"b\\c\u{1}"], 1);
        assert_eq!(v["é"], 2);
        assert!(
            out.get()
                .starts_with(r#"{"resultType":"complete","a\"b\\c\u0001":1,"é":2,"#),
            "{}",
            out.get()
        );
    }

    #[test]
    fn meta_validation_names_what_is_missing() {
        let e = validate(None).unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        let m = read_meta(Some(&raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        )))
        .unwrap();
        let e = validate(m).unwrap_err();
        assert!(e.message.contains("clientCapabilities"), "{}", e.message);
        let m = read_meta(Some(&raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        )))
        .unwrap();
        let e = validate(m).unwrap_err();
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.unwrap()["requested"], "v9");
    }
}
