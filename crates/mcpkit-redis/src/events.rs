//! The Redis [`EventStore`] on Redis Streams: one stream per SSE stream,
//! `{prefix}:ev:{digest(session)}:{digest(stream)}`, whose entry ids are `0-{position}` (so the
//! SSE event id `{stream}-{position}` names the stream key and the entry id), each entry one
//! field `d` = the event. `XADD … MAXLEN` bounds a stream; its TTL is the store's, renewed on
//! every append. A sorted set per session, `{prefix}:evs:{digest(session)}` (member = the
//! stream's digest, score = when it was first appended to), bounds the streams of a session:
//! the oldest go first, and `remove_session` finds them there.
//!
//! Every operation goes through one ordered queue ([`Ordered`]): it takes effect in call
//! order, as the trait requires, and concurrent appends share pipelines. An append is one
//! script, so positions are numbered 1, 2, 3… in the order appends reach Redis, whichever
//! instance makes them. A replay is one `XRANGE` from the position after the client's; ids
//! that do not parse never get here, and an unknown stream is an empty answer with nothing
//! written.

use bytes::Bytes;
use mcpkit::server::backend::{BackendError, BackendFuture, EventStore};
use redis::{Cmd, FromRedisValue, Value};
use std::time::Duration;

use crate::keys::digest;
use crate::ordered::{queue_closed, Ordered};
use crate::Redis;

/// KEYS: stream, index. ARGV: data, max events, ttl ms, member, now, max streams, stream key
/// prefix. Returns the new event's position.
const APPEND: &str = r"
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local n = 1
if #last > 0 then n = tonumber(string.match(last[1][1], '%-(%d+)$')) + 1 end
redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[2], '0-' .. n, 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
-- First appends order the streams (scores strictly increase, so ties cannot reorder them).
local score = tonumber(ARGV[5])
local top = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #top > 0 and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
if redis.call('ZADD', KEYS[2], 'NX', score, ARGV[4]) == 1 then
  local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[6])
  if extra > 0 then
    for _, old in ipairs(redis.call('ZRANGE', KEYS[2], 0, extra)) do
      if extra > 0 and old ~= ARGV[4] then
        redis.call('ZREM', KEYS[2], old)
        redis.call('DEL', ARGV[7] .. old)
        extra = extra - 1
      end
    end
  end
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return n
";

/// KEYS: stream, index. ARGV: member.
const REMOVE_STREAM: &str = r"
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
";

/// KEYS: index. ARGV: stream key prefix.
const REMOVE_SESSION: &str = r"
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  redis.call('DEL', ARGV[1] .. member)
end
redis.call('DEL', KEYS[1])
return 1
";

/// The SSE events of every session, in Redis. Made by
/// [`RedisBackends::connect`](crate::RedisBackends::connect) (or [`Redis::event_store`]).
#[derive(Debug, Clone)]
pub struct RedisEventStore {
    redis: Redis,
    ordered: Ordered,
    events_per_stream: usize,
    streams_per_session: usize,
    ttl: Duration,
}

impl Redis {
    /// An event store keeping at most `events_per_stream` events per stream and
    /// `streams_per_session` streams per session, each stream for `ttl` after its last event.
    /// Needs a Tokio runtime (it starts the task of its ordered queue).
    pub fn event_store(&self, events_per_stream: usize, streams_per_session: usize, ttl: Duration) -> RedisEventStore {
        RedisEventStore::new(
            self,
            Ordered::start(self.conn.clone()),
            events_per_stream,
            streams_per_session,
            ttl,
        )
    }
}

impl RedisEventStore {
    /// An event store sending through `ordered` (shared with the bus, so that an event
    /// appended before a publish is in Redis before the message is).
    pub(crate) fn new(
        redis: &Redis,
        ordered: Ordered,
        events_per_stream: usize,
        streams_per_session: usize,
        ttl: Duration,
    ) -> RedisEventStore {
        RedisEventStore {
            ordered,
            redis: redis.clone(),
            events_per_stream: events_per_stream.max(1),
            streams_per_session: streams_per_session.max(1),
            ttl: ttl.max(Duration::from_millis(1)),
        }
    }
}

fn eval(source: &str, keys: &[&str]) -> Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(source).arg(keys.len());
    for k in keys {
        cmd.arg(*k);
    }
    cmd
}

impl RedisEventStore {
    fn stream_key(&self, session: &str, stream: &str) -> String {
        format!("{}{}", self.stream_prefix(session), digest(stream))
    }

    fn stream_prefix(&self, session: &str) -> String {
        format!("{}{}:", self.redis.keys.kind_prefix("ev"), digest(session))
    }

    fn index_key(&self, session: &str) -> String {
        self.redis.keys.hashed("evs", session)
    }

