//! The Redis [`SessionStore`]: a hash per session (`{prefix}:session:{digest(id)}`: `rec` = the
//! record as JSON, `rev` = its revision, `seen` = last-seen ms) whose TTL is the idle expiry,
//! one sorted set `{prefix}:sessions` (member = the digest, score = when it expires) that holds
//! the session cap for every instance, and one such set per client,
//! `{prefix}:client:{digest(client)}` (the sessions of that client, the client being the
//! record's `client`), that holds the per-client cap; a client's set expires with its last
//! session. `create` is one script that drops the expired members of both sets, then refuses a
//! duplicate, a client at its cap or a full index, then writes — so the checks and the insert
//! cannot interleave with another instance's, and cost the same however many sessions there
//! are. Each `touch` moves the member's scores with the key's TTL, so the sets count exactly the
//! live sessions; `delete` takes the member out of both. Scores, TTLs and the expiry of members
//! are all on Redis's own clock (`TIME`, read in the scripts), never an instance's: a session
//! whose key has expired never counts, in the total or for its client, however far the
//! instances' clocks are from Redis's.
//!
//! Requests cost little: each instance caches the records it served, with their revision. A
//! lookup of a cached record reads only the revision (`HMGET rev seen`), and the whole record
//! only when another instance changed it; a lookup of a record not cached reads it whole (one
//! command either way). `touch` of a record this instance knows to be live is lazy: it
//! writes only when this instance last pushed the TTL more than an eighth of the TTL ago, and
//! then without waiting (queued behind the other commands); `touch` and `delete` of a record
//! not cached look it up first (they need its client). So a handshake-era request costs
//! one command and one round trip, now and then one more command in the same queue; a session
//! expires between ⅞·TTL and TTL after its last request. Deletion and expiry are seen at once
//! by every instance (the revision is gone). Nothing is ever written for an id that was never
//! created: `touch`, `update` and `delete` find nothing and write nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use mcpkit::server::backend::{
    Admitted, BackendError, BackendFuture, SessionLimits, SessionRecord, SessionStore, SessionUpdate,
};
use redis::Script;
use tokio::time::Instant;

use crate::clock::now_ms;
use crate::keys::digest;
use crate::ordered::Ordered;
use crate::sync::lock;
use crate::Redis;

/// How many times an update is retried when other instances change the same record meanwhile.
const CAS_ATTEMPTS: usize = 16;
/// Cached records kept before the expired ones are swept (then all, if none had expired).
const CACHE_BOUND: usize = 100_000;

/// Now on Redis's own clock, in ms (a Lua expression): the clock its key TTLs run on, so a
/// member of the session sets expires exactly when its session's key does, whatever the
/// instances' clocks say.
macro_rules! redis_now_ms {
    () => {
        "local t = redis.call('TIME')\nlocal now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))\n"
    };
}

/// KEYS: session, index[, client set]. ARGV: seen (the instance's now, for the record), max,
/// record, TTL in ms, member, max per client. 1 created, 0 full, 2 duplicate, 3 the client is
/// at its cap. The expired members of both sets are dropped first, on Redis's clock, so an
/// expired session never counts. A client set lives until its last member expires (its
/// highest score).
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        redis_now_ms!(),
        r"
local at = string.format('%d', tonumber(now) + tonumber(ARGV[4]))
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 then return 2 end
if KEYS[3] then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 3 end
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[3], 'rev', 1, 'seen', ARGV[1])
redis.call('PEXPIREAT', KEYS[1], at)
redis.call('ZADD', KEYS[2], at, ARGV[5])
if KEYS[3] then
  redis.call('ZADD', KEYS[3], at, ARGV[5])
  redis.call('PEXPIREAT', KEYS[3], redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2])
end
return 1
"
    ))
});

/// KEYS: session, index[, client set]. ARGV: TTL in ms, member, seen (the instance's now). 1
/// refreshed, 0 no such session. The key's TTL and the members' scores move together, on
/// Redis's clock.
const TOUCH_SOURCE: &str = concat!(
    redis_now_ms!(),
    r"
local at = string.format('%d', tonumber(now) + tonumber(ARGV[1]))
if redis.call('PEXPIREAT', KEYS[1], at) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'seen', ARGV[3])
redis.call('ZADD', KEYS[2], 'XX', at, ARGV[2])
if KEYS[3] and redis.call('ZADD', KEYS[3], 'XX', 'CH', at, ARGV[2]) == 1 then
  redis.call('PEXPIREAT', KEYS[3], redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2])
end
return 1
"
);

/// KEYS: index. The live members (score after Redis's now).
static LIVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        redis_now_ms!(),
        "return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')"
    ))
});

