//! What the Redis backends cost per request, counted by Redis itself (`INFO commandstats`): a
//! handshake-era request (look the session up, touch it) on an instance that served the session
//! before costs one command, on one that never did two at most; a session id never issued
//! writes nothing; the requestState key ring of the 2026-07-28 path costs no command once
//! loaded. The figures are printed (`--nocapture`).

use std::time::Duration;

use mcpkit::server::backend::{Admitted, SessionLimits, SessionRecord, SessionUpdate};
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::RedisProcess;

const TTL: Duration = Duration::from_secs(600);
const REQUESTS: u64 = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_commands_per_request() {
    let server = RedisProcess::start();
    let a = RedisBackends::connect(&server.url(), "cost", "a").await.unwrap();
    let b = RedisBackends::connect(&server.url(), "cost", "b").await.unwrap();
    assert_eq!(
        a.sessions
            .create(
                SessionRecord::new("s1", None),
                None,
                SessionLimits {
                    max_sessions: 100,
                    max_per_client: usize::MAX,
                    ttl: TTL
                }
            )
            .await,
        Ok(Admitted::Yes)
    );

    // An instance that served the session before: a lookup of its revision, and the touch is lazy.
    a.sessions.get("s1").await.unwrap();
    server.reset_stats();
    for _ in 0..REQUESTS {
        assert!(a.sessions.get("s1").await.unwrap().is_some());
        assert!(a.sessions.touch("s1", TTL).await.unwrap());
    }
    let warm = server.command_stats();
    let warm_total: u64 = warm.values().sum();
    println!(
        "handshake-era request, warm instance: {:.2} commands ({warm:?} for {REQUESTS})",
        warm_total as f64 / REQUESTS as f64
    );
    assert!(warm_total <= REQUESTS + 1, "at most one command per request: {warm:?}");

    // An instance that never served it: the whole record, and the TTL refresh.
    server.reset_stats();
    assert!(b.sessions.get("s1").await.unwrap().is_some());
    assert!(b.sessions.touch("s1", TTL).await.unwrap());
    let cold = server.command_stats();
    let executed: u64 = cold.values().sum();
    // commandstats also counts the commands a script runs; the client sends only these two
    // kinds on this path (the touch script's TIME, PEXPIREAT, HSET and ZADD run inside Redis).
    let sent = cold.get("hmget").copied().unwrap_or(0) + cold.get("eval").copied().unwrap_or(0);
    println!(
        "handshake-era request, cold instance: {sent} commands sent, {executed} executed with the script's ({cold:?})"
    );
    assert!(sent <= 2, "at most two commands sent: {cold:?}");
    assert!(executed <= 6, "the touch script runs four: {cold:?}");

    // A session changed on the other instance is read again (still one request, few commands).
    assert!(b
        .sessions
        .update("s1", SessionUpdate::LogLevel(mcpkit::types::schema::LoggingLevel::Info))
        .await
        .unwrap());
    server.reset_stats();
    let s1 = a.sessions.get("s1").await.unwrap().unwrap();
    assert_eq!(s1.log_level, Some(mcpkit::types::schema::LoggingLevel::Info));
    let changed: u64 = server.command_stats().values().sum();
    println!("lookup of a session changed elsewhere: {changed} commands");
    assert!(changed <= 2);

    // A session id never issued: nothing written, whatever is asked.
    let writes = server.writes();
    let keys = server.keys("*");
    for _ in 0..10 {
        assert_eq!(a.sessions.get("never-issued").await.unwrap(), None);
        assert!(!a.sessions.touch("never-issued", TTL).await.unwrap());
        assert!(!a
            .sessions
            .update("never-issued", SessionUpdate::Initialized)
            .await
            .unwrap());
        assert!(!a.sessions.delete("never-issued").await.unwrap());
        assert!(a.events.after("never-issued", "0", 3).await.unwrap().is_empty());
        a.events.remove_session("never-issued").await.unwrap();
    }
    assert_eq!(server.writes(), writes, "an id never issued writes nothing");
    assert_eq!(server.keys("*"), keys);

    // The key ring once loaded: no command per request.
    a.keys.load().await.unwrap();
    server.reset_stats();
    for _ in 0..REQUESTS {
        a.keys.load().await.unwrap();
    }
    let ring = server.command_stats();
    println!("requestState key ring per 2026-07-28 request: {ring:?}");
    assert!(ring.is_empty(), "no command: {ring:?}");
}
