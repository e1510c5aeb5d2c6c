//! Graceful shutdown ends open streams and `HttpServer::serve` returns; the 2024-11-05 HTTP+SSE
//! endpoints `HttpServer::sse_legacy` mounts.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::assert_error;
use common::http::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Graceful shutdown.

#[tokio::test]
async fn shutdown_ends_open_streams_and_returns() {
    let mut running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let r = send(mcp.get(&s)).await;
    let mut stream = SseReader::new(r);
    assert_priming(&stream.next().await.unwrap(), Some(50));

    running.stop.cancel();
    let task = &mut running.task;
    let returned = tokio::time::timeout(Duration::from_secs(2), task).await;
    let ended = tokio::time::timeout(Duration::from_secs(1), stream.next_untimed()).await;
    assert!(
        returned.is_ok(),
        "HttpServer::serve did not return within 2 s of shutdown while a GET stream was open"
    );
    returned
        .unwrap()
        .expect("the server task")
        .expect("HttpServer::serve's result");
    assert!(matches!(ended, Ok(None)), "the GET stream did not end: {ended:?}");
}

// ---------------------------------------------------------------------------------------------
// The legacy HTTP+SSE endpoints that HttpServer::sse_legacy mounts.

async fn next_message(stream: &mut SseReader) -> Value {
    let e = stream.next().await.expect("a message event");
    assert_eq!(e.event.as_deref(), Some("message"), "{e:?}");
    e.json()
}

#[tokio::test]
async fn legacy_sse_endpoints() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let r = send(mcp.raw(Method::GET, "/sse").header("accept", "text/event-stream")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = SseReader::new(r);
    let endpoint = stream.next().await.expect("the endpoint event");
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    let path = endpoint.data.expect("an endpoint URL");
    assert!(path.starts_with("/messages?sessionId="), "{path}");
    let post = |body: String| {
        mcp.raw(Method::POST, &path)
            .header("content-type", "application/json")
            .body(body)
    };

    let init = request(
        0,
        "initialize",
        json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "legacy", "version": "0"}
        }),
    );
    let r = send(post(init)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let reply = next_message(&mut stream).await;
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(send(post(INITIALIZED.to_owned())).await.status(), StatusCode::ACCEPTED);
    let r = send(post(echo_body(1, "legacy echo"))).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let reply = next_message(&mut stream).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(result_text(&reply), "legacy echo");

    // Unparseable JSON: 400 here, and the -32700 error on the stream.
    let r = send(post("{nope".to_owned())).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_error(&next_message(&mut stream).await, -32700, &Value::Null);

    // Unknown and missing session ids.
    let r = send(
        mcp.raw(Method::POST, "/messages?sessionId=00000000000000000000000000000000")
            .header("content-type", "application/json")
            .body(request(2, "ping", json!({}))),
    )
    .await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = send(
        mcp.raw(Method::POST, "/messages")
            .header("content-type", "application/json")
            .body(request(2, "ping", json!({}))),
    )
    .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    // The session still works.
    let r = send(post(request(3, "ping", json!({})))).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(
        next_message(&mut stream).await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {}})
    );
}
