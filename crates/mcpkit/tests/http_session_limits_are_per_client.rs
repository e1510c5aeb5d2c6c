//! Fair session limits (`HttpConfig::max_sessions_per_client`, `max_sessions`): a client at its
//! own cap gets the same 503 as at the endpoint's cap, while another client still gets a
//! session; a client is its peer address (axum's `ConnectInfo`, which `HttpServer::serve`
//! provides), or its verified user when authorization is on (users behind one address are
//! counted apart). Legacy `/sse` sessions count against the same caps. Through the router with
//! `oneshot`, the peer address given as `ConnectInfo`.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::assert_error;
use common::http::*;
use mcpkit::server::http::HttpConfig;
use reqwest::{Method, StatusCode};
use serde_json::json;

fn assert_too_many(refusal: Result<String, (StatusCode, serde_json::Value)>, what: &str) {
    let (status, body) = refusal.expect_err(what);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{what}: {body}");
    assert_error(&body, -32603, &json!(7));
}

#[tokio::test]
async fn a_client_at_its_cap_is_refused_while_another_still_gets_a_session() {
    let mcp = in_process(
        test_server(),
        HttpConfig {
            max_sessions_per_client: 2,
            ..config()
        },
    );
    let a1 = mcp.initialize_from("10.0.0.1:4000").await.unwrap();
    // Another port of the same address is the same client.
    let _a2 = mcp.initialize_from("10.0.0.1:4001").await.unwrap();
    assert_too_many(mcp.initialize_from("10.0.0.1:4002").await, "a third from 10.0.0.1");
    let b = mcp
        .initialize_from("10.0.0.2:4000")
        .await
        .expect("another client gets a session");
    mcp.assert_serves(&b, "the first client's refusal").await;
    mcp.assert_serves(&a1, "its own refusal").await;
    // Ending one gives the client its place back.
    assert_eq!(send(mcp.delete(&a1)).await.status(), StatusCode::OK);
    mcp.initialize_from("10.0.0.1:4003").await.expect("room after a DELETE");
}

#[tokio::test]
async fn legacy_sse_sessions_count_against_the_same_caps() {
    let mcp = in_process(
        test_server(),
        HttpConfig {
            max_sessions: 2,
            max_sessions_per_client: 1,
            ..config()
        },
    );
    let open_sse = |peer: &'static str| {
        send(
            mcp.raw(Method::GET, "/sse")
                .header("accept", "text/event-stream")
                .sent_from(peer),
        )
    };
    let legacy = open_sse("10.0.0.1:5000").await;
    assert_eq!(legacy.status(), StatusCode::OK);
    let legacy = SseReader::new(legacy);
    // The client's one session is the legacy one: no Streamable HTTP session, no second stream.
    assert_too_many(mcp.initialize_from("10.0.0.1:5001").await, "initialize beside /sse");
    assert_eq!(
        open_sse("10.0.0.1:5002").await.status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    // The endpoint's cap counts both transports: one legacy + one streamable session fill it.
    let _b = mcp.initialize_from("10.0.0.2:5000").await.unwrap();
    assert_too_many(mcp.initialize_from("10.0.0.3:5000").await, "the endpoint is full");
    assert_eq!(
        open_sse("10.0.0.3:5001").await.status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    // Closing the legacy stream ends its session and frees its place.
    drop(legacy);
    mcp.initialize_from("10.0.0.1:5003")
        .await
        .expect("room after the /sse stream closed");
}

#[cfg(feature = "auth")]
#[tokio::test]
async fn users_behind_one_address_have_a_cap_each() {
    use common::callers::{bearer, protected};
    let mcp = protected(
        test_server(),
        HttpConfig {
            max_sessions_per_client: 1,
            ..config()
        },
    );
    let initialize_as = |user: &str| {
        send(
            mcp.post(None, initialize_body(7))
                .header("authorization", bearer(user))
                .sent_from("10.0.0.9:6000"),
        )
    };
    assert_eq!(initialize_as("alice").await.status(), StatusCode::OK);
    let r = initialize_as("alice").await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_error(&json_body(r).await, -32603, &json!(7));
    // Alice through another client is still Alice.
    assert_eq!(
        initialize_as("alice@another-client").await.status(),
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(initialize_as("bob").await.status(), StatusCode::OK);
}
