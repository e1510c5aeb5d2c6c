//! The Redis [`SwitchStore`]: the states of switchable catalogue items in one hash,
//! `{prefix}:switches`, one field per item set (`"1"` on, `"0"` off) and the version in the
//! field with the empty name (item names are never empty). A set is one script (read, write,
//! bump, atomically), a version read one `HGET`, a load one `HGETALL` (the states and their
//! version in one read).

use std::collections::HashMap;
use std::sync::LazyLock;

use mcpkit::server::backend::{BackendError, BackendFuture, SwitchStore, Switched, Switches};
use redis::Script;

use crate::Redis;

/// The hash field holding the version.
const VERSION: &str = "";

/// KEYS: the hash. ARGV: item, state. Returns the version after the set and the state stored
/// before (`""`: none); the version moves only when the state does.
static SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local previous = redis.call('HGET', KEYS[1], ARGV[1])
local version
if previous == ARGV[2] then
  version = tonumber(redis.call('HGET', KEYS[1], '') or '0')
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  version = redis.call('HINCRBY', KEYS[1], '', 1)
end
return {version, previous or ''}
",
    )
});

/// The switch states of one deployment, in Redis. Made by
/// [`RedisBackends::connect`](crate::RedisBackends::connect).
#[derive(Debug, Clone)]
pub struct RedisSwitchStore {
    redis: Redis,
    key: String,
}

impl RedisSwitchStore {
    /// The switch store of `redis`'s deployment.
    pub fn new(redis: &Redis) -> RedisSwitchStore {
        RedisSwitchStore {
            key: redis.keys.fixed("switches"),
            redis: redis.clone(),
        }
    }

    fn fail(&self, e: &redis::RedisError) -> BackendError {
        BackendError::Unavailable(self.redis.unreachable(e).to_string())
    }

    fn corrupt(&self, what: &str) -> BackendError {
        BackendError::Unavailable(format!("unreadable switch states in Redis key {}: {what}", self.key))
    }

    fn state(&self, stored: &str) -> Result<Option<bool>, BackendError> {
        match stored {
            "" => Ok(None),
            "1" => Ok(Some(true)),
            "0" => Ok(Some(false)),
            other => Err(self.corrupt(&format!("state {other:?}"))),
        }
    }
}

impl SwitchStore for RedisSwitchStore {
    fn set(&self, item: &str, on: bool) -> BackendFuture<Switched> {
        let (store, item) = (self.clone(), item.to_owned());
        Box::pin(async move {
            if item.is_empty() {
                return Err(BackendError::Unavailable("a switch item name is empty".into()));
            }
            let mut conn = store.redis.conn.clone();
            let (version, previous): (u64, String) = SET
                .key(&store.key)
                .arg(&item)
                .arg(if on { "1" } else { "0" })
                .invoke_async(&mut conn)
                .await
                .map_err(|e| store.fail(&e))?;
            Ok(Switched {
                version,
                previous: store.state(&previous)?,
            })
        })
    }

    fn version(&self) -> BackendFuture<u64> {
        let store = self.clone();
        Box::pin(async move {
            let mut conn = store.redis.conn.clone();
            let version: Option<u64> = redis::cmd("HGET")
                .arg(&store.key)
                .arg(VERSION)
                .query_async(&mut conn)
                .await
                .map_err(|e| store.fail(&e))?;
            Ok(version.unwrap_or(0))
        })
    }

    fn load(&self) -> BackendFuture<Switches> {
        let store = self.clone();
        Box::pin(async move {
            let mut conn = store.redis.conn.clone();
            let fields: HashMap<String, String> = redis::cmd("HGETALL")
                .arg(&store.key)
                .query_async(&mut conn)
                .await
                .map_err(|e| store.fail(&e))?;
            let mut switches = Switches::default();
            for (field, value) in fields {
                if field == VERSION {
                    switches.version = value
                        .parse()
                        .map_err(|_| store.corrupt(&format!("version {value:?}")))?;
                } else if let Some(on) = store.state(&value)? {
                    switches.states.insert(field, on);
                }
            }
            Ok(switches)
        })
    }

    fn ready(&self) -> BackendFuture<()> {
        let redis = self.redis.clone();
        Box::pin(async move { redis.ping().await.map_err(|e| BackendError::Unavailable(e.to_string())) })
    }
}
