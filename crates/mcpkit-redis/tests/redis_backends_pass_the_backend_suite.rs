//! The Redis backends pass the backend behaviour suite (the same checks the in-memory backends
//! pass), two instances being two `RedisBackends::connect` to one real `redis-server`; and
//! the key names they leave behind are the deployment's prefix, constant kinds and hex digests:
//! no client bytes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcpkit::server::backend::Backends;
use mcpkit_redis::{Redis, RedisBackends};
use mcpkit_test_support::backend_suite::{check_backends, EventBounds};
use mcpkit_test_support::redis::RedisProcess;

async fn two_instances(url: &str, prefix: &str, bounds: EventBounds) -> (Backends, Backends) {
    let mut pair = Vec::new();
    for id in ["a", "b"] {
        let mut backends = RedisBackends::connect(url, prefix, id).await.unwrap();
        let redis = Redis::connect(url, prefix).await.unwrap();
        backends.events = Arc::new(redis.event_store(bounds.events_per_stream, bounds.streams_per_session, bounds.ttl));
        pair.push(backends);
    }
    let b = pair.pop().unwrap();
    let a = pair.pop().unwrap();
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_backends_behave_as_every_backend_must() {
    let server = RedisProcess::start();
    let url = server.url();
    let n = AtomicUsize::new(0);
    check_backends(async |bounds: EventBounds| {
        // A fresh deployment (prefix) per check: each starts empty.
        let prefix = format!("suite{}", n.fetch_add(1, Ordering::Relaxed));
        two_instances(&url, &prefix, bounds).await
    })
    .await;

    let keys = server.keys("*");
    assert!(!keys.is_empty());
    for key in keys {
        let mut parts = key.split(':');
        assert!(parts.next().is_some_and(|p| p.starts_with("suite")), "{key}");
        for part in parts {
            let constant = part.bytes().all(|b| b.is_ascii_lowercase());
            let digest = part.len() == 32 && part.bytes().all(|b| b.is_ascii_hexdigit());
            assert!(constant || digest, "{key}: {part:?} is neither a kind nor a digest");
        }
    }
}
