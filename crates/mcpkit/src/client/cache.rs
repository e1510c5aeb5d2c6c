//! The client's response cache for the stateless era (spec: 2026-07-28
//! `server/utilities/caching`): results of the cacheable methods are kept while their `ttlMs`
//! says they are fresh, keyed by method and params, and dropped at once when a change
//! notification says they are stale.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcpkit_types::method::{
    Discover, ListPrompts, ListResourceTemplates, ListResources, ListTools, Method, ReadResource,
};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The methods whose results carry caching hints.
pub(crate) fn cacheable(method: &str) -> bool {
    matches!(
        method,
        Discover::NAME
            | ListTools::NAME
            | ListPrompts::NAME
            | ListResources::NAME
            | ListResourceTemplates::NAME
            | ReadResource::NAME
    )
}

/// Cached results by (method, params): when they go stale, and the result.
type Entries = HashMap<(String, String), (Instant, Box<RawValue>)>;

#[derive(Debug, Default)]
pub(crate) struct ResponseCache {
    entries: Mutex<Entries>,
}

#[derive(Deserialize)]
struct Hints {
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<i64>,
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
}

impl ResponseCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        crate::sync::lock(&self.entries)
    }

    /// A fresh cached result for `method` with params `key`.
    pub(crate) fn get(&self, method: &str, key: &str) -> Option<Box<RawValue>> {
        let mut entries = self.lock();
        let k = (method.to_owned(), key.to_owned());
        match entries.get(&k) {
            Some((expires, raw)) if Instant::now() < *expires => Some(raw.clone()),
            Some(_) => {
                entries.remove(&k);
                None
            }
            None => None,
        }
    }

    /// Keep `raw` while its `ttlMs` lasts (nothing is kept for 0, a negative or no TTL, or an
    /// `input_required` result).
    pub(crate) fn put(&self, method: &str, key: &str, raw: &RawValue) {
        let Ok(h) = serde_json::from_str::<Hints>(raw.get()) else {
            return;
        };
        if h.result_type.as_deref().is_some_and(|t| t != "complete") {
            return;
        }
        let Some(ttl) = h.ttl_ms.filter(|t| *t > 0) else { return };
        let expires = Instant::now() + Duration::from_millis(ttl.unsigned_abs());
        self.lock()
            .insert((method.to_owned(), key.to_owned()), (expires, raw.to_owned()));
    }

    /// Drop every result of `method` (a list changed).
    pub(crate) fn invalidate(&self, method: &str) {
        self.lock().retain(|(m, _), _| m != method);
    }

    /// Drop the cached read of `uri` (it was updated).
    pub(crate) fn invalidate_read(&self, uri: &str) {
        self.lock().retain(|(m, key), _| {
            m != ReadResource::NAME
                || serde_json::from_str::<serde_json::Value>(key)
                    .ok()
                    .and_then(|v| v.get("uri").cloned())
                    != Some(serde_json::Value::String(uri.to_owned()))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_results_are_served_and_notifications_invalidate_them() {
        let c = ResponseCache::default();
        let raw = RawValue::from_string(r#"{"resultType":"complete","tools":[],"ttlMs":60000}"#.into()).unwrap();
        c.put(ListTools::NAME, "{}", &raw);
        assert_eq!(c.get(ListTools::NAME, "{}").unwrap().get(), raw.get());
        assert!(c.get(ListTools::NAME, r#"{"cursor":"1"}"#).is_none());
        c.invalidate(ListTools::NAME);
        assert!(c.get(ListTools::NAME, "{}").is_none());
        let zero = RawValue::from_string(r#"{"tools":[],"ttlMs":0}"#.into()).unwrap();
        c.put(ListTools::NAME, "{}", &zero);
        assert!(c.get(ListTools::NAME, "{}").is_none());
        let read = RawValue::from_string(r#"{"contents":[],"ttlMs":60000}"#.into()).unwrap();
        c.put(ReadResource::NAME, r#"{"uri":"a://x"}"#, &read);
        c.invalidate_read("a://y");
        assert!(c.get(ReadResource::NAME, r#"{"uri":"a://x"}"#).is_some());
        c.invalidate_read("a://x");
        assert!(c.get(ReadResource::NAME, r#"{"uri":"a://x"}"#).is_none());
    }
}
