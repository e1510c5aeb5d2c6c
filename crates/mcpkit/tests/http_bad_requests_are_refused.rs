//! Requests the HTTP endpoint refuses, with exact statuses and JSON-RPC error bodies, while the
//! session goes on: bad POSTs (JSON, batches, Content-Type, Accept, body size, protocol
//! version) and Host/Origin checks against DNS rebinding. Through the router (`oneshot`), no
//! socket.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use bytes::Bytes;
use common::http::*;
use common::{assert_error, within};
use mcpkit::server::http::HttpConfig;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Bad POST input.

#[tokio::test]
async fn bad_posts_get_exact_errors_and_the_session_survives() {
    bad_posts_get_exact_errors_and_the_session_survives_over(Over::Router).await;
}

#[tokio::test]
async fn bad_posts_get_exact_errors_and_the_session_survives_over_a_unix_socket() {
    bad_posts_get_exact_errors_and_the_session_survives_over(Over::Unix).await;
}

async fn bad_posts_get_exact_errors_and_the_session_survives_over(over: Over) {
    let (mcp, _served) = over
        .endpoint(
            test_server(),
            HttpConfig {
                max_body_bytes: 1024,
                ..config()
            },
        )
        .await;
    let s = mcp.open_session().await;
    let s = s.as_str();

    // Malformed JSON: 400, -32700, id null.
    let (status, body) = mcp.call(Some(s), r#"{"jsonrpc":"2.0","id":1,"#.to_owned()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32700, &Value::Null);
    mcp.assert_serves(s, "malformed JSON").await;

    // A batch: 400, -32600, id null.
    let batch = format!("[{}]", request(2, "ping", json!({})));
    let (status, body) = mcp.call(Some(s), batch).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error(&body, -32600, &Value::Null);
    mcp.assert_serves(s, "a batch").await;

    // Wrong Content-Type: 415; none at all: 415 too.
    for ct in [Some("text/plain"), Some("application/jsonx"), None] {
        let r = send(mcp.post_with(Some(s), request(3, "ping", json!({})), &[("content-type", ct)])).await;
        assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type: {ct:?}");
        assert_error(&json_body(r).await, -32600, &Value::Null);
    }
    // `application/json; charset=utf-8` is JSON.
    let r = send(mcp.post_with(
        Some(s),
        request(3, "ping", json!({})),
        &[("content-type", Some("Application/JSON; charset=utf-8"))],
    ))
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    mcp.assert_serves(s, "415").await;

    // Accept without both types: 406. (With no Accept at all reqwest sends `*/*`.)
    for accept in [Some("application/json"), Some("text/event-stream"), Some("text/html")] {
        let r = send(mcp.post_with(Some(s), request(4, "ping", json!({})), &[("accept", accept)])).await;
        assert_eq!(r.status(), StatusCode::NOT_ACCEPTABLE, "Accept: {accept:?}");
        assert_error(&json_body(r).await, -32600, &Value::Null);
    }
    // Both, in two headers or with parameters, or */*: fine.
    for accept in ["application/json;q=0.9, text/event-stream;q=1", "*/*"] {
        let r = send(mcp.post_with(Some(s), request(4, "ping", json!({})), &[("accept", Some(accept))])).await;
        assert_eq!(r.status(), StatusCode::OK, "Accept: {accept}");
    }
    mcp.assert_serves(s, "406").await;

    // A body over max_body_bytes: 413, with Content-Length and chunked.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8 * 1024)
    );
    let r = send(mcp.post(Some(s), big.clone())).await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    mcp.assert_serves(s, "413 with Content-Length").await;
    let chunks: Vec<Bytes> = big.as_bytes().chunks(512).map(Bytes::copy_from_slice).collect();
    let r = send(mcp.post(Some(s), ReqBody::Chunks(chunks))).await;
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    mcp.assert_serves(s, "413 chunked").await;
    // Exactly at the limit is fine.
    let pad = 1024 - r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":""}}"#.len();
    let exact = format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(pad)
    );
    assert_eq!(exact.len(), 1024);
    let (status, body) = mcp.call(Some(s), exact).await;
    assert_eq!(
        (status, &body),
        (StatusCode::OK, &json!({"jsonrpc":"2.0","id":6,"result":{}}))
    );

    // An unsupported MCP-Protocol-Version: 400 with the request's id.
    let r = send(mcp.post_with(
        Some(s),
        request(7, "ping", json!({})),
        &[("mcp-protocol-version", Some("1999-01-01"))],
    ))
    .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_error(&json_body(r).await, -32600, &json!(7));
    mcp.assert_serves(s, "an unsupported version").await;

    // A notification, and a response to nothing: 202 with an empty body.
    for frame in [
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#,
        r#"{"jsonrpc":"2.0","id":"never-asked","result":{}}"#,
    ] {
        let r = send(mcp.post(Some(s), frame)).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED, "{frame}");
        let bytes = within("202 body", r.bytes()).await.unwrap();
        assert!(bytes.is_empty(), "202 with a body: {bytes:?}");
        mcp.assert_serves(s, frame).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Host and Origin (DNS rebinding).

#[tokio::test]
async fn host_and_origin_are_checked() {
    host_and_origin_are_checked_over(Over::Router).await;
}

#[tokio::test]
async fn host_and_origin_are_checked_over_a_unix_socket() {
    host_and_origin_are_checked_over(Over::Unix).await;
}

async fn host_and_origin_are_checked_over(over: Over) {
    let (mcp, _served) = over.endpoint(test_server(), config()).await;
    let port = mcp.port();

    let r = send(mcp.post(None, initialize_body(1)).header("host", "evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    let r = send(
        mcp.post(None, initialize_body(1))
            .header("host", format!("evil.example.com:{port}")),
    )
    .await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);

    let r = send(
        mcp.post(None, initialize_body(1))
            .header("origin", "http://evil.example.com"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_error(&json_body(r).await, -32600, &Value::Null);
    let r = send(mcp.post(None, initialize_body(1)).header("origin", "null")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    // GET and DELETE are checked too, before anything else.
    let session = mcp.open_session().await;
    let r = send(mcp.get(&session).header("host", "evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    let r = send(mcp.delete(&session).header("origin", "http://evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    mcp.assert_serves(&session, "refused DELETE").await;

    // The legacy endpoints too.
    let r = send(mcp.raw(Method::GET, "/sse").header("host", "evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);

    let r = send(
        mcp.post(None, initialize_body(1))
            .header("origin", "http://localhost:5173"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
    ] {
        let r = send(mcp.post(None, initialize_body(1)).header("host", &host)).await;
        assert_eq!(r.status(), StatusCode::OK, "Host: {host}");
        assert!(header(&r, "mcp-session-id").is_some());
    }
}
