//! Completing a result for the stateless wire: `resultType`, the server's identity in `_meta`
//! and caching hints, spliced into the serialized result without rebuilding it (spec:
//! 2026-07-28 `basic/index` "_meta", `server/utilities/caching`).

use std::borrow::Cow;

use mcpkit_types::schema::{CacheScope, JsonObject, MemberName, META_SERVER_INFO, RESULT_COMPLETE};
use mcpkit_types::ErrorObject;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::HandlerResult;

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
                while let Some((k, v)) = map.next_entry::<MemberName<'de>, &'de RawValue>()? {
                    out.push((k.0, v));
                }
                Ok(TopLevel(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The completed result, written by serde_json straight into the output: members are copied
/// raw, and `to_raw_value` takes the text serde_json produced without parsing it again (a spliced
/// `String` needed `RawValue::from_string`, which re-validated the whole result).
struct Completed<'a> {
    top: &'a TopLevel<'a>,
    server_info: &'a RawValue,
    cache: Option<CacheHint>,
}

/// `{"io.modelcontextprotocol/serverInfo": <server info>}`: the `_meta` of a result without one.
struct ServerInfoOnly<'a>(&'a RawValue);

impl Serialize for ServerInfoOnly<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(META_SERVER_INFO, self.0)?;
        m.end()
    }
}

impl Serialize for Completed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let has = |k: &str| self.top.0.iter().any(|(n, _)| n == k);
        let mut m = s.serialize_map(None)?;
        if !has("resultType") {
            m.serialize_entry("resultType", "complete")?;
        }
        if let Some(c) = self.cache {
            if !has("ttlMs") {
                m.serialize_entry("ttlMs", &c.ttl_ms)?;
            }
            if !has("cacheScope") {
                m.serialize_entry("cacheScope", scope_name(c.scope))?;
            }
        }
        let mut meta_done = false;
        for (k, v) in &self.top.0 {
            if k == "_meta" {
                let mut meta: JsonObject = serde_json::from_str(v.get()).unwrap_or_default();
                if !meta.contains_key(META_SERVER_INFO) {
                    let info: Value = serde_json::from_str(self.server_info.get()).unwrap_or(Value::Null);
                    meta.insert(META_SERVER_INFO.to_owned(), info);
                }
                m.serialize_entry(k.as_ref(), &meta)?;
                meta_done = true;
            } else {
                m.serialize_entry(k.as_ref(), v)?;
            }
        }
        if !meta_done {
            m.serialize_entry("_meta", &ServerInfoOnly(self.server_info))?;
        }
        m.end()
    }
}

fn scope_name(scope: CacheScope) -> &'static str {
    match scope {
        CacheScope::Public => "public",
        CacheScope::Private => "private",
    }
}

/// A typed result with the stateless members around it, for one serialization.
#[derive(Serialize)]
struct Completing<'a, T> {
    #[serde(rename = "resultType")]
    result_type: &'static str,
    #[serde(rename = "ttlMs", skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope", skip_serializing_if = "Option::is_none")]
    cache_scope: Option<&'static str>,
    #[serde(flatten)]
    result: &'a T,
    #[serde(rename = "_meta")]
    meta: ServerInfoOnly<'a>,
}

/// [`finish`] for a typed result that sets none of `resultType`, `ttlMs`, `cacheScope` and
/// `_meta` itself (the caller checks): the members are written around it in the one
/// serialization, where `finish` reads the serialized result and writes it again. The output
/// is the same text.
pub(crate) fn complete<T: Serialize>(result: &T, server_info: &RawValue, cache: Option<CacheHint>) -> HandlerResult {
    serde_json::value::to_raw_value(&Completing {
        result_type: RESULT_COMPLETE,
        ttl_ms: cache.map(|c| c.ttl_ms),
        cache_scope: cache.map(|c| scope_name(c.scope)),
        result,
        meta: ServerInfoOnly(server_info),
    })
    .map_err(|e| ErrorObject::internal(e.to_string()))
}

/// Complete a result for the stateless wire without rebuilding it: `resultType: "complete"`,
/// the server's identity in `_meta`, and caching hints when the method is cacheable. Members the
/// handler already set are kept.
pub(crate) fn finish(raw: &RawValue, server_info: &RawValue, cache: Option<CacheHint>) -> HandlerResult {
    let top: TopLevel<'_> =
        serde_json::from_str(raw.get()).map_err(|e| ErrorObject::internal(format!("result is not an object: {e}")))?;
    serde_json::value::to_raw_value(&Completed {
        top: &top,
        server_info,
        cache,
    })
    .map_err(|e| ErrorObject::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::raw;

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
        // The typed path writes the same text as the splice.
        let result =
            mcpkit_types::schema::CallToolResult::success(vec![mcpkit_types::schema::ContentBlock::text("hi")]);
        let spliced = finish(&crate::wire::to_raw(&result).unwrap(), &info, Some(hint)).unwrap();
        assert_eq!(complete(&result, &info, Some(hint)).unwrap().get(), spliced.get());
        let spliced = finish(&crate::wire::to_raw(&result).unwrap(), &info, None).unwrap();
        assert_eq!(complete(&result, &info, None).unwrap().get(), spliced.get());
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
}
