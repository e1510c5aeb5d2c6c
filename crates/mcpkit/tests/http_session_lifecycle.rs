//! HTTP sessions seen from the wire: ids issued by `initialize`, required afterwards, ended by
//! DELETE and by idle expiry (on a session clock the test moves, not on sleeps); a duplicate
//! in-flight id; sessionless mode, where each POST is served alone. Through the router
//! (`oneshot`, no socket) where no real connection is needed.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::assert_error;
use common::http::*;
use mcpkit::server::http::HttpConfig;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Session lifecycle.

#[tokio::test]
async fn session_ids_missing_unknown_and_deleted_sessions() {
    session_ids_missing_unknown_and_deleted_sessions_over(Over::Router).await;
}

#[tokio::test]
async fn session_ids_missing_unknown_and_deleted_sessions_over_a_unix_socket() {
    session_ids_missing_unknown_and_deleted_sessions_over(Over::Unix).await;
}

async fn session_ids_missing_unknown_and_deleted_sessions_over(over: Over) {
    let (mcp, _served) = over.endpoint(test_server(), config()).await;

    let mut ids = Vec::new();
    for _ in 0..3 {
        let r = send(mcp.post(None, initialize_body(1))).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(content_type(&r), "application/json");
        let id = header(&r, "mcp-session-id").expect("Mcp-Session-Id on the initialize reply");
        assert!(id.len() >= 32, "short session id {id:?}");
        assert!(
            id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "session id {id:?} is not visible ASCII"
        );
        let body = json_body(r).await;
        assert_eq!(body["id"], 1);
        assert_eq!(body["result"]["serverInfo"]["name"], "http-behaviour");
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "session ids repeat: {ids:?}");

    let session = mcp.open_session().await;
    mcp.assert_serves(&session, "initialize").await;

    // No Mcp-Session-Id: 400.
    let (status, body) = mcp.call(None, request(2, "tools/list", json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &Value::Null);

    // An id the server never issued: 404.
    let (status, body) = mcp
        .call(
            Some("0123456789abcdef0123456789abcdef"),
            request(3, "tools/list", json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, -32600, &Value::Null);

    // initialize must not carry a session id.
    let (status, body) = mcp.call(Some(&session), initialize_body(4)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &json!(4));
    mcp.assert_serves(&session, "a second initialize").await;

    // DELETE ends the session: 200, then 404 for everything.
    let r = send(mcp.delete(&session)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let (status, body) = mcp.call(Some(&session), request(5, "ping", json!({}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error(&body, -32600, &Value::Null);
    assert_eq!(send(mcp.delete(&session)).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(send(mcp.get(&session)).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn idle_sessions_expire_and_busy_ones_do_not() {
    let clock = ManualClock::new();
    let mcp = in_process(
        test_server(),
        HttpConfig {
            session_idle_timeout: Duration::from_millis(200),
            clock: clock.clone(),
            ..config()
        },
    );
    let idle = mcp.open_session().await;
    let busy = mcp.open_session().await;
    // `busy` sends something every 100 ms for 1 s (of the session clock); `idle` sends nothing.
    for _ in 0..10 {
        clock.advance(Duration::from_millis(100));
        mcp.assert_serves(&busy, "100 ms of idleness").await;
    }
    let (status, body) = mcp.call(Some(&idle), request(1, "ping", json!({}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_error(&body, -32600, &Value::Null);
}

/// A request that outlasts the idle timeout must not leave its session expired the moment it
/// is answered: idleness counts from the end of the last activity, not its start.
// On tokio's paused clock (which the default session clock reads): the handler's and the
// test's sleeps take no real time, and no margin can be missed under load.
#[tokio::test(start_paused = true)]
async fn a_session_is_not_expired_right_after_a_long_request() {
    let mcp = in_process(
        test_server(),
        HttpConfig {
            session_idle_timeout: Duration::from_millis(200),
            ..config()
        },
    );
    let session = mcp.open_session().await;
    // `slow` takes 400 ms, twice the idle timeout (and under json_wait: a JSON reply).
    let (status, body) = mcp
        .call(
            Some(&session),
            request(1, "tools/call", json!({"name": "slow", "arguments": {}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(result_text(&body), "slow done");
    // 100 ms after the reply the session has been idle for 100 ms, half the timeout.
    tokio::time::sleep(Duration::from_millis(100)).await;
    mcp.assert_serves(&session, "a 400 ms request and 100 ms of idleness")
        .await;
}

/// Likewise a GET stream that stayed open, silent, for longer than the idle timeout: once it
/// closes, the session has been idle for no time at all.
// On tokio's paused clock (which the default session clock reads): the handler's and the
// test's sleeps take no real time, and no margin can be missed under load.
#[tokio::test(start_paused = true)]
async fn a_session_is_not_expired_right_after_its_get_stream_closes() {
    let mcp = in_process(
        test_server(),
        HttpConfig {
            session_idle_timeout: Duration::from_millis(200),
            ..config()
        },
    );
    let session = mcp.open_session().await;
    let r = send(mcp.get(&session)).await;
    let mut stream = SseReader::new(r);
    assert_priming(&stream.next().await.unwrap(), Some(50));
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(stream);
    tokio::time::sleep(Duration::from_millis(100)).await;
    mcp.assert_serves(&session, "a silent 500 ms GET stream, closed 100 ms ago")
        .await;
}

// ---------------------------------------------------------------------------------------------
// Duplicate in-flight ids.

#[tokio::test]
async fn a_duplicate_in_flight_id_is_refused_with_that_id() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    // Request 7 is in flight once its stream's headers are here.
    let r = send(mcp.post(Some(&s), progress_body(7, "ten", "dup"))).await;
    let mut first = SseReader::new(r);
    first.next().await.expect("priming");

    let (status, body) = mcp.call(Some(&s), request(7, "ping", json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &json!(7));
    // The string "7" is a different id.
    let (status, body) = mcp
        .call(Some(&s), r#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#.to_owned())
        .await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"jsonrpc":"2.0","id":"7","result":{}}))
    );

    // The first request is unharmed.
    let rest = first.rest().await;
    let last = rest.last().unwrap().json();
    assert_eq!(last["id"], 7);
    assert_eq!(result_text(&last), "ten done");
    assert_eq!(rest.len(), 11, "10 progress, result: {rest:?}");
    // Once answered, the id may be used again.
    let (status, body) = mcp.call(Some(&s), request(7, "ping", json!({}))).await;
    assert_eq!(
        (status, body),
        (StatusCode::OK, json!({"jsonrpc":"2.0","id":7,"result":{}}))
    );
}

// ---------------------------------------------------------------------------------------------
// Sessionless mode.

#[tokio::test]
async fn sessionless_mode_serves_each_post_alone() {
    sessionless_mode_serves_each_post_alone_over(Over::Tcp).await;
}

#[tokio::test]
async fn sessionless_mode_serves_each_post_alone_over_a_unix_socket() {
    sessionless_mode_serves_each_post_alone_over(Over::Unix).await;
}

async fn sessionless_mode_serves_each_post_alone_over(over: Over) {
    let (mcp, _served) = over
        .endpoint(
            test_server(),
            HttpConfig {
                sessionless: true,
                ..config()
            },
        )
        .await;

    // No initialize, no session: tools/call is answered.
    let r = send(
        mcp.post(None, echo_body(1, "no session"))
            .header("mcp-protocol-version", VERSION),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "mcp-session-id").is_none());
    let body = json_body(r).await;
    assert_eq!(body["id"], 1);
    assert_eq!(result_text(&body), "no session");
    // Without the version header too (2025-03-26 is assumed).
    let (status, body) = mcp.call(None, request(2, "tools/list", json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"]["tools"].as_array().is_some_and(|t| t.len() == 5));

    // initialize is answered, but starts no session.
    let r = send(mcp.post(None, initialize_body(3))).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "mcp-session-id").is_none());
    assert_eq!(json_body(r).await["result"]["protocolVersion"], VERSION);

    // Notifications: 202.
    assert_eq!(send(mcp.post(None, INITIALIZED)).await.status(), StatusCode::ACCEPTED);

    for r in [
        send(mcp.raw(Method::GET, "/mcp").header("accept", "text/event-stream")).await,
        send(mcp.raw(Method::DELETE, "/mcp")).await,
    ] {
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(header(&r, "allow").as_deref(), Some("POST"));
    }
}
