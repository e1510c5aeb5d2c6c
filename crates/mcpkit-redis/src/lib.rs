//! Redis backends for mcpkit: the state that instances of one MCP server share so that any of
//! them, behind a load balancer without affinity, serves every request (the "Scale-out" design
//! of the architecture notes).
//!
//! | backend | Redis shape |
//! | --- | --- |
//! | tasks ([`RedisTaskStore`]) | hash per task with TTL, owner-checked; two sorted sets bound the store |
//!
//! Connect once with [`Redis::connect`]; it reconnects by itself. Any Redis ≥ 6.2 or Valkey.
//! Key names are `{prefix}:{kind}:…`; parts that come from clients are hashed (never their bytes).
#![forbid(unsafe_code)]

mod clock;
mod connection;
mod error;
mod keys;
mod tasks;

pub use connection::Redis;
pub use error::Error;
pub use tasks::{RedisTaskStore, TOMBSTONE};