    /// Queue `cmd` now; the future reads its reply as `T`.
    fn queue<T: FromRedisValue + Send + 'static>(&self, cmd: Cmd) -> BackendFuture<T> {
        let reply = self.ordered.send(cmd);
        let redis = self.redis.clone();
        Box::pin(async move {
            let value = reply.await.unwrap_or_else(|_| Err(queue_closed()));
            let fail = |e: &redis::RedisError| BackendError::Unavailable(redis.unreachable(e).to_string());
            let value = value.map_err(|e| fail(&e))?;
            T::from_redis_value(value).map_err(|e| fail(&e.into()))
        })
    }
}

/// The position of a stream entry id `0-{position}`.
fn position(id: &[u8]) -> Option<u64> {
    std::str::from_utf8(id).ok()?.strip_prefix("0-")?.parse().ok()
}

/// `XRANGE` entries as (position, data), skipping any entry not written by this crate.
fn entries(value: Value) -> Vec<(u64, Bytes)> {
    let Value::Array(items) = value else { return Vec::new() };
    items
        .into_iter()
        .filter_map(|item| {
            let Value::Array(mut parts) = item else { return None };
            let fields = parts.pop()?;
            let Value::BulkString(id) = parts.pop()? else {
                return None;
            };
            let data = match fields {
                Value::Array(f) => f.into_iter().nth(1)?,
                Value::Map(f) => f.into_iter().next()?.1,
                _ => return None,
            };
            let Value::BulkString(data) = data else { return None };
            Some((position(&id)?, Bytes::from(data)))
        })
        .collect()
}

impl EventStore for RedisEventStore {
    fn append(&self, session: &str, stream: &str, data: Bytes) -> BackendFuture<u64> {
        let (stream_key, index) = (self.stream_key(session, stream), self.index_key(session));
        let mut cmd = eval(APPEND, &[&stream_key, &index]);
        cmd.arg(data.as_ref())
            .arg(self.events_per_stream)
            .arg(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX))
            .arg(digest(stream))
            .arg(crate::clock::now_ms())
            .arg(self.streams_per_session)
            .arg(self.stream_prefix(session));
        self.queue(cmd)
    }

    fn after(&self, session: &str, stream: &str, after: u64) -> BackendFuture<Vec<(u64, Bytes)>> {
        let Some(from) = after.checked_add(1) else {
            return mcpkit::server::backend::ready(Ok(Vec::new()));
        };
        let mut cmd = redis::cmd("XRANGE");
        cmd.arg(self.stream_key(session, stream))
            .arg(format!("0-{from}"))
            .arg("+");
        let reply = self.queue::<Value>(cmd);
        Box::pin(async move { Ok(entries(reply.await?)) })
    }

    fn remove_stream(&self, session: &str, stream: &str) -> BackendFuture<()> {
        let (stream_key, index) = (self.stream_key(session, stream), self.index_key(session));
        let mut cmd = eval(REMOVE_STREAM, &[&stream_key, &index]);
        cmd.arg(digest(stream));
        let reply = self.queue::<i64>(cmd);
        Box::pin(async move { reply.await.map(|_| ()) })
    }

    fn remove_session(&self, session: &str) -> BackendFuture<()> {
        let index = self.index_key(session);
        let mut cmd = eval(REMOVE_SESSION, &[&index]);
        cmd.arg(self.stream_prefix(session));
        let reply = self.queue::<i64>(cmd);
        Box::pin(async move { reply.await.map(|_| ()) })
    }

    fn ready(&self) -> BackendFuture<()> {
        let redis = self.redis.clone();
        Box::pin(async move { redis.ping().await.map_err(|e| BackendError::Unavailable(e.to_string())) })
    }

    fn events_kept(&self) -> BackendFuture<Option<u64>> {
        let redis = self.redis.clone();
        Box::pin(async move { count_events(&redis).await.map(Some) })
    }
}

/// The events of every stream of the deployment (the same figure on every instance): a `SCAN`
/// of its stream keys in batches (so Redis is never blocked for long) and one pipelined `XLEN`
/// per batch. Read-only, so it bypasses the ordered queue.
async fn count_events(redis: &Redis) -> Result<u64, BackendError> {
    let fail = |e: redis::RedisError| BackendError::Unavailable(redis.unreachable(&e).to_string());
    let pattern = format!("{}*", redis.keys.kind_prefix("ev"));
    let mut conn = redis.conn.clone();
    let (mut cursor, mut total) = (0u64, 0u64);
    loop {
        let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .arg("TYPE")
            .arg("stream")
            .query_async(&mut conn)
            .await
            .map_err(fail)?;
        if !keys.is_empty() {
            let mut pipe = redis::pipe();
            for key in &keys {
                pipe.cmd("XLEN").arg(key);
            }
            let lengths: Vec<u64> = pipe.query_async(&mut conn).await.map_err(fail)?;
            total += lengths.iter().sum::<u64>();
        }
        if next == 0 {
            return Ok(total);
        }
        cursor = next;
    }
}
