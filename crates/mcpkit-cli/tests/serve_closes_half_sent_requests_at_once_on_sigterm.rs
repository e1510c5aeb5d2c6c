//! SIGTERM to `mcpkit serve --http` while clients are half-way through a request (its headers,
//! or its body) ends the process, with exit code 0, without waiting for the graceful-shutdown
//! deadline: those connections have no request being served, and are closed at once. A real
//! process and raw sockets; the only time bound is the harness's wait for each step, shorter
//! than the deadline and read timeouts set here.
#![cfg(unix)]

use std::time::Duration;

use mcpkit_test_support::within;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Child;

use crate::support;

/// `mcpkit serve --http 127.0.0.1:0 ARGS`, killed on drop; with its bound address.
async fn serve(args: &[&str]) -> (Child, String) {
    let (child, url, _stderr) = support::serve_http(args).await;
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    (child, addr)
}

/// Connections half-way through a request: one in its headers, one in its body.
async fn half_sent_requests(addr: &str) -> Vec<TcpStream> {
    let mut headers = TcpStream::connect(addr).await.unwrap();
    headers
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n").as_bytes())
        .await
        .unwrap();
    let mut body = TcpStream::connect(addr).await.unwrap();
    body.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\":"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    // Let the server read both before the signal.
    tokio::time::sleep(Duration::from_millis(200)).await;
    vec![headers, body]
}

/// SIGTERM `child`; it must exit with code 0, and the `held` connections must be closed.
async fn assert_sigterm_exits_0(mut child: Child, held: Vec<TcpStream>) {
    let pid = nix::unistd::Pid::from_raw(child.id().expect("a running child") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = within("mcpkit serve to exit after SIGTERM", child.wait())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    for mut tcp in held {
        let mut buf = [0u8; 1024];
        // Closed (end of stream, or a reset), whatever it said before.
        loop {
            match within("the connection to be closed", tcp.read(&mut buf)).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
}

#[tokio::test]
async fn sigterm_with_half_sent_requests_exits_0_with_the_default_deadline() {
    let (child, addr) = serve(&[]).await;
    let held = half_sent_requests(&addr).await;
    assert_sigterm_exits_0(child, held).await;
}

#[tokio::test]
async fn sigterm_with_half_sent_requests_exits_0_long_before_a_long_deadline() {
    let (child, addr) = serve(&[
        "--shutdown-timeout",
        "10m",
        "--header-timeout",
        "10m",
        "--body-timeout",
        "10m",
        "--idle-timeout",
        "10m",
        "--max-connections",
        "16",
    ])
    .await;
    let held = half_sent_requests(&addr).await;
    assert_sigterm_exits_0(child, held).await;
}
