//! `HttpServer::serve` serves at most `max_connections` connections at once: one over the limit
//! waits (unaccepted) until another closes, and is then served. With room to spare, a normal
//! client keeps getting answers while 200 idle and 30 slowloris connections are open, and the
//! timeouts then close every one of those. Over raw sockets, with short timeouts; nothing is
//! timed beyond generous bounds, except that a waiting connection gets no answer for a moment.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use common::http::*;
use common::within;
use mcpkit::server::http::HttpConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request with a bodiless reply (404), which keeps its connection alive.
fn probe(addr: SocketAddr) -> String {
    format!("GET /nothing-here HTTP/1.1\r\nHost: {addr}\r\n\r\n")
}

/// Send the probe on `tcp` and read its whole reply (a 404 with an empty body).
async fn probe_answered(tcp: &mut TcpStream, addr: SocketAddr) {
    tcp.write_all(probe(addr).as_bytes()).await.unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 1024];
    while !all.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed before the probe's reply");
        all.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&all);
    assert!(text.starts_with("HTTP/1.1 404"), "{text}");
}

#[tokio::test]
async fn a_connection_over_the_limit_waits_until_one_closes() {
    let long = Duration::from_secs(600);
    let running = start(
        test_server(),
        HttpConfig {
            max_connections: 3,
            header_read_timeout: long,
            idle_timeout: long,
            ..config()
        },
    )
    .await;
    let addr = running.addr;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        within(
            "a connection within the limit to be served",
            probe_answered(&mut tcp, addr),
        )
        .await;
        held.push(tcp);
    }
    // The fourth connects (the kernel's backlog takes it) but is not served while three are open.
    let mut fourth = TcpStream::connect(addr).await.unwrap();
    fourth.write_all(probe(addr).as_bytes()).await.unwrap();
    let mut buf = [0u8; 64];
    let early = tokio::time::timeout(Duration::from_millis(500), fourth.read(&mut buf)).await;
    assert!(
        early.is_err(),
        "a fourth connection was served beyond max_connections = 3: {early:?}"
    );
    // One closes: the fourth is served.
    drop(held.pop());
    let mut all = Vec::new();
    within("the waiting connection to be served", async {
        while !all.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = fourth.read(&mut buf).await.unwrap();
            assert!(n > 0, "the waiting connection was closed");
            all.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(all.starts_with(b"HTTP/1.1 404"), "{:?}", String::from_utf8_lossy(&all));
}

#[tokio::test]
async fn a_normal_client_is_served_while_200_idle_and_30_slowloris_connections_are_open() {
    let cut = Duration::from_secs(3);
    let running = start(
        test_server(),
        HttpConfig {
            max_connections: 250,
            header_read_timeout: cut,
            idle_timeout: cut,
            ..config()
        },
    )
    .await;
    let addr = running.addr;
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    // Slowloris: a request head trickled out a header line at a time, never finished.
    let mut slowloris = Vec::new();
    for i in 0..30 {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
            .await
            .unwrap();
        slowloris.push(tokio::spawn(async move {
            let (mut read, mut write) = tcp.into_split();
            let trickle = async {
                for n in 0..600 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if write
                        .write_all(format!("X-Slow-{i}-{n}: y\r\n").as_bytes())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
            };
            let mut said = Vec::new();
            let until_closed = async {
                let mut buf = [0u8; 1024];
                loop {
                    match read.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => said.extend_from_slice(&buf[..n]),
                    }
                }
            };
            tokio::select! {
                () = until_closed => {}
                () = trickle => panic!("a slowloris connection was never cut off"),
            }
            said
        }));
    }

    // The normal client: a session on its own connection, and requests on fresh ones.
    let mcp = Mcp::new(&running.url);
    let s = mcp.open_session().await;
    for i in 0..5 {
        let (status, body) = mcp.call(Some(&s), echo_body(i, "still here")).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
        assert_eq!(result_text(&body), "still here", "{body}");
        let mut fresh = TcpStream::connect(addr).await.unwrap();
        within("a fresh connection to be served", probe_answered(&mut fresh, addr)).await;
    }

    // And the timeouts free every slot the idle and slowloris connections held.
    for mut tcp in idle {
        assert!(
            read_until_closed(&mut tcp).await.is_none(),
            "an idle connection got a reply"
        );
    }
    for task in slowloris {
        let said = within("a slowloris connection to be cut off", task).await.unwrap();
        assert!(
            said.is_empty() || said.starts_with(b"HTTP/1.1 408"),
            "a slowloris connection got {:?}",
            String::from_utf8_lossy(&said)
        );
    }
}
