//! [`RedisBackends::connect`]: every backend of one instance on one Redis.

use std::sync::Arc;
use std::time::Duration;

use mcpkit::server::backend::{valid_instance_id, Backends, TaskLimits};

use crate::bus::RedisBus;
use crate::error::Error;
use crate::events::RedisEventStore;
use crate::keyring::RedisKeyRing;
use crate::ordered::Ordered;
use crate::sessions::RedisSessionStore;
use crate::subscriber::Subscriber;
use crate::switches::RedisSwitchStore;
use crate::Redis;

/// Events kept per SSE stream (as the in-memory store).
pub const EVENTS_PER_STREAM: usize = 256;
/// SSE streams kept per session (as the in-memory store).
pub const STREAMS_PER_SESSION: usize = 64;
/// How long a stream is kept after its last event (as the in-memory store).
pub const EVENT_TTL: Duration = Duration::from_secs(3600);

/// The Redis backends of one instance.
#[derive(Debug)]
pub struct RedisBackends;

impl RedisBackends {
    /// Connect instance `instance_id` (unique among the deployment's instances; 1 to 64 of
    /// `[A-Za-z0-9_.-]`) of the deployment `prefix` to the Redis at `url`: the backends for
    /// `HttpServer::scale_out` (and `backends.tasks` for `TasksConfig::store`). Two connections:
    /// one multiplexed for commands, one for pub/sub; both reconnect by themselves. Fails when
    /// an argument is invalid or Redis does not answer now. Tasks are kept within
    /// [`TaskLimits::default`] (as the in-memory store); see [`RedisBackends::connect_with`].
    pub async fn connect(url: &str, prefix: &str, instance_id: &str) -> Result<Backends, Error> {
        RedisBackends::connect_with(url, prefix, instance_id, TaskLimits::default()).await
    }

    /// [`RedisBackends::connect`] with the task store's bounds, counted over all instances.
    pub async fn connect_with(
        url: &str,
        prefix: &str,
        instance_id: &str,
        tasks: TaskLimits,
    ) -> Result<Backends, Error> {
        if !valid_instance_id(instance_id) {
            return Err(Error::InvalidInstanceId(instance_id.to_owned()));
        }
        let redis = Redis::connect(url, prefix).await?;
        let subscriber = Subscriber::connect(&redis.client, redis.keys.fixed("bus:ctl"))
            .await
            .map_err(|e| redis.unreachable(&e))?;
        let ordered = Ordered::start(redis.conn.clone());
        Ok(Backends {
            sessions: Arc::new(RedisSessionStore::new(&redis, ordered.clone())),
            events: Arc::new(RedisEventStore::new(
                &redis,
                ordered.clone(),
                EVENTS_PER_STREAM,
                STREAMS_PER_SESSION,
                EVENT_TTL,
            )),
            bus: Arc::new(RedisBus::new(&redis, ordered, subscriber.clone())),
            keys: Arc::new(RedisKeyRing::new(&redis, Some(&subscriber))),
            tasks: Arc::new(redis.task_store(tasks)),
            switches: Arc::new(RedisSwitchStore::new(&redis)),
            instance_id: instance_id.into(),
        })
    }
}
