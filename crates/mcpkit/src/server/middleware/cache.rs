//! [`ResponseCache`]: results of `tools/list`, `resources/read`, `prompts/get` and of the tools
//! named cacheable, kept for a while, in one process or shared by every instance (a
//! [`CacheStore`] on Redis), and forgotten when the catalogue changes.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpkit_types::method::{CallTool, GetPrompt, ListTools, ReadResource};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{Middleware, Next};
use crate::engine::{BoxFuture, HandlerResult};
use crate::server::backend::memory::MemoryCacheStore;
use crate::server::backend::CacheStore;
use crate::server::Call;
use crate::transport::AuthInfo;

/// Caches results: `tools/list`, `resources/read`, `prompts/get`, and `tools/call` of the tools
/// named with [`ResponseCache::tool`] (the same arguments give the same result). A request is
/// answered from the cache when an equal one (same method, params without `_meta`, protocol
/// revision, and — except for a `tools/list` every caller sees alike — same client) was
/// answered within the time to live.
///
/// - **Time to live**: the layer's, or less when the result says less (`ttlMs` on the
///   2026-07-28 wire; `ttlMs: 0` means "fresh on every use": not cached). Errors, tool errors
///   and multi-round requests (`requestState`) are never cached.
/// - **Invalidation**: any catalogue change the server hears (`list_changed`, a resource
///   updated, on this instance or relayed from another) forgets every entry, in a shared store
///   for every instance.
/// - **Store**: this process's by default; `mcpkit_redis::Redis::cache_store` shares it (one
///   round trip per lookup). An unreachable store is skipped (logged): the request is served.
#[derive(Clone)]
pub struct ResponseCache {
    ttl: Duration,
    tools: Arc<HashSet<String>>,
    store: Arc<dyn CacheStore>,
    /// The server's change count when the store was last known to be current.
    seen: Arc<AtomicU64>,
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("ttl", &self.ttl)
            .field("tools", &self.tools)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl ResponseCache {
    /// Results kept for `ttl`, in this process.
    pub fn new(ttl: Duration) -> ResponseCache {
        ResponseCache {
            ttl,
            tools: Arc::default(),
            store: Arc::new(MemoryCacheStore::default()),
            seen: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Also cache calls of tool `name` (one whose result depends only on its arguments and
    /// caller).
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.tools).insert(name.into());
        self
    }

    /// Keep the results in `store` (for example one on Redis, shared by every instance).
    pub fn store(mut self, store: Arc<dyn CacheStore>) -> Self {
        self.store = store;
        self
    }

    /// The key of `call`, if it may be answered from the cache.
    fn key(&self, call: &Call) -> Option<String> {
        let shared = call.is::<ListTools>() && !call.filters_items();
        let cacheable = shared
            || call.is::<ReadResource>()
            || call.is::<GetPrompt>()
            || (call.is::<CallTool>() && call.target().is_some_and(|t| self.tools.contains(t.as_ref())));
        // A session that showed or hid items sees its own catalogue: not cached.
        if !cacheable || call.session.visibility.get().is_some() {
            return None;
        }
        let mut params: Value = match call.params.as_deref() {
            Some(raw) => serde_json::from_str(raw.get()).ok()?,
            None => Value::Null,
        };
        if let Some(p) = params.as_object_mut() {
            // A round of a multi-round request is answered for its state, never from a cache.
            if p.contains_key("requestState") || p.contains_key("inputResponses") {
                return None;
            }
            p.remove("_meta");
        }
        // The client, and the scopes its token carries now (a stepped-up token may see more).
        let client = if shared {
            String::new()
        } else {
            let scopes = call.extensions().get::<AuthInfo>().map(|a| a.scopes.join(" "));
            format!("{}\u{0}{}", call.client(), scopes.unwrap_or_default())
        };
        Some(format!(
            "{}\u{0}{}\u{0}{params}\u{0}{client}",
            call.protocol_version(),
            call.method()
        ))
    }

    /// How long to keep `raw`: `None` when it must not be kept.
    fn ttl_of(&self, raw: &RawValue) -> Option<Duration> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Hints {
            ttl_ms: Option<u64>,
            is_error: Option<bool>,
            result_type: Option<String>,
        }
        let hints: Hints = serde_json::from_str(raw.get()).ok()?;
        if hints.is_error == Some(true) || hints.result_type.is_some_and(|t| t != "complete") {
            return None;
        }
        let ttl = hints
            .ttl_ms
            .map_or(self.ttl, |ms| self.ttl.min(Duration::from_millis(ms)));
        (!ttl.is_zero()).then_some(ttl)
    }
}

impl Middleware for ResponseCache {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let Some(key) = self.key(&call) else {
            return next.run(call);
        };
        let this = self.clone();
        let changes = call.server.changes_seen();
        Box::pin(async move {
            // A change since the store was last current: forget everything first.
            if this.seen.swap(changes, Ordering::AcqRel) != changes {
                if let Err(e) = this.store.clear().await {
                    tracing::warn!("response cache not cleared: {e}");
                    return next.run(call).await;
                }
            }
            match this.store.get(&key).await {
                Ok(Some(bytes)) => {
                    if let Some(raw) = String::from_utf8(bytes)
                        .ok()
                        .and_then(|s| RawValue::from_string(s).ok())
                    {
                        return Ok(raw);
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!("response cache not read: {e}");
                    return next.run(call).await;
                }
            }
            let raw = next.run(call).await?;
            if let Some(ttl) = this.ttl_of(&raw) {
                if let Err(e) = this.store.put(&key, raw.get().as_bytes().to_vec(), ttl).await {
                    tracing::warn!("response cache not written: {e}");
                }
            }
            Ok(raw)
        })
    }

    fn counts_clients(&self) -> bool {
        true
    }
}
