//! Redis backends for mcpkit: the state that the instances of one MCP server share, so that
//! any of them, behind a load balancer without affinity, serves every request (the
//! "Scale-out" design). Any Redis ≥ 6.2 or Valkey. The crate README has the design notes
//! (key names, the session cap, costs, failures).
//!
//! | backend | Redis shape |
//! | --- | --- |
//! | sessions ([`RedisSessionStore`]) | hash per session, TTL = idle expiry; one sorted set holds the cap, one per client the per-client cap; cached per instance, invalidated over pub/sub, TTL refreshed lazily |
//! | events ([`RedisEventStore`]) | one Redis Stream per SSE stream, `MAXLEN`-bounded, with TTL; event id = stream + entry id |
//! | bus ([`RedisBus`]) | pub/sub channels per session, per instance, and one for all; one subscriber connection per instance |
//! | key ring ([`RedisKeyRing`]) | one key, made with `SET NX`, rotated by [`rotate_key_ring`]; cached per instance |
//! | tasks ([`RedisTaskStore`]) | hash per task with TTL, owner-checked; two sorted sets hold the bound |
//! | switches ([`RedisSwitchStore`]) | one hash: a field per switchable item set, and the version; set by one script |
//! | response cache ([`RedisCacheStore`]) | a string per result with its TTL, under a generation that a catalogue change bumps; one script per lookup |
//! | rate limits ([`RedisRateStore`]) | a key per bucket holding when its next token is due, TTL until full; taken by one script |
//!
//! ```no_run
//! # async fn run(server: mcpkit::Server) -> Result<(), Box<dyn std::error::Error>> {
//! let backends = mcpkit_redis::RedisBackends::connect("redis://127.0.0.1:6379", "mcpkit", "web-1").await?;
//! # let _ = (server, backends); Ok(()) }
//! ```
//!
//! Key names are `{prefix}:{kind}:…`; any part that came from a client is the hex of its
//! SHA-256, never the client's bytes, and nothing is written for an id that was never issued.
//! Costs: a handshake-era request whose session this instance served recently costs no
//! command; otherwise at most two, in one pipelined round trip. A 2026-07-28 `tools/call`
//! costs none. While Redis is unreachable every operation fails at once with
//! [`Error::Unreachable`] (as `BackendError::Unavailable`: the HTTP layer answers 503), and
//! the connections come back by themselves.
#![forbid(unsafe_code)]

mod backends;
mod bus;
mod cache;
mod clock;
mod connection;
mod error;
mod events;
mod keyring;
mod keys;
mod ordered;
mod rates;
mod sessions;
mod subscriber;
mod switches;
mod sync;
mod tasks;

pub use backends::{RedisBackends, EVENTS_PER_STREAM, EVENT_TTL, STREAMS_PER_SESSION};
pub use bus::RedisBus;
pub use cache::RedisCacheStore;
pub use connection::Redis;
pub use error::Error;
pub use events::RedisEventStore;
pub use keyring::{rotate_key_ring, RedisKeyRing, RELOAD};
pub use rates::RedisRateStore;
pub use sessions::RedisSessionStore;
pub use switches::RedisSwitchStore;
pub use tasks::{RedisTaskStore, TOMBSTONE};
