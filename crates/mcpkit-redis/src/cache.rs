//! The Redis [`CacheStore`]: the response cache shared by every instance of a deployment.
//! Entries are strings `{prefix}:cache:{generation}:{digest(key)}` with their time to live; the
//! generation (`{prefix}:cache:gen`) is bumped by [`CacheStore::clear`], which makes every
//! entry unreachable at once for every instance (the old ones expire by themselves). A lookup
//! or a store is one script: one round trip.

use std::sync::LazyLock;
use std::time::Duration;

use mcpkit::server::backend::{BackendError, BackendFuture, CacheStore};
use redis::Script;

use crate::keys::digest;
use crate::Redis;

/// KEYS: the generation. ARGV: the entry key's prefix, the entry's digest.
static GET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local g = redis.call('GET', KEYS[1]) or '0'
return redis.call('GET', ARGV[1] .. g .. ':' .. ARGV[2])
",
    )
});

/// KEYS: the generation. ARGV: the entry key's prefix, the entry's digest, the value, the TTL
/// in ms.
static PUT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local g = redis.call('GET', KEYS[1]) or '0'
redis.call('SET', ARGV[1] .. g .. ':' .. ARGV[2], ARGV[3], 'PX', ARGV[4])
return 1
",
    )
});

/// The response cache of a deployment, on Redis.
#[derive(Debug, Clone)]
pub struct RedisCacheStore {
    redis: Redis,
    generation: String,
    entries: String,
    /// The largest value kept, in bytes: larger results are not cached.
    max_value: usize,
}

impl Redis {
    /// The response cache of this deployment (give it to `ResponseCache::store`); results over
    /// 1 MiB are not kept.
    pub fn cache_store(&self) -> RedisCacheStore {
        RedisCacheStore {
            generation: self.keys.fixed("cache:gen"),
            entries: self.keys.kind_prefix("cache"),
            redis: self.clone(),
            max_value: 1024 * 1024,
        }
    }
}

impl RedisCacheStore {
    fn failed(&self, e: &redis::RedisError) -> BackendError {
        BackendError::Unavailable(self.redis.unreachable(e).to_string())
    }
}

impl CacheStore for RedisCacheStore {
    fn get(&self, key: &str) -> BackendFuture<Option<Vec<u8>>> {
        let this = self.clone();
        let entry = digest(key);
        Box::pin(async move {
            let mut conn = this.redis.conn.clone();
            GET.key(&this.generation)
                .arg(&this.entries)
                .arg(entry)
                .invoke_async::<Option<Vec<u8>>>(&mut conn)
                .await
                .map_err(|e| this.failed(&e))
        })
    }

    fn put(&self, key: &str, value: Vec<u8>, ttl: Duration) -> BackendFuture<()> {
        let this = self.clone();
        let entry = digest(key);
        Box::pin(async move {
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            if ms == 0 || value.len() > this.max_value {
                return Ok(());
            }
            let mut conn = this.redis.conn.clone();
            PUT.key(&this.generation)
                .arg(&this.entries)
                .arg(entry)
                .arg(value)
                .arg(ms)
                .invoke_async::<i64>(&mut conn)
                .await
                .map(drop)
                .map_err(|e| this.failed(&e))
        })
    }

    fn clear(&self) -> BackendFuture<()> {
        let this = self.clone();
        Box::pin(async move {
            let mut conn = this.redis.conn.clone();
            redis::cmd("INCR")
                .arg(&this.generation)
                .query_async::<i64>(&mut conn)
                .await
                .map(drop)
                .map_err(|e| this.failed(&e))
        })
    }
}
