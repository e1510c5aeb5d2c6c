//! A session idle past `HttpConfig::session_idle_timeout` never counts against a session cap,
//! the client's own (`max_sessions_per_client`) or the endpoint's (`max_sessions`), whether or
//! not the idle-session reaper has come by since it expired: a client whose sessions were all
//! abandoned gets a new one as soon as they have expired. On a session clock the test moves by
//! hand (the reaper, every 30 s of real time at the default timeout, never runs meanwhile),
//! through the router with the peer address given as `ConnectInfo`.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::http::*;
use mcpkit::server::http::HttpConfig;
use reqwest::StatusCode;

const IDLE: Duration = Duration::from_secs(30 * 60);

#[tokio::test]
async fn a_client_whose_sessions_expired_gets_a_new_one_at_once() {
    let clock = ManualClock::new();
    let mcp = in_process(
        test_server(),
        HttpConfig {
            max_sessions_per_client: 3,
            session_idle_timeout: IDLE,
            clock: clock.clone(),
            ..config()
        },
    );
    for port in 0..3 {
        mcp.initialize_from(&format!("10.0.0.1:{}", 4000 + port))
            .await
            .expect("a session within the cap");
    }
    let (status, body) = mcp
        .initialize_from("10.0.0.1:4100")
        .await
        .expect_err("the client is at its cap");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["message"], "Too many sessions for this client", "{body}");

    clock.advance(IDLE + Duration::from_secs(60));
    let fresh = mcp
        .initialize_from("10.0.0.1:4101")
        .await
        .expect("expired sessions do not count against the client's cap");
    mcp.assert_serves(&fresh, "the client's old sessions expired").await;
    // Its whole share is back, not just one place.
    for port in 0..2 {
        mcp.initialize_from(&format!("10.0.0.1:{}", 4200 + port))
            .await
            .expect("the rest of the client's share");
    }
}

#[tokio::test]
async fn expired_sessions_do_not_fill_the_endpoint() {
    let clock = ManualClock::new();
    let mcp = in_process(
        test_server(),
        HttpConfig {
            max_sessions: 3,
            session_idle_timeout: IDLE,
            clock: clock.clone(),
            ..config()
        },
    );
    let mut old = Vec::new();
    for client in 1..=3 {
        old.push(mcp.initialize_from(&format!("10.0.0.{client}:4000")).await.unwrap());
    }
    let (status, body) = mcp
        .initialize_from("10.0.0.9:4000")
        .await
        .expect_err("the endpoint is full");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"]["message"], "Too many sessions", "{body}");

    // One of them stays in use; the other two are abandoned.
    clock.advance(IDLE / 2);
    mcp.assert_serves(&old[0], "half the idle timeout").await;
    clock.advance(IDLE / 2 + Duration::from_secs(60));
    for client in 10..12 {
        mcp.initialize_from(&format!("10.0.0.{client}:4000"))
            .await
            .expect("the expired sessions' places are free");
    }
    // The session in use still counts.
    let (status, body) = mcp
        .initialize_from("10.0.0.20:4000")
        .await
        .expect_err("the live session still counts");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    mcp.assert_serves(&old[0], "the others' expiry").await;
}
