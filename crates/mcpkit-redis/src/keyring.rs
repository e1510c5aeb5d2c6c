//! The Redis [`KeyRing`]: the `requestState` keys in one key, `{prefix}:keyring` (JSON: the
//! keys, current first, secrets in hex). The first instance that finds none makes it with
//! `SET NX`, so instances starting together agree on one key. [`rotate_key_ring`] (what
//! `mcpkit` calls for a rotation) puts a new key first with a compare-and-set script that also
//! announces the change on the control channel.
//!
//! Each instance caches the ring: it is used without a command while the instance listens to
//! the control channel (a rotation drops it on every instance at once) and for at most
//! [`RELOAD`]; while Redis is unreachable the last ring read keeps sealing and opening, so
//! 2026-07-28 requests in flight go on.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use mcpkit::server::backend::{BackendError, BackendFuture, KeyRing, SealingKey};
use redis::Script;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::error::Error;
use crate::subscriber::{Subscriber, Trust};
use crate::sync::lock;
use crate::Redis;

/// How long a cached ring is used before it is read again, even while invalidations arrive.
pub const RELOAD: Duration = Duration::from_secs(60);
/// How many times a rotation is retried when another one lands meanwhile.
const CAS_ATTEMPTS: usize = 16;
/// The control message of a rotation.
const ROTATED: &[u8] = b"k";

/// KEYS: ring. ARGV: the ring read (empty for none), the new ring, control channel, message.
static ROTATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
",
    )
});

#[derive(Serialize, Deserialize)]
struct StoredKey {
    id: String,
    secret: String,
}

#[derive(Debug, Clone)]
struct Cached {
    keys: Vec<SealingKey>,
    read: Instant,
    generation: Option<u64>,
}

#[derive(Debug)]
struct Shared {
    redis: Redis,
    key: String,
    control: Vec<u8>,
    trust: Option<Trust>,
    cache: Mutex<Option<Cached>>,
}

/// The `requestState` key ring in Redis, shared by every instance of the deployment. Made by
/// [`RedisBackends::connect`](crate::RedisBackends::connect).
#[derive(Debug, Clone)]
pub struct RedisKeyRing {
    shared: Arc<Shared>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn encode(keys: &[SealingKey]) -> String {
    let stored: Vec<StoredKey> = keys
        .iter()
        .map(|k| StoredKey {
            id: k.id.clone(),
            secret: hex(&k.secret),
        })
        .collect();
    serde_json::to_string(&stored).unwrap_or_default()
}

fn no_randomness() -> BackendError {
    BackendError::Unavailable("the OS random source failed: no requestState key could be made".into())
}

impl RedisKeyRing {
    /// The ring of `redis`'s deployment; cached while `subscriber` listens (without one, every
    /// load reads Redis).
    pub(crate) fn new(redis: &Redis, subscriber: Option<&Subscriber>) -> RedisKeyRing {
        let shared = Arc::new(Shared {
            key: redis.keys.fixed("keyring"),
            control: subscriber.map_or_else(|| redis.keys.fixed("bus:ctl").into_bytes(), |s| s.control().to_vec()),
            trust: subscriber.map(Subscriber::trust),
            cache: Mutex::new(None),
            redis: redis.clone(),
        });
        if let Some(subscriber) = subscriber {
            let weak = Arc::downgrade(&shared);
            subscriber.on_control(Box::new(move |message| {
                if message == ROTATED {
                    if let Some(shared) = weak.upgrade() {
                        *lock(&shared.cache) = None;
                    }
                }
            }));
        }
        RedisKeyRing { shared }
    }
}

impl Shared {
    fn fail(&self, e: &redis::RedisError) -> BackendError {
        BackendError::Unavailable(self.redis.unreachable(e).to_string())
    }