/// KEYS: index. How many members are live (score after Redis's now).
static COUNT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        redis_now_ms!(),
        "return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')"
    ))
});

/// KEYS: session. ARGV: expected rev, record. The new revision, or nil when the revision moved
/// or the session is gone.
static UPDATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then return false end
local rev = tonumber(ARGV[1]) + 1
redis.call('HSET', KEYS[1], 'rec', ARGV[2], 'rev', rev)
return rev
",
    )
});

/// KEYS: session, index[, client set]. ARGV: member. 1 deleted, 0 none. (A client set left
/// empty is gone: Redis removes an empty sorted set.)
static DELETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('ZREM', KEYS[2], ARGV[1])
if KEYS[3] then redis.call('ZREM', KEYS[3], ARGV[1]) end
return redis.call('DEL', KEYS[1])
",
    )
});

#[derive(Debug, Clone)]
struct Cached {
    record: SessionRecord,
    /// Its revision in Redis.
    rev: String,
    /// When this instance last pushed the TTL to Redis (and which TTL).
    refreshed: Option<(Instant, Duration)>,
}

#[derive(Debug)]
struct Shared {
    redis: Redis,
    ordered: Ordered,
    index: String,
    cache: Mutex<HashMap<String, Cached>>,
    /// The TTL of the last create/touch, in ms (0 before any): what a cache miss refreshes.
    ttl_ms: AtomicU64,
}

/// The longest TTL the scripts add to Redis's now (100 years, in ms): well within the integers
/// Lua's numbers hold exactly.
const MAX_TTL_MS: u64 = 100 * 365 * 24 * 3600 * 1000;

/// A TTL in ms, from 1 to [`MAX_TTL_MS`] (what the scripts add to Redis's now).
fn ttl_ms(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).clamp(1, MAX_TTL_MS)
}

/// Handshake-era sessions in Redis, valid on every instance of the deployment. Made by
/// [`RedisBackends::connect`](crate::RedisBackends::connect).
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    shared: Arc<Shared>,
}

impl RedisSessionStore {
    /// The sessions of `redis`'s deployment.
    pub(crate) fn new(redis: &Redis, ordered: Ordered) -> RedisSessionStore {
        let shared = Arc::new(Shared {
            ordered,
            index: redis.keys.fixed("sessions"),
            cache: Mutex::new(HashMap::new()),
            ttl_ms: AtomicU64::new(0),
            redis: redis.clone(),
        });
        RedisSessionStore { shared }
    }
}

impl Shared {
    fn key(&self, id: &str) -> String {
        self.redis.keys.hashed("session", id)
    }

    /// The set of `client`'s sessions.
    fn client_key(&self, client: &str) -> String {
        self.redis.keys.hashed("client", client)
    }

    fn fail(&self, e: &redis::RedisError) -> BackendError {
        BackendError::Unavailable(self.redis.unreachable(e).to_string())
    }

    fn corrupt(&self, id: &str, e: &serde_json::Error) -> BackendError {
        BackendError::Unavailable(format!("unreadable session record in Redis key {}: {e}", self.key(id)))
    }

    fn cached(&self, id: &str) -> Option<Cached> {
        lock(&self.cache).get(id).cloned()
    }

    fn remember(&self, record: SessionRecord, rev: String, refreshed: Option<(Instant, Duration)>) {
        let mut cache = lock(&self.cache);
        if cache.len() >= CACHE_BOUND && !cache.contains_key(&record.id) {
            // Forget the records whose TTL (as this instance set it) ran out; all, if none did.
            cache.retain(|_, c| c.refreshed.is_some_and(|(at, ttl)| at.elapsed() < ttl));
            if cache.len() >= CACHE_BOUND {
                cache.clear();
            }
        }
        let refreshed = refreshed.or_else(|| cache.get(&record.id).and_then(|c| c.refreshed));
        cache.insert(record.id.clone(), Cached { record, rev, refreshed });
    }

    fn forget(&self, id: &str) {
        lock(&self.cache).remove(id);
    }

