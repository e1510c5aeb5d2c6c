//! The Redis [`RateStore`]: the rate-limit layer's buckets, counted by every instance of a
//! deployment together. A bucket is one string key, `{prefix}:rate:{digest(bucket)}`, holding
//! the time its next token is due (GCRA, microseconds of Redis's own clock), with a TTL of the
//! time until it is full again, so an idle bucket is gone. A request takes from all of its
//! buckets, or from none, in one script: one round trip (`EVALSHA`) per limited request.

use std::sync::LazyLock;
use std::time::Duration;

use mcpkit::server::backend::{BackendError, BackendFuture, Bucket, RateStore, Taken};
use redis::Script;

use crate::Redis;

/// KEYS: the buckets. ARGV: per bucket its token interval and its window (µs). Reads Redis's
/// clock (`TIME`: every instance counts on the same one). Returns {0} when every bucket gave a
/// token, or {i, wait µs} for the first that could not (nothing taken then).
static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local next = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i - 1])
  local window = tonumber(ARGV[2 * i])
  local due = tonumber(redis.call('GET', key) or now)
  if due < now then due = now end
  local n = due + interval
  if n - now > window then return {i, n - now - window} end
  next[i] = n
end
for i, key in ipairs(KEYS) do
  -- '%.0f': Lua would write a number this large with 14 significant digits.
  redis.call('SET', key, string.format('%.0f', next[i]), 'PX', math.max(1, math.ceil((next[i] - now) / 1000)))
end
return {0}
",
    )
});

/// The rate-limit buckets of a deployment, on Redis.
#[derive(Debug, Clone)]
pub struct RedisRateStore {
    redis: Redis,
}

impl Redis {
    /// The rate-limit buckets of this deployment (give it to `RateLimit::store`).
    pub fn rate_store(&self) -> RedisRateStore {
        RedisRateStore { redis: self.clone() }
    }
}

impl RateStore for RedisRateStore {
    fn take(&self, buckets: Vec<Bucket>) -> BackendFuture<Taken> {
        let redis = self.redis.clone();
        Box::pin(async move {
            let mut invocation = TAKE.prepare_invoke();
            for b in &buckets {
                invocation
                    .key(redis.keys.hashed("rate", &b.key))
                    .arg(b.rate.interval_us())
                    .arg(b.rate.window_us());
            }
            let mut conn = redis.conn.clone();
            let answer: Vec<i64> = invocation
                .invoke_async(&mut conn)
                .await
                .map_err(|e| BackendError::Unavailable(redis.unreachable(&e).to_string()))?;
            Ok(match answer.as_slice() {
                [0] => Taken::Granted,
                [i, wait] => Taken::Refused {
                    bucket: usize::try_from(*i - 1).unwrap_or(0),
                    retry_after: Duration::from_micros(u64::try_from(*wait).unwrap_or(0)),
                },
                other => {
                    return Err(BackendError::Unavailable(format!(
                        "unexpected answer from the rate-limit script: {other:?}"
                    )))
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    // The key of a bucket never holds the client's bytes.
    #[test]
    fn bucket_keys_are_digests() {
        let keys = crate::keys::Keys::new("p");
        let key = keys.hashed("rate", "c\u{0}peer:10.0.0.1");
        assert!(key.starts_with("p:rate:") && !key.contains("10.0.0.1"), "{key}");
        assert_eq!(key.len(), "p:rate:".len() + crate::keys::digest("x").len());
    }
}
