//! The Redis [`TaskStore`]: a hash per task (`{prefix}:task:{digest(id)}`, fields `rec` = the
//! record as JSON, `rev` = its revision) with the task's TTL, a sorted set of the live tasks that
//! bounds the store cluster-wide (`{prefix}:tasks:live`, score = expiry, `+inf` for none), and per
//! named client a sorted set of its live tasks and a hash of their sizes
//! (`{prefix}:tasks:client:{digest(client)}`, `…:client-bytes:…`).
//!
//! - `create` is one script: drop index entries whose TTL ended, refuse when the store
//!   ([`TaskStoreError::Full`]) or the task's client ([`TaskStoreError::ClientFull`]) is at its
//!   bound, else keep the task. Only expired tasks ever make room: one client cannot push out
//!   another's tasks.
//! - `get` is one `HGET`; the owner and the expiry are checked on the record.
//! - `update` reads the record, applies [`TaskRecord::apply`](mcpkit::server::backend::TaskRecord::apply)
//!   and writes it back with a compare-and-set script on `rev` (retried when another instance
//!   changed the task meanwhile): changes are atomic per task across instances. Nothing is
//!   written for an unknown, foreign, expired or unchanged task.
//! - A task's hash outlives its TTL by [`TOMBSTONE`], so that its owner hears "expired" rather
//!   than "unknown" for a while (the in-memory store remembers the last 1 024 expired ids).

use std::sync::LazyLock;
use std::time::Duration;

use mcpkit::server::backend::{
    Applied, Lookup, StoreFuture, TaskChange, TaskLimits, TaskOwner, TaskRecord, TaskStore, TaskStoreError,
};
use redis::Script;

use crate::clock::now_ms;
use crate::keys::digest;
use crate::Redis;

/// How long an expired task's record is kept, so its owner is told it expired.
pub const TOMBSTONE: Duration = Duration::from_secs(600);
/// How many times an update is retried when other instances keep changing the same task.
const CAS_ATTEMPTS: usize = 16;

/// KEYS: task, live, client's tasks, client's sizes. ARGV: now, capacity, record, live score,
/// expire-at ms (0 = none), member, per-client tasks, per-client bytes, the record's size,
/// '1' when the task has a client. Returns 1, 0 when the store is full, -1 when the client is.
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
if ARGV[10] == '1' then
  local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
  if #gone > 0 then
    redis.call('ZREM', KEYS[3], unpack(gone))
    redis.call('HDEL', KEYS[4], unpack(gone))
  end
  if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return -1 end
  local bytes = tonumber(ARGV[9])
  for _, held in ipairs(redis.call('HVALS', KEYS[4])) do bytes = bytes + tonumber(held) end
  if bytes > tonumber(ARGV[8]) then return -1 end
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6])
  redis.call('HSET', KEYS[4], ARGV[6], ARGV[9])
  -- The client's index lives as long as its longest-lived task.
  local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')[2]
  for i = 3, 4 do
    if last == 'inf' then redis.call('PERSIST', KEYS[i]) else redis.call('PEXPIREAT', KEYS[i], last) end
  end
end
redis.call('HSET', KEYS[1], 'rec', ARGV[3], 'rev', 1)
if ARGV[5] ~= '0' then redis.call('PEXPIREAT', KEYS[1], ARGV[5]) end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[6])
return 1
",
    )
});

/// KEYS: task. ARGV: expected rev, record. Returns 1, or 0 when the revision moved (or the
/// task is gone).
static UPDATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'rec', ARGV[2], 'rev', tonumber(ARGV[1]) + 1)
return 1
",
    )
});

/// Tasks in Redis, shared by every instance of the deployment: within [`TaskLimits`] across
/// all instances, each kept for its TTL. Made by [`Redis::task_store`].
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    limits: TaskLimits,
    live: String,
}

impl Redis {
    /// The task store of this deployment, within `limits` across all instances.
    pub fn task_store(&self, limits: TaskLimits) -> RedisTaskStore {
        RedisTaskStore {
            limits: TaskLimits::new(limits.capacity, limits.per_client, limits.per_client_bytes),
            live: self.keys.fixed("tasks:live"),
            redis: self.clone(),
        }
    }
}

fn unavailable(redis: &Redis, e: &redis::RedisError) -> TaskStoreError {
    TaskStoreError::Unavailable(redis.unreachable(e).to_string())
}

/// Whether the caller `owner` (the runner when `None`) may see `record`.
fn visible(record: &TaskRecord, owner: Option<&TaskOwner>) -> bool {
    owner.is_none_or(|o| *o == record.owner)
}