    fn ttl(&self) -> Option<Duration> {
        match self.ttl_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        }
    }

    fn set_ttl(&self, ttl: Duration) {
        self.ttl_ms.store(
            u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1),
            Ordering::Relaxed,
        );
    }

    async fn create(
        &self,
        mut record: SessionRecord,
        client: Option<String>,
        limits: SessionLimits,
    ) -> Result<Admitted, BackendError> {
        let SessionLimits {
            max_sessions,
            max_per_client,
            ttl,
        } = limits;
        self.set_ttl(ttl);
        record.client = client;
        let json = serde_json::to_string(&record).map_err(|e| self.corrupt(&record.id, &e))?;
        let now = now_ms();
        let started = Instant::now();
        let mut invocation = CREATE.key(self.key(&record.id));
        invocation.key(&self.index);
        if let Some(client) = &record.client {
            invocation.key(self.client_key(client));
        }
        invocation
            .arg(now)
            .arg(max_sessions)
            .arg(json)
            .arg(ttl_ms(ttl))
            .arg(digest(&record.id))
            .arg(max_per_client);
        let mut conn = self.redis.conn.clone();
        let answer: i64 = invocation.invoke_async(&mut conn).await.map_err(|e| self.fail(&e))?;
        Ok(match answer {
            1 => {
                self.remember(record, "1".into(), Some((started, ttl)));
                Admitted::Yes
            }
            2 => Admitted::Duplicate,
            3 => Admitted::ClientFull,
            _ => Admitted::Full,
        })
    }

    /// The TTL to push now for a session cached as `cached`, if a refresh is due.
    fn refresh_due(&self, cached: Option<&Cached>) -> Option<Duration> {
        let ttl = self.ttl()?;
        match cached.and_then(|c| c.refreshed) {
            Some((at, t)) if t == ttl && at.elapsed() < ttl / 8 => None,
            _ => Some(ttl),
        }
    }

    /// The TTL refresh of the session `record`.
    fn touch_cmd(&self, record: &SessionRecord, ttl: Duration) -> redis::Cmd {
        let now = now_ms();
        // EVAL, not EVALSHA: the ordered queue's pipelines cannot load a script Redis forgot.
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(TOUCH_SOURCE);
        match &record.client {
            Some(client) => cmd
                .arg(3)
                .arg(self.key(&record.id))
                .arg(&self.index)
                .arg(self.client_key(client)),
            None => cmd.arg(2).arg(self.key(&record.id)).arg(&self.index),
        };
        cmd.arg(ttl_ms(ttl)).arg(digest(&record.id)).arg(now);
        cmd
    }

    /// The record of `id` and its revision, in one command: only the revision when the cached
    /// record is current (the whole record again only if another instance changed it).
    async fn lookup(&self, id: &str) -> Result<Option<(SessionRecord, String)>, BackendError> {
        let key = self.key(id);
        let cached = self.cached(id);
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&key).arg("rev").arg("seen");
        if cached.is_none() {
            cmd.arg("rec");
        }
        let mut conn = self.redis.conn.clone();
        let fields: Vec<Option<String>> = cmd.query_async(&mut conn).await.map_err(|e| self.fail(&e))?;
        let mut fields = fields.into_iter();
        let (rev, seen, rec) = (
            fields.next().flatten(),
            fields.next().flatten(),
            fields.next().flatten(),
        );
        let Some(rev) = rev else {
            self.forget(id);
            return Ok(None);
        };
        let mut record = match (cached, rec) {
            (Some(c), _) if c.rev == rev => c.record,
            (_, Some(rec)) => self.parse(id, &rec)?,
            // Changed on another instance since it was cached: read it whole.
            (Some(_), None) => {
                self.forget(id);
                return Box::pin(self.lookup(id)).await;
            }
            (None, None) => return Ok(None),
        };
        if record.id != id {
            return Ok(None);
        }
        if let Some(seen) = seen.and_then(|s| s.parse::<u64>().ok()) {
            record.last_seen_ms = record.last_seen_ms.max(seen);
        }
        self.remember(record.clone(), rev.clone(), None);
        Ok(Some((record, rev)))
    }

    fn parse(&self, id: &str, rec: &str) -> Result<SessionRecord, BackendError> {
        serde_json::from_str(rec).map_err(|e| self.corrupt(id, &e))
    }

    async fn get(&self, id: &str) -> Result<Option<SessionRecord>, BackendError> {
        Ok(self.lookup(id).await?.map(|(r, _)| r))
    }

    async fn update(&self, id: &str, change: SessionUpdate) -> Result<bool, BackendError> {
        for _ in 0..CAS_ATTEMPTS {
            let Some((mut record, rev)) = self.lookup(id).await? else {
                return Ok(false);
            };
            record.apply(&change);
            let json = serde_json::to_string(&record).map_err(|e| self.corrupt(id, &e))?;
            let mut conn = self.redis.conn.clone();
            let written: Option<i64> = UPDATE
                .key(self.key(id))
                .arg(&rev)
                .arg(json)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| self.fail(&e))?;
            if let Some(new_rev) = written {
                self.remember(record, new_rev.to_string(), None);
                return Ok(true);
            }
            // Another instance changed it meanwhile: read it again.
            self.forget(id);
        }
        Err(BackendError::Unavailable(format!(
            "session record kept changing under {CAS_ATTEMPTS} attempts to update it"
        )))
    }

    async fn touch(&self, id: &str, ttl: Duration) -> Result<bool, BackendError> {
        self.set_ttl(ttl);
        let started = Instant::now();
        // The refresh needs the record (its client's set moves too): a session this instance
        // has not cached is read first, which also tells whether it is live.
        let cached = match self.cached(id) {
            Some(c) => c,
            None => {
                if self.lookup(id).await?.is_none() {
                    return Ok(false);
                }
                match self.cached(id) {
                    Some(c) => c,
                    None => return Ok(false),
                }
            }
        };
        if self.refresh_due(Some(&cached)).is_none() {
            return Ok(true);
        }
        // Known live (a lookup read it): refresh in the background, in call order with the
        // other queued commands, without a round trip of its own.
        drop(self.ordered.send(self.touch_cmd(&cached.record, ttl)));
        self.refreshed(id, started, ttl);
        Ok(true)
    }

    fn refreshed(&self, id: &str, at: Instant, ttl: Duration) {
        if let Some(c) = lock(&self.cache).get_mut(id) {
            c.record.last_seen_ms = now_ms();
            c.refreshed = Some((at, ttl));
        }
    }

    async fn delete(&self, id: &str) -> Result<bool, BackendError> {
        // The record names the client's set; a session this instance has not cached is read
        // first (nothing is written for one that is not there).
        let record = match self.cached(id) {
            Some(c) => c.record,
            None => match self.lookup(id).await? {
                Some((record, _)) => record,
                None => return Ok(false),
            },
        };
        self.forget(id);
        let mut invocation = DELETE.key(self.key(id));
        invocation.key(&self.index);
        if let Some(client) = &record.client {
            invocation.key(self.client_key(client));
        }
        invocation.arg(digest(id));
        let mut conn = self.redis.conn.clone();
        let deleted: i64 = invocation.invoke_async(&mut conn).await.map_err(|e| self.fail(&e))?;
        Ok(deleted == 1)
    }

    async fn count(&self) -> Result<usize, BackendError> {
        let mut conn = self.redis.conn.clone();
        let n: usize = COUNT
            .key(&self.index)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.fail(&e))?;
        Ok(n)
    }
}

