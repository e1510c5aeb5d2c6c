//! Redis killed under running backends: every operation fails at once with an error naming
//! Redis (what the HTTP layer answers 503 with), the cached key ring keeps sealing; Redis
//! started again on the same port: the same backends work again by themselves, with no new
//! connect, and a subscription made before the outage receives again (re-subscribed by the
//! subscriber connection itself).

use std::time::{Duration, Instant};

use bytes::Bytes;
use mcpkit::server::backend::{Address, Admitted, BackendError, SessionLimits, SessionRecord};
use mcpkit::server::backend::{TaskOwner, TaskStoreError};
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;

const TTL: Duration = Duration::from_secs(60);
/// The caps of the sessions this test creates.
const LIMITS: SessionLimits = SessionLimits {
    max_sessions: 10,
    max_per_client: usize::MAX,
    ttl: TTL,
};

fn names_redis(e: &BackendError, port: u16) -> bool {
    let BackendError::Unavailable(why) = e else {
        return false;
    };
    why.contains("Redis") && why.contains(&format!("127.0.0.1:{port}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_an_error_at_once_and_the_backends_recover_by_themselves() {
    let mut server = RedisProcess::start();
    let port = server.port();
    let backends = RedisBackends::connect(&server.url(), "outage", "a").await.unwrap();
    assert_eq!(
        backends
            .sessions
            .create(
                SessionRecord::new("s1", None),
                None,
                SessionLimits {
                    max_sessions: 10,
                    max_per_client: usize::MAX,
                    ttl: TTL
                }
            )
            .await,
        Ok(Admitted::Yes)
    );
    let ring = backends.keys.load().await.unwrap();
    let mut sub = backends.bus.subscribe(&Address::Session("s1".into())).await.unwrap();
    backends.ready().await.unwrap();

    server.stop();

    // Every operation that needs Redis fails, fast, naming it.
    let started = Instant::now();
    let e = backends.sessions.get("s1").await.unwrap_err();
    assert!(names_redis(&e, port), "{e}");
    let e = backends
        .sessions
        .create(SessionRecord::new("s2", None), None, LIMITS)
        .await
        .unwrap_err();
    assert!(names_redis(&e, port), "{e}");
    let e = backends.events.append("s1", "0", Bytes::from("x")).await.unwrap_err();
    assert!(names_redis(&e, port), "{e}");
    let e = backends.events.after("s1", "0", 0).await.unwrap_err();
    assert!(names_redis(&e, port), "{e}");
    let e = backends.bus.publish(&Address::All, Bytes::from("x")).await.unwrap_err();
    assert!(names_redis(&e, port), "{e}");
    assert!(matches!(
        backends.tasks.get("t", &TaskOwner("o".into())).await,
        Err(TaskStoreError::Unavailable(why)) if why.contains("Redis")
    ));
    assert!(backends.ready().await.is_err(), "/readyz fails while Redis is down");
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(10),
        "errors came at once, not after a hang: {elapsed:?}"
    );
    // The cached key ring still seals and opens.
    assert_eq!(backends.keys.load().await.unwrap(), ring);

    server.restart();

    // The same backends come back by themselves.
    let deadline = Instant::now() + Duration::from_secs(15);
    while backends.ready().await.is_err() {
        assert!(Instant::now() < deadline, "the backends did not recover");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let recovered = Instant::now() + Duration::from_secs(5);
    let admitted = loop {
        match backends
            .sessions
            .create(SessionRecord::new("s2", None), None, LIMITS)
            .await
        {
            Ok(a) => break a,
            Err(e) => assert!(Instant::now() < recovered, "sessions did not recover: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(admitted, Admitted::Yes);
    assert!(backends.sessions.get("s2").await.unwrap().is_some());
    assert_eq!(backends.events.append("s2", "0", Bytes::from("y")).await, Ok(1));
    // The subscription of before the outage receives again (the bus re-subscribed it).
    let deadline = Instant::now() + Duration::from_secs(5);
    while backends.bus.ready().await.is_err() {
        assert!(Instant::now() < deadline, "the subscriber connection did not come back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    backends
        .bus
        .publish(&Address::Session("s1".into()), Bytes::from("back"))
        .await
        .unwrap();
    assert_eq!(
        within("a message after recovery", sub.recv()).await.as_deref(),
        Some(&b"back"[..]),
        "a subscription outlives an outage"
    );
    let mut new_sub = backends.bus.subscribe(&Address::Session("s2".into())).await.unwrap();
    backends
        .bus
        .publish(&Address::Session("s2".into()), Bytes::from("new"))
        .await
        .unwrap();
    assert_eq!(
        within("a message to a new subscription", new_sub.recv())
            .await
            .as_deref(),
        Some(&b"new"[..])
    );
    // Redis lost its data (no persistence): a new ring is made, once.
    let new_ring = backends.keys.load().await.unwrap();
    assert_eq!(new_ring.len(), 1);
}
