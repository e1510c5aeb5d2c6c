//! `mcpkit dev` prints the page's URL, with its token, as the first line on stdout, and its
//! HTTP API refuses a request without the token (401), with another token (403), with a
//! `Host` that does not name it (421) or from another origin (403).

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::support::dev_host::DevHost;

/// The status of `GET path` sent to `addr` with these `Host` and `Origin` headers.
fn status(addr: &str, path: &str, host: &str, origin: Option<&str>) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP reply: {reply:?}"))
}

#[test]
fn requests_need_the_token_the_host_and_the_origin() {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let addr = dev.base().trim_start_matches("http://").to_owned();
    let token = dev.token().to_owned();
    assert_eq!(token.len(), 64, "a 256-bit token, hex");
    let with = format!("/?token={token}");
    let api = format!("/api/state?token={token}");
    assert_eq!(status(&addr, &with, &addr, None), 200);
    assert_eq!(status(&addr, &api, &addr, Some(&format!("http://{addr}"))), 200);
    let port = addr.rsplit(':').next().unwrap();
    assert_eq!(status(&addr, &with, &format!("localhost:{port}"), None), 200);

    assert_eq!(status(&addr, "/", &addr, None), 401);
    assert_eq!(status(&addr, "/api/state", &addr, None), 401);
    assert_eq!(status(&addr, "/api/events", &addr, None), 401);
    let wrong: String = token.chars().rev().collect();
    assert_eq!(status(&addr, &format!("/?token={wrong}"), &addr, None), 403);
    assert_eq!(status(&addr, "/?token=", &addr, None), 403);
    // DNS rebinding: the right token under another name.
    assert_eq!(status(&addr, &with, &format!("evil.example:{port}"), None), 421);
    // Another site in the same browser.
    assert_eq!(status(&addr, &api, &addr, Some("http://evil.example")), 403);
    assert_eq!(status(&addr, &api, &addr, Some("null")), 403);
}
