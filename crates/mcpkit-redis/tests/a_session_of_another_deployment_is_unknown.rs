//! Deployments sharing one Redis are separate: a session, an event stream or a bus message of
//! one (prefix) is unknown to the other, and nothing is written for the lookup.

use std::time::Duration;

use bytes::Bytes;
use mcpkit::server::backend::{Address, Admitted, SessionLimits, SessionRecord};
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_deployments_state_is_not_found() {
    let server = RedisProcess::start();
    let prod = RedisBackends::connect(&server.url(), "prod", "a").await.unwrap();
    let test = RedisBackends::connect(&server.url(), "test", "a").await.unwrap();
    let ttl = Duration::from_secs(60);
    assert_eq!(
        prod.sessions
            .create(
                SessionRecord::new("s1", None),
                None,
                SessionLimits {
                    max_sessions: 1,
                    max_per_client: usize::MAX,
                    ttl
                }
            )
            .await,
        Ok(Admitted::Yes)
    );
    prod.events.append("s1", "0", Bytes::from("e")).await.unwrap();

    let writes = server.writes();
    assert_eq!(
        test.sessions.get("s1").await,
        Ok(None),
        "another deployment's session is unknown"
    );
    assert_eq!(test.sessions.touch("s1", ttl).await, Ok(false));
    assert!(test.events.after("s1", "0", 0).await.unwrap().is_empty());
    assert_eq!(server.writes(), writes, "nothing written for it");
    assert_eq!(
        test.sessions
            .create(
                SessionRecord::new("s2", None),
                None,
                SessionLimits {
                    max_sessions: 1,
                    max_per_client: usize::MAX,
                    ttl
                }
            )
            .await,
        Ok(Admitted::Yes),
        "each deployment has its own cap"
    );

    let mut on_test = test.bus.subscribe(&Address::Session("s1".into())).await.unwrap();
    prod.bus
        .publish(&Address::Session("s1".into()), Bytes::from("prod"))
        .await
        .unwrap();
    test.bus
        .publish(&Address::Session("s1".into()), Bytes::from("test"))
        .await
        .unwrap();
    assert_eq!(
        within("a message", on_test.recv()).await.as_deref(),
        Some(&b"test"[..]),
        "another deployment's messages do not arrive"
    );
}
