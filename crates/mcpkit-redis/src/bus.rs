//! The Redis [`Bus`] on pub/sub: a channel per session (`{prefix}:bus:s:{digest(session)}`), per
//! instance (`{prefix}:bus:i:{digest(instance)}`) and one for everyone (`{prefix}:bus:all`).
//! Publishes go through the ordered queue (one publisher's messages to one address arrive in
//! the order published, even unawaited); subscriptions share the instance's one subscriber
//! connection, which re-subscribes them by itself after a reconnect. Delivery is at most once,
//! as the trait says: what is published while the subscriber connection is down is lost.

use bytes::Bytes;
use mcpkit::server::backend::{Address, BackendError, BackendFuture, Bus, Subscription};

use crate::ordered::{queue_closed, Ordered};
use crate::subscriber::Subscriber;
use crate::Redis;

/// Messages between the instances of one deployment, over Redis pub/sub. Made by
/// [`RedisBackends::connect`](crate::RedisBackends::connect).
#[derive(Debug, Clone)]
pub struct RedisBus {
    redis: Redis,
    ordered: Ordered,
    subscriber: Subscriber,
}

impl RedisBus {
    pub(crate) fn new(redis: &Redis, ordered: Ordered, subscriber: Subscriber) -> RedisBus {
        RedisBus {
            redis: redis.clone(),
            ordered,
            subscriber,
        }
    }

    fn channel(&self, to: &Address) -> String {
        match to {
            Address::Session(s) => self.redis.keys.hashed("bus:s", s),
            Address::Instance(i) => self.redis.keys.hashed("bus:i", i),
            Address::All => self.redis.keys.fixed("bus:all"),
        }
    }

    fn fail(&self, e: &redis::RedisError) -> BackendError {
        BackendError::Unavailable(self.redis.unreachable(e).to_string())
    }
}

impl Bus for RedisBus {
    fn publish(&self, to: &Address, message: Bytes) -> BackendFuture<()> {
        let mut cmd = redis::cmd("PUBLISH");
        cmd.arg(self.channel(to)).arg(message.as_ref());
        let reply = self.ordered.send(cmd);
        let bus = self.clone();
        Box::pin(async move {
            match reply.await.unwrap_or_else(|_| Err(queue_closed())) {
                Ok(_) => Ok(()),
                Err(e) => Err(bus.fail(&e)),
            }
        })
    }

    fn subscribe(&self, to: &Address) -> BackendFuture<Subscription> {
        let channel = self.channel(to).into_bytes();
        let bus = self.clone();
        Box::pin(async move {
            let (messages, unsubscribe) = bus.subscriber.subscribe(channel).await.map_err(|e| bus.fail(&e))?;
            Ok(Subscription::new(messages, unsubscribe))
        })
    }

    fn ready(&self) -> BackendFuture<()> {
        let bus = self.clone();
        Box::pin(async move {
            if !bus.subscriber.is_listening() {
                return Err(BackendError::Unavailable(format!(
                    "the Redis subscriber connection to {} is down (reconnecting)",
                    bus.redis.addr()
                )));
            }
            bus.redis
                .ping()
                .await
                .map_err(|e| BackendError::Unavailable(e.to_string()))
        })
    }
}
