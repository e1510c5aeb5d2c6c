//! `HttpServer::serve` cuts off slow and silent clients: a request whose headers stall gets 408
//! and its connection is closed after `header_read_timeout`; a request whose body stalls gets
//! 408 with a JSON-RPC error after `body_read_timeout`; a connection that sends nothing, at
//! first or between requests, is closed after `idle_timeout`. A request being served is never
//! cut by these. Over raw sockets, with short timeouts; nothing is timed beyond the harness's
//! generous bound, only what the server does.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::assert_error;
use common::http::*;
use common::within;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SHORT: Duration = Duration::from_millis(300);
const LONG: Duration = Duration::from_secs(600);

/// The test endpoint with the given header, body and idle timeouts.
async fn serve(header: Duration, body: Duration, idle: Duration) -> Served {
    start(
        test_server(),
        mcpkit::server::http::HttpConfig {
            header_read_timeout: header,
            body_read_timeout: body,
            idle_timeout: idle,
            ..config()
        },
    )
    .await
}

/// A POST head for `/mcp` on `addr` in session `session`, with `extra` header lines.
fn post_head(addr: std::net::SocketAddr, session: &str, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: {VERSION}\r\n{extra}\r\n"
    )
}

/// Read one response off a kept-alive connection (a `Content-Length` body).
async fn read_one_response(tcp: &mut TcpStream) -> String {
    within("a response", async {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed before a whole response: {:?}",
                String::from_utf8_lossy(&all)
            );
            all.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&all).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .expect("a Content-Length");
                if all.len() >= end + 4 + length {
                    return text;
                }
            }
        }
    })
    .await
}

fn assert_408(reply: &RawReply, what: &str) -> String {
    assert_eq!(reply.status, 408, "{what}: {reply:?}");
    assert!(
        reply
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "{what}: {reply:?}"
    );
    let body = reply.json();
    assert_error(&body, -32600, &Value::Null);
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_request_whose_headers_stall_gets_408_and_is_closed() {
    let running = serve(SHORT, LONG, LONG).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let mut tcp = TcpStream::connect(running.addr).await.unwrap();
    // Half a head, then nothing: the blank line that ends it never comes.
    let head = post_head(running.addr, &s, "Content-Length: 2\r\n");
    tcp.write_all(&head.as_bytes()[..head.len() - 2]).await.unwrap();
    let reply = read_until_closed(&mut tcp).await.expect("a 408 before the close");
    let message = assert_408(&reply, "stalled headers");
    assert!(message.contains("headers"), "{message}");
    assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
    mcp.assert_serves(&s, "a stalled request head").await;
}

#[tokio::test]
async fn a_request_whose_body_stalls_gets_408_with_a_json_rpc_error() {
    let running = serve(LONG, SHORT, LONG).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let body = echo_body(1, "never finished");

    // Content-Length promises more than arrives; the connection stays open.
    let mut tcp = TcpStream::connect(running.addr).await.unwrap();
    let head = post_head(running.addr, &s, &format!("Content-Length: {}\r\n", body.len()));
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(&body.as_bytes()[..10]).await.unwrap();
    let reply = read_until_closed(&mut tcp).await.expect("a 408 before the close");
    let message = assert_408(&reply, "stalled Content-Length body");
    assert!(message.contains("body"), "{message}");

    // A chunked body whose last chunk never comes.
    let mut tcp = TcpStream::connect(running.addr).await.unwrap();
    let head = post_head(running.addr, &s, "Transfer-Encoding: chunked\r\n");
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(format!("{:x}\r\n{body}\r\n", body.len()).as_bytes())
        .await
        .unwrap();
    let reply = read_until_closed(&mut tcp).await.expect("a 408 before the close");
    assert_408(&reply, "stalled chunked body");

    mcp.assert_serves(&s, "stalled bodies").await;
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_idle_timeout() {
    let running = serve(LONG, LONG, SHORT).await;
    let mut tcp = TcpStream::connect(running.addr).await.unwrap();
    let said = read_until_closed(&mut tcp).await;
    assert!(said.is_none(), "an idle connection is closed without a reply: {said:?}");
}

#[tokio::test]
async fn a_connection_idle_between_requests_is_closed_after_the_idle_timeout() {
    let running = serve(LONG, LONG, SHORT).await;
    let mut tcp = TcpStream::connect(running.addr).await.unwrap();
    for _ in 0..2 {
        let request = format!("GET /nothing-here HTTP/1.1\r\nHost: {}\r\n\r\n", running.addr);
        tcp.write_all(request.as_bytes()).await.unwrap();
        let response = read_one_response(&mut tcp).await;
        assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    }
    let said = read_until_closed(&mut tcp).await;
    assert!(
        said.is_none(),
        "an idle kept-alive connection is closed without a reply: {said:?}"
    );
}

#[tokio::test]
async fn a_request_being_served_is_not_cut_by_the_timeouts() {
    // `slow` answers after 400 ms and `ten` streams for ~300 ms: longer than the header and
    // body timeouts, and than (or as long as) the idle timeout.
    let short = Duration::from_millis(100);
    let running = serve(short, short, SHORT).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let (status, body) = mcp
        .call(
            Some(&s),
            request(2, "tools/call", serde_json::json!({"name": "slow", "arguments": {}})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(result_text(&body), "slow done", "{body}");
    let r = send(mcp.post(Some(&s), progress_body(3, "ten", "t"))).await;
    let events = SseReader::new(r).rest().await;
    let last = events.last().expect("events").json();
    assert_eq!(result_text(&last), "ten done", "{last}");
}