impl Shared {
    /// The live records: the index's live members, then their records in one pipeline.
    async fn live(&self) -> Result<Vec<SessionRecord>, BackendError> {
        let mut conn = self.redis.conn.clone();
        let members: Vec<String> = LIVE
            .key(&self.index)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| self.fail(&e))?;
        if members.is_empty() {
            return Ok(Vec::new());
        }
        let prefix = self.redis.keys.kind_prefix("session");
        let mut pipe = redis::pipe();
        for m in &members {
            pipe.cmd("HGET").arg(format!("{prefix}{m}")).arg("rec");
        }
        let recs: Vec<Option<String>> = pipe.query_async(&mut conn).await.map_err(|e| self.fail(&e))?;
        // A record gone meanwhile (expired, deleted) is left out; an unreadable one too.
        Ok(recs
            .into_iter()
            .flatten()
            .filter_map(|rec| serde_json::from_str::<SessionRecord>(&rec).ok())
            .collect())
    }
}

impl SessionStore for RedisSessionStore {
    fn create(&self, record: SessionRecord, client: Option<String>, limits: SessionLimits) -> BackendFuture<Admitted> {
        let shared = self.shared.clone();
        Box::pin(async move { shared.create(record, client, limits).await })
    }

    fn get(&self, id: &str) -> BackendFuture<Option<SessionRecord>> {
        let (shared, id) = (self.shared.clone(), id.to_owned());
        Box::pin(async move { shared.get(&id).await })
    }

    fn update(&self, id: &str, change: SessionUpdate) -> BackendFuture<bool> {
        let (shared, id) = (self.shared.clone(), id.to_owned());
        Box::pin(async move { shared.update(&id, change).await })
    }

    fn touch(&self, id: &str, ttl: Duration) -> BackendFuture<bool> {
        let (shared, id) = (self.shared.clone(), id.to_owned());
        Box::pin(async move { shared.touch(&id, ttl).await })
    }

    fn delete(&self, id: &str) -> BackendFuture<bool> {
        let (shared, id) = (self.shared.clone(), id.to_owned());
        Box::pin(async move { shared.delete(&id).await })
    }

    fn count(&self) -> BackendFuture<usize> {
        let shared = self.shared.clone();
        Box::pin(async move { shared.count().await })
    }

    fn live(&self) -> BackendFuture<Vec<SessionRecord>> {
        let shared = self.shared.clone();
        Box::pin(async move { shared.live().await })
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
