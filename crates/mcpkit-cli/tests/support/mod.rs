//! Helpers shared by the interop tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// `mcpkit serve --http 127.0.0.1:0`, killed on drop; yields its base URL.
pub(crate) struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

impl HttpServer {
    /// Start it and wait for its banner.
    pub(crate) fn start() -> HttpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpkit serve --http");
        let stderr = child.stderr.take().unwrap();
        let mut line = String::new();
        BufReader::new(stderr).read_line(&mut line).unwrap();
        // "mcpkit serve: listening on http://127.0.0.1:PORT/mcp"
        let url = line.trim().rsplit(' ').next().unwrap().to_owned();
        let base = url.trim_end_matches("/mcp").to_owned();
        assert!(base.starts_with("http://127.0.0.1:"), "unexpected banner: {line}");
        HttpServer { child, base }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An SDK-written server process listening on a free loopback port; killed on drop.
pub(crate) struct PeerServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

impl PeerServer {
    /// Run `program args… PORT` (the port appended) and wait until it accepts connections.
    pub(crate) fn start(program: &std::path::Path, args: &[&str]) -> PeerServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(program)
            .args(args)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the peer server");
        let server = PeerServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{} did not start listening",
                program.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        server
    }
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The checks the mcpkit client runs against every SDK's echo server (tools echo, add, fail).
pub(crate) async fn exercise_echo_server(client: &mcpkit::Client) {
    use serde_json::json;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "add"),
        "{names:?}"
    );
    let r = client
        .call_tool("echo", json!({"message": "hi from rust"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi from rust"));
    assert!(!r.is_error());
    // `add` declares an output schema; the client validates structuredContent against it.
    let r = client.call_tool("add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": 5})));
    assert!(client.call_tool("fail", ()).await.unwrap().is_error());
    let calls = (0..20).map(|i| {
        let c = client.clone();
        async move { c.call_tool("echo", json!({"message": format!("m{i}")})).await }
    });
    for (i, r) in futures_util::future::join_all(calls).await.into_iter().enumerate() {
        assert_eq!(r.unwrap().content[0].as_text(), Some(format!("m{i}").as_str()));
    }
    client.ping().await.unwrap();
}

/// Connect the mcpkit client over HTTP (Streamable, or legacy SSE for a `/sse` URL).
pub(crate) async fn connect_http(url: &str) -> mcpkit::Client {
    let transport = mcpkit::transport::http::client::HttpClientTransport::new(url).unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        mcpkit::Client::builder().connect(transport),
    )
    .await
    .expect("connect timed out")
    .expect("connect")
}

/// Run an SDK's `client_checks` program (`program script args…`) and assert that it ran checks
/// and that every one passed (its last line is `N passed, 0 failed`).
pub(crate) fn run_client_checks(sdk: &str, program: &std::path::Path, script: &std::path::Path, args: &[&str]) {
    let out = Command::new(program)
        .arg(script)
        .args(args)
        .output()
        .expect("run the client checks");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(" 0 failed"),
        "the {sdk} SDK client reported failures: {last}"
    );
    assert!(!last.starts_with("0 passed"), "no check ran");
    assert!(out.status.success());
}

/// Connect the mcpkit client to `url` (Streamable HTTP) with `mode`.
pub(crate) async fn connect_http_mode(url: &str, mode: mcpkit::client::ConnectMode) -> mcpkit::Client {
    let transport = mcpkit::transport::http::client::HttpClientTransport::new(url).unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        mcpkit::Client::builder().mode(mode).connect(transport),
    )
    .await
    .expect("connect timed out")
    .expect("connect")
}
