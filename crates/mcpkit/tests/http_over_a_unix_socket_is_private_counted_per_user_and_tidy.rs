//! Streamable HTTP on a Unix domain socket (`bind_unix` + `HttpServer::serve_unix`): the socket
//! file is 0600, a stale one is replaced, a live one or another kind of file is not, the file
//! is gone after shutdown; a client's sessions are counted under its user id; mcpkit's client
//! reaches it with a `unix:` or `http+unix:` URL in both eras. (The HTTP behaviour tests that
//! do not depend on TCP also run over a socket: `Over::Unix` in `http_session_lifecycle`,
//! `http_bad_requests_are_refused` and `http_sse_streams_resume_and_the_get_stream`.)
#![cfg(all(
    unix,
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};

use common::http::*;
use common::within;
use mcpkit::client::ConnectMode;
use mcpkit::server::http::{bind_unix, HttpConfig, HttpServer};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ProtocolVersion;
use mcpkit::Client;
use reqwest::StatusCode;

#[tokio::test]
async fn the_socket_file_is_private_replaces_a_stale_one_and_is_removed_at_shutdown() {
    let dir = socket_dir();
    let path = dir.join("s.sock");

    // A stale socket file: bound, then its listener gone without removing it.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(std::fs::symlink_metadata(&path).unwrap().file_type().is_socket());
    let listener = bind_unix(&path).await.unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);

    let stop = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(
        HttpServer::new(test_server())
            .shutdown(stop.clone())
            .serve_unix(listener),
    );
    let mcp = Mcp::new(&format!("unix:{}", path.display()));
    let session = mcp.open_session().await;
    mcp.assert_serves(&session, "initialize over a Unix socket").await;

    // A server listens: a second bind is refused and leaves the socket alone.
    let e = bind_unix(&path).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
    mcp.assert_serves(&session, "a refused second bind").await;

    // Graceful shutdown: the call returns and the socket file is gone.
    stop.cancel();
    within("serve_unix to return", task).await.unwrap().unwrap();
    assert!(!path.exists(), "the socket file outlived the server");

    // Another kind of file is never replaced.
    std::fs::write(&path, b"not a socket").unwrap();
    let e = bind_unix(&path).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"not a socket");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn sessions_are_counted_per_user_on_a_unix_socket() {
    let served = Served::start_unix(HttpServer::new(test_server()).config(HttpConfig {
        max_sessions_per_client: 2,
        ..config()
    }))
    .await;
    let mcp = Mcp::new(&served.url);
    // Two connections of one user (this process: the same uid whatever the connection).
    let first = mcp.open_session().await;
    let other = Mcp::new(&served.url);
    let second = other.open_session().await;
    let r = send(other.post(None, initialize_body(3))).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = json_body(r).await;
    assert!(body.to_string().contains("Too many sessions for this client"), "{body}");
    // Ending one gives its place back.
    assert_eq!(send(mcp.delete(&first)).await.status(), StatusCode::OK);
    other.assert_serves(&second, "a refused third session").await;
    let third = other.open_session().await;
    other.assert_serves(&third, "a place given back").await;
}

#[tokio::test]
async fn mcpkit_clients_reach_a_unix_socket_in_both_eras() {
    let served = Served::start_unix(HttpServer::new(test_server()).config(config())).await;
    let socket = served.socket.clone().unwrap();
    let encoded = socket.to_str().unwrap().replace('/', "%2F");
    for (url, mode) in [
        (served.url.clone(), ConnectMode::Handshake),
        (format!("http+unix://{encoded}/mcp"), ConnectMode::Handshake),
        (served.url.clone(), ConnectMode::Pinned(ProtocolVersion::V2026_07_28)),
    ] {
        let transport = HttpClientTransport::new(url.as_str()).unwrap();
        let client = within("connect", Client::builder().mode(mode).connect(transport))
            .await
            .unwrap();
        let r = within(
            "echo",
            client.call_tool("echo", serde_json::json!({"text": "over uds"})),
        )
        .await
        .unwrap();
        assert_eq!(r.structured_content, None);
        let text = serde_json::to_value(&r.content).unwrap();
        assert_eq!(text[0]["text"], "over uds", "{url} {mode:?}");
        within("close", client.close()).await.unwrap();
    }
}

#[tokio::test]
async fn stalled_and_idle_connections_are_closed_on_a_unix_socket() {
    use std::time::Duration;
    use tokio::io::AsyncWriteExt;
    use tokio::net::UnixStream;

    let short = Duration::from_millis(300);
    let served = Served::start_unix(HttpServer::new(test_server()).config(HttpConfig {
        header_read_timeout: short,
        idle_timeout: short,
        ..config()
    }))
    .await;
    let path = served.socket.clone().unwrap();

    // Half a request head, then nothing: 408, and the connection closes.
    let mut stalled = UnixStream::connect(&path).await.unwrap();
    stalled
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .unwrap();
    let reply = read_until_closed(&mut stalled).await.expect("a 408 before the close");
    assert_eq!(reply.status, 408);

    // Nothing at all: closed without a reply.
    let mut idle = UnixStream::connect(&path).await.unwrap();
    assert!(read_until_closed(&mut idle).await.is_none());
}
