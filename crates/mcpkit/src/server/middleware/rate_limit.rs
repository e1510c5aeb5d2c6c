//! [`RateLimit`]: token buckets per client, per tool and client, and for the whole server, in
//! one process or shared by every instance of a deployment (a [`RateStore`] on Redis).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcpkit_types::method::{CallTool, Method, Ping};
use mcpkit_types::{ErrorCode, ErrorObject};
use serde_json::json;

use super::{Middleware, Next};
use crate::engine::{BoxFuture, HandlerResult};
use crate::server::backend::memory::MemoryRateStore;
use crate::server::backend::{Bucket, Rate, RateStore, Taken};
use crate::server::Call;

/// Limits the rate of requests (rates are [`Rate`]s: `Rate::per_second(10)`, or `"10/s"` parsed): per client ([`Call::client`]: the verified user, else the
/// address through the trusted proxies), per tool and client, and for the whole server. Every
/// request counts but `ping` (and `initialize`, which no layer sees); one refused is answered
/// with [`ErrorCode::RATE_LIMITED`] and `data: {"retryAfterMs", "limit"}` — over HTTP with
/// status 429 and `Retry-After`. A request takes a token from each of its buckets or from none.
///
/// The buckets live in a [`RateStore`]: this process's by default, or one shared by every
/// instance (`mcpkit_redis::Redis::rate_store`, one round trip per request), so that a client
/// gets N per second from the deployment, not N from each instance. If the store cannot be
/// reached the request is let through (logged): an outage of the limiter's store does not take
/// the server down.
#[derive(Clone)]
pub struct RateLimit {
    per_client: Option<Rate>,
    tools: HashMap<String, Rate>,
    global: Option<Rate>,
    store: Arc<dyn RateStore>,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("per_client", &self.per_client)
            .field("tools", &self.tools)
            .field("global", &self.global)
            .field("store", &self.store)
            .finish()
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit::new()
    }
}

/// Which limit refused, as `data.limit` names it.
const KINDS: [&str; 3] = ["client", "tool", "global"];

impl RateLimit {
    /// No limit yet, counted in this process.
    pub fn new() -> RateLimit {
        RateLimit {
            per_client: None,
            tools: HashMap::new(),
            global: None,
            store: Arc::new(MemoryRateStore::default()),
        }
    }

    /// Each client may make requests at `rate`.
    pub fn per_client(mut self, rate: Rate) -> Self {
        self.per_client = Some(rate);
        self
    }

    /// Each client may call tool `name` at `rate` (on top of [`RateLimit::per_client`]).
    pub fn tool(mut self, name: impl Into<String>, rate: Rate) -> Self {
        self.tools.insert(name.into(), rate);
        self
    }

    /// All clients together may make requests at `rate`.
    pub fn global(mut self, rate: Rate) -> Self {
        self.global = Some(rate);
        self
    }

    /// Count in `store` (for example one on Redis, shared by every instance).
    pub fn store(mut self, store: Arc<dyn RateStore>) -> Self {
        self.store = store;
        self
    }

    /// The buckets `call` takes a token from, and which limit each is.
    fn buckets(&self, call: &Call) -> (Vec<Bucket>, Vec<&'static str>) {
        let mut buckets = Vec::with_capacity(3);
        let mut kinds = Vec::with_capacity(3);
        let tool = if self.tools.is_empty() || !call.is::<CallTool>() {
            None
        } else {
            call.target().and_then(|t| self.tools.get_key_value(t.as_ref()))
        };
        if self.per_client.is_some() || tool.is_some() {
            let client = call.client();
            if let Some(rate) = self.per_client {
                buckets.push(Bucket {
                    key: format!("c\u{0}{client}"),
                    rate,
                });
                kinds.push(KINDS[0]);
            }
            if let Some((name, &rate)) = tool {
                buckets.push(Bucket {
                    key: format!("t\u{0}{name}\u{0}{client}"),
                    rate,
                });
                kinds.push(KINDS[1]);
            }
        }
        if let Some(rate) = self.global {
            buckets.push(Bucket { key: "g".into(), rate });
            kinds.push(KINDS[2]);
        }
        (buckets, kinds)
    }
}

/// The error of a refused request.
pub(crate) fn refused(limit: &str, rate: Rate, retry_after: Duration) -> ErrorObject {
    let ms = u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX).max(1);
    ErrorObject::new(
        ErrorCode::RATE_LIMITED,
        format!("Rate limit exceeded ({limit}: {rate}); retry in {ms} ms"),
    )
    .with_data(json!({ "retryAfterMs": ms, "limit": limit }))
}

impl Middleware for RateLimit {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        if call.method() == Ping::NAME {
            return next.run(call);
        }
        let (buckets, kinds) = self.buckets(&call);
        if buckets.is_empty() {
            return next.run(call);
        }
        let rates: Vec<Rate> = buckets.iter().map(|b| b.rate).collect();
        let taking = self.store.take(buckets);
        Box::pin(async move {
            match taking.await {
                Ok(Taken::Granted) => {}
                Ok(Taken::Refused { bucket, retry_after }) => {
                    let kind = kinds.get(bucket).copied().unwrap_or("client");
                    let rate = rates.get(bucket).copied().unwrap_or(Rate::per_second(1));
                    return Err(refused(kind, rate, retry_after));
                }
                Err(e) => tracing::warn!("rate limit not applied: {e}"),
            }
            next.run(call).await
        })
    }

    fn counts_clients(&self) -> bool {
        self.per_client.is_some() || !self.tools.is_empty()
    }
}