    fn decode(&self, json: &str) -> Result<Vec<SealingKey>, BackendError> {
        let unreadable =
            |why: String| BackendError::Unavailable(format!("unreadable key ring in Redis key {}: {why}", self.key));
        let stored: Vec<StoredKey> = serde_json::from_str(json).map_err(|e| unreadable(e.to_string()))?;
        let keys = stored
            .into_iter()
            .map(|k| {
                let secret = unhex(&k.secret).ok_or_else(|| unreadable(format!("key {:?} is not hex", k.id)))?;
                Ok(SealingKey { id: k.id, secret })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        if keys.is_empty() {
            return Err(unreadable("no keys".into()));
        }
        Ok(keys)
    }

    fn fresh_cache(&self) -> Option<Vec<SealingKey>> {
        let generation = self.trust.as_ref()?.generation()?;
        let cache = lock(&self.cache);
        let c = cache.as_ref()?;
        (c.generation == Some(generation) && c.read.elapsed() < RELOAD).then(|| c.keys.clone())
    }

    fn remember(&self, keys: &[SealingKey], generation: Option<u64>) {
        *lock(&self.cache) = Some(Cached {
            keys: keys.to_vec(),
            read: Instant::now(),
            generation,
        });
    }

    async fn read(&self) -> Result<Option<String>, redis::RedisError> {
        let mut conn = self.redis.conn.clone();
        redis::cmd("GET").arg(&self.key).query_async(&mut conn).await
    }

    async fn load_from_redis(&self) -> Result<Vec<SealingKey>, BackendError> {
        let generation = self.trust.as_ref().and_then(Trust::generation);
        if let Some(json) = self.read().await.map_err(|e| self.fail(&e))? {
            let keys = self.decode(&json)?;
            self.remember(&keys, generation);
            return Ok(keys);
        }
        let first = SealingKey::random().ok_or_else(no_randomness)?;
        let json = encode(std::slice::from_ref(&first));
        let mut conn = self.redis.conn.clone();
        let made: Option<String> = redis::cmd("SET")
            .arg(&self.key)
            .arg(&json)
            .arg("NX")
            .query_async(&mut conn)
            .await
            .map_err(|e| self.fail(&e))?;
        let keys = match made {
            Some(_) => vec![first],
            // Another instance made it first: use theirs.
            None => match self.read().await.map_err(|e| self.fail(&e))? {
                Some(json) => self.decode(&json)?,
                None => {
                    return Err(BackendError::Unavailable(
                        "the key ring vanished while it was made".into(),
                    ))
                }
            },
        };
        self.remember(&keys, generation);
        Ok(keys)
    }

    async fn load(&self) -> Result<Vec<SealingKey>, BackendError> {
        if let Some(keys) = self.fresh_cache() {
            return Ok(keys);
        }
        match self.load_from_redis().await {
            Ok(keys) => Ok(keys),
            Err(e) => match lock(&self.cache).as_ref() {
                // Redis is away: the ring read last still seals and opens.
                Some(c) => Ok(c.keys.clone()),
                None => Err(e),
            },
        }
    }

    async fn rotate(&self, keep_previous: usize) -> Result<Vec<SealingKey>, BackendError> {
        for _ in 0..CAS_ATTEMPTS {
            let current = self.read().await.map_err(|e| self.fail(&e))?;
            let mut keys = match &current {
                Some(json) => self.decode(json)?,
                None => Vec::new(),
            };
            keys.truncate(keep_previous);
            let new = loop {
                let k = SealingKey::random().ok_or_else(no_randomness)?;
                if keys.iter().all(|old| old.id != k.id) {
                    break k;
                }
            };
            keys.insert(0, new);
            let mut conn = self.redis.conn.clone();
            let written: i64 = ROTATE
                .key(&self.key)
                .arg(current.unwrap_or_default())
                .arg(encode(&keys))
                .arg(self.control.as_slice())
                .arg(ROTATED)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| self.fail(&e))?;
            if written == 1 {
                *lock(&self.cache) = None;
                return Ok(keys);
            }
        }
        Err(BackendError::Unavailable(format!(
            "the key ring kept changing under {CAS_ATTEMPTS} attempts to rotate it"
        )))
    }
}

impl KeyRing for RedisKeyRing {
    fn load(&self) -> BackendFuture<Vec<SealingKey>> {
        let shared = self.shared.clone();
        Box::pin(async move { shared.load().await })
    }

    fn rotate(&self, keep_previous: usize) -> BackendFuture<Vec<SealingKey>> {
        let shared = self.shared.clone();
        Box::pin(async move { shared.rotate(keep_previous).await })
    }

    fn ready(&self) -> BackendFuture<()> {
        let shared = self.shared.clone();
        Box::pin(async move {
            shared
                .redis
                .ping()
                .await
                .map_err(|e| BackendError::Unavailable(e.to_string()))
        })
    }
}

/// Rotate the `requestState` key ring of the deployment `prefix` on the Redis at `url`: a new
/// key seals from now on, the previous current key and `keep_previous - 1` older ones still
/// open (so states in flight stay valid). Every running instance drops its cached ring at once.
/// Returns the key ids, current first. This is what `mcpkit` runs for a rotation.
pub async fn rotate_key_ring(url: &str, prefix: &str, keep_previous: usize) -> Result<Vec<String>, Error> {
    let redis = Redis::connect(url, prefix).await?;
    let ring = RedisKeyRing::new(&redis, None);
    match ring.shared.rotate(keep_previous).await {
        Ok(keys) => Ok(keys.into_iter().map(|k| k.id).collect()),
        Err(e) => Err(Error::Unreachable {
            addr: redis.addr().to_owned(),
            reason: e.to_string(),
        }),
    }
}