impl RedisTaskStore {
    fn key(&self, id: &str) -> String {
        self.redis.keys.hashed("task", id)
    }

    /// The record and revision of task `id`, if there is one by that id (not its digest alone).
    async fn read(&self, id: &str) -> Result<Option<(TaskRecord, String)>, TaskStoreError> {
        let key = self.key(id);
        let mut conn = self.redis.conn.clone();
        let (rec, rev): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(&key)
            .arg("rec")
            .arg("rev")
            .query_async(&mut conn)
            .await
            .map_err(|e| unavailable(&self.redis, &e))?;
        let (Some(rec), Some(rev)) = (rec, rev) else {
            return Ok(None);
        };
        let record: TaskRecord = serde_json::from_str(&rec)
            .map_err(|e| TaskStoreError::Unavailable(format!("unreadable task record in Redis key {key}: {e}")))?;
        Ok((record.id == id).then_some((record, rev)))
    }

    async fn create_task(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let json = serde_json::to_string(&record)
            .map_err(|e| TaskStoreError::Unavailable(format!("task record does not serialize: {e}")))?;
        let score = record.expires_ms.map_or_else(|| "+inf".to_owned(), |e| e.to_string());
        let expire_at = record.expires_ms.map_or(0, |e| {
            e.saturating_add(u64::try_from(TOMBSTONE.as_millis()).unwrap_or(u64::MAX))
        });
        let client = record.client.as_deref().unwrap_or_default();
        let mut conn = self.redis.conn.clone();
        let created: i64 = CREATE
            .key(self.key(&record.id))
            .key(&self.live)
            .key(self.redis.keys.hashed("tasks:client", client))
            .key(self.redis.keys.hashed("tasks:client-bytes", client))
            .arg(now_ms())
            .arg(self.limits.capacity)
            .arg(&json)
            .arg(score)
            .arg(expire_at)
            .arg(digest(&record.id))
            .arg(self.limits.per_client)
            .arg(self.limits.per_client_bytes)
            .arg(json.len())
            .arg(if record.client.is_some() { "1" } else { "0" })
            .invoke_async(&mut conn)
            .await
            .map_err(|e| unavailable(&self.redis, &e))?;
        match created {
            1 => Ok(()),
            -1 => Err(self.limits.client_full()),
            _ => Err(TaskStoreError::Full),
        }
    }

    async fn lookup(&self, id: &str, owner: &TaskOwner) -> Result<Lookup, TaskStoreError> {
        Ok(match self.read(id).await? {
            Some((r, _)) if !visible(&r, Some(owner)) => Lookup::Missing,
            Some((r, _)) if r.is_expired(now_ms()) => Lookup::Expired,
            Some((r, _)) => Lookup::Found(Box::new(r)),
            None => Lookup::Missing,
        })
    }

    async fn change(&self, id: &str, owner: Option<&TaskOwner>, change: TaskChange) -> Result<Applied, TaskStoreError> {
        for _ in 0..CAS_ATTEMPTS {
            let Some((mut record, rev)) = self.read(id).await? else {
                return Ok(Applied::Missing);
            };
            if !visible(&record, owner) {
                return Ok(Applied::Missing);
            }
            let now = now_ms();
            if record.is_expired(now) {
                return Ok(Applied::Expired);
            }
            if !record.apply(change.clone(), now) {
                return Ok(Applied::Unchanged(Box::new(record)));
            }
            let json = serde_json::to_string(&record)
                .map_err(|e| TaskStoreError::Unavailable(format!("task record does not serialize: {e}")))?;
            let mut conn = self.redis.conn.clone();
            let written: i64 = UPDATE
                .key(self.key(id))
                .arg(rev)
                .arg(json)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| unavailable(&self.redis, &e))?;
            if written == 1 {
                return Ok(Applied::Changed(Box::new(record)));
            }
        }
        Err(TaskStoreError::Unavailable(format!(
            "task {id:?} kept changing under {CAS_ATTEMPTS} attempts to update it"
        )))
    }
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(self.create_task(record))
    }

    fn get<'a>(&'a self, id: &'a str, owner: &'a TaskOwner) -> StoreFuture<'a, Lookup> {
        Box::pin(self.lookup(id, owner))
    }

    fn update<'a>(&'a self, id: &'a str, owner: Option<&'a TaskOwner>, change: TaskChange) -> StoreFuture<'a, Applied> {
        Box::pin(self.change(id, owner, change))
    }
}
