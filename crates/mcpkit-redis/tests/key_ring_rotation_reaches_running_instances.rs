//! `rotate_key_ring` (what the CLI runs): a new key seals on every running instance at once,
//! the previous ones kept still open, and a ring made by one instance is the one every other
//! loads.

use std::time::{Duration, Instant};

use mcpkit_redis::{rotate_key_ring, RedisBackends};
use mcpkit_test_support::redis::RedisProcess;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_reaches_every_running_instance() {
    let server = RedisProcess::start();
    let a = RedisBackends::connect(&server.url(), "rot", "a").await.unwrap();
    let b = RedisBackends::connect(&server.url(), "rot", "b").await.unwrap();
    let first = a.keys.load().await.unwrap();
    assert_eq!(b.keys.load().await.unwrap(), first, "one ring for the deployment");

    let ids = rotate_key_ring(&server.url(), "rot", 1).await.unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[1], first[0].id, "the previous key still opens");
    for (name, instance) in [("a", &a), ("b", &b)] {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let ring: Vec<String> = instance.keys.load().await.unwrap().into_iter().map(|k| k.id).collect();
            if ring == ids {
                break;
            }
            assert!(Instant::now() < deadline, "instance {name} still seals with {ring:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    // Keeping none: only the new key opens.
    let ids = rotate_key_ring(&server.url(), "rot", 0).await.unwrap();
    assert_eq!(ids.len(), 1);
    // Another deployment's ring is its own.
    let other = RedisBackends::connect(&server.url(), "other", "a").await.unwrap();
    assert!(!ids.contains(&other.keys.load().await.unwrap()[0].id));
    // A bad prefix is refused before anything is written.
    assert!(rotate_key_ring(&server.url(), "bad:prefix", 1).await.is_err());
}
