//! A request body that is broken — a malformed chunked encoding, or a connection that ends
//! before `Content-Length` bytes arrived — is answered 400 with a JSON-RPC error naming the
//! problem, not 413 "exceeds the limit" (which stays for bodies that are really too long).
//! Over real sockets: the broken framing and the half-close are the point.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::assert_error;
use common::http::*;
use serde_json::Value;

/// A POST head for `/mcp` on `addr` with `extra` header lines (each ending in CRLF).
fn post_head(addr: std::net::SocketAddr, session: Option<&str>, extra: &str) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n"
    );
    if let Some(s) = session {
        head.push_str(&format!("Mcp-Session-Id: {s}\r\nMcp-Protocol-Version: {VERSION}\r\n"));
    }
    head.push_str(extra);
    head.push_str("\r\n");
    head
}

fn assert_broken_body(r: &RawReply, what: &str) {
    assert_eq!(r.status, 400, "{what}: {r:?}");
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "{what}: {r:?}"
    );
    let body = r.json();
    assert_error(&body, -32600, &Value::Null);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Malformed request body"), "{what}: {message}");
    assert!(!message.contains("exceeds"), "{what}: {message}");
}

#[tokio::test]
async fn a_malformed_chunked_body_is_400_naming_the_problem() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let body = echo_body(1, "hi");
    // A chunk-size line that is not hexadecimal.
    let mut bytes = post_head(running.addr, Some(&s), "Transfer-Encoding: chunked\r\n");
    bytes.push_str(&format!("zz\r\n{body}\r\n0\r\n\r\n"));
    let r = raw_exchange(running.addr, bytes.as_bytes()).await;
    assert_broken_body(&r, "bad chunk size");
    assert!(
        r.json()["error"]["message"].as_str().unwrap().contains("chunk"),
        "{:?}",
        r.json()
    );
    // A chunk longer than its size says, then the connection ends.
    let mut bytes = post_head(running.addr, Some(&s), "Transfer-Encoding: chunked\r\n");
    bytes.push_str(&format!("4\r\n{body}\r\n0\r\n\r\n"));
    let r = raw_exchange(running.addr, bytes.as_bytes()).await;
    assert_broken_body(&r, "chunk longer than its size");
    mcp.assert_serves(&s, "a malformed chunked body").await;
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_is_400_naming_the_problem() {
    let running = start(test_server(), config()).await;
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    let body = echo_body(1, "hi");
    let declared = body.len() + 10;
    let mut bytes = post_head(running.addr, Some(&s), &format!("Content-Length: {declared}\r\n"));
    bytes.push_str(&body);
    // Half-close: the ten promised bytes never come.
    let r = raw_exchange(running.addr, bytes.as_bytes()).await;
    assert_broken_body(&r, "short body");
    let message = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("end of file"), "{message}");
    mcp.assert_serves(&s, "a short body").await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_still_413() {
    let running = start(
        test_server(),
        mcpkit::server::http::HttpConfig {
            max_body_bytes: 64,
            ..config()
        },
    )
    .await;
    let big = "x".repeat(100);
    let chunk = format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len());
    let mut bytes = post_head(running.addr, None, "Transfer-Encoding: chunked\r\n");
    bytes.push_str(&chunk);
    let r = raw_exchange(running.addr, bytes.as_bytes()).await;
    assert_eq!(r.status, 413, "{r:?}");
    assert_error(&r.json(), -32600, &Value::Null);
}
