//! At graceful shutdown, `HttpServer::serve` closes at once a connection whose request is still
//! arriving (half of its headers, or its headers and half of its body), as it does an idle
//! one; only a request being served gets the grace period (`HttpConfig::shutdown_timeout`). With
//! the deadline and the read timeouts far longer than the test's wait, the half-sent requests'
//! connections close and `serve` returns as soon as the request being served has answered,
//! which it still does after the others were closed. Over a real socket (the connections are
//! the point).
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::http::*;
use common::within;
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::ToolDef;
use mcpkit::Server;
use reqwest::StatusCode;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Far beyond the harness's wait for any step (`within`): reaching one fails the test.
const NEVER: Duration = Duration::from_secs(600);

#[tokio::test]
async fn half_sent_requests_are_closed_at_once_and_a_served_one_finishes() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let server = {
        let (started, release) = (started.clone(), release.clone());
        Server::builder()
            .name("shutdown-test", "1.0.0")
            .tool(ToolDef::new("hold", move || {
                let (started, release) = (started.clone(), release.clone());
                async move {
                    started.notify_one();
                    release.notified().await;
                    "released"
                }
            }))
            .build()
    };
    let config = HttpConfig {
        shutdown_timeout: NEVER,
        header_read_timeout: NEVER,
        body_read_timeout: NEVER,
        idle_timeout: NEVER,
        // The held call's reply stays plain JSON (an SSE reply would be ended at shutdown).
        json_wait: NEVER,
        ..config()
    };
    let mut served = Served::start(HttpServer::new(server).config(config)).await;
    let mcp = Mcp::new(&served.url);
    let session = mcp.open_session().await;

    // Being served: a call that answers only when released.
    let call = tokio::spawn(send(mcp.post(
        Some(&session),
        request(1, "tools/call", json!({"name": "hold", "arguments": {}})),
    )));
    within("the held call to start", started.notified()).await;

    // Half of a request's headers.
    let mut half_head = TcpStream::connect(served.addr).await.unwrap();
    half_head
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic")
        .await
        .unwrap();
    // Whole headers, half of the body they announce.
    let body = request(2, "ping", json!({}));
    let mut half_body = TcpStream::connect(served.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: {VERSION}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    half_body.write_all(head.as_bytes()).await.unwrap();
    half_body.write_all(&body.as_bytes()[..body.len() / 2]).await.unwrap();
    // Let the server read what was sent (without it, both would still be idle connections,
    // closed at once by any version).
    tokio::time::sleep(Duration::from_millis(200)).await;

    served.stop.cancel();
    // `read_until_closed` fails the test unless the server closes within the harness's wait.
    read_until_closed(&mut half_head).await;
    read_until_closed(&mut half_body).await;
    assert!(
        !served.task.is_finished(),
        "serve returned while a request was still being served"
    );

    release.notify_one();
    let reply = within("the held call's reply", call).await.unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
    let answer = json_body(reply).await;
    assert_eq!(result_text(&answer), "released", "{answer}");
    within("serve to return", &mut served.task)
        .await
        .expect("the server task")
        .expect("serve's result");
}
