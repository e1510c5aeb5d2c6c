//! Helpers shared by the interop tests.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub(crate) mod browser;
pub(crate) mod dev_host;
pub(crate) mod gateway;
pub(crate) mod handshake_only;
pub(crate) mod hosts;
pub(crate) mod peers;
#[cfg(unix)]
pub(crate) mod terminal;

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

/// `mcpkit serve --http unix:PATH`, killed (SIGKILL) on drop unless stopped first.
#[cfg(unix)]
pub(crate) struct UnixServer {
    pub(crate) child: Child,
    /// The socket file.
    pub(crate) path: std::path::PathBuf,
}

#[cfg(unix)]
impl UnixServer {
    /// Start it on `path` and wait for its banner.
    pub(crate) fn start(path: &std::path::Path) -> UnixServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .args(["serve", "--http"])
            .arg(format!("unix:{}", path.display()))
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpkit serve --http unix:PATH");
        let stderr = child.stderr.take().unwrap();
        let mut line = String::new();
        BufReader::new(stderr).read_line(&mut line).unwrap();
        let want = format!("mcpkit serve: listening on unix:{}", path.display());
        assert_eq!(line.trim(), want, "unexpected banner");
        UnixServer {
            child,
            path: path.to_owned(),
        }
    }

    /// SIGTERM it and wait: its exit code.
    pub(crate) fn terminate(mut self) -> Option<i32> {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        self.child.wait().unwrap().code()
    }
}

#[cfg(unix)]
impl Drop for UnixServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    /// Run `program args… 0` and wait until it says where it listens: the first line on its
    /// stdout or stderr naming `http://127.0.0.1:PORT` (the TypeScript peers print `listening
    /// on …`, uvicorn `Uvicorn running on …`, both once the socket accepts). Readiness is that
    /// line, not an open port: a port picked here and released could be taken by another
    /// process before the peer binds it, and a probe would then connect to the wrong one.
    pub(crate) fn start(program: &std::path::Path, args: &[&str]) -> PeerServer {
        let mut child = Command::new(program)
            .args(args)
            .arg("0")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the peer server");
        let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        drain_lines(stdout, lines_tx.clone());
        drain_lines(stderr, lines_tx);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut seen = Vec::new();
        let port = loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(port) = announced_port(&line) {
                        break port;
                    }
                    seen.push(line);
                }
                Err(e) => {
                    let status = child.try_wait().ok().flatten();
                    let _ = child.kill();
                    panic!(
                        "{} did not say it listens ({e}; exit status {status:?}); its output:\n{}",
                        program.display(),
                        seen.join("\n")
                    );
                }
            }
        };
        PeerServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }
}

/// Forward `pipe`'s lines to `to`, and keep draining it after the receiver is gone (a peer
/// that logs must never block on a full pipe).
fn drain_lines(pipe: impl std::io::Read + Send + 'static, to: std::sync::mpsc::Sender<String>) {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let _ = to.send(line);
        }
    });
}

/// The port in a banner naming `http://127.0.0.1:PORT` (and not port 0).
fn announced_port(line: &str) -> Option<u16> {
    let (_, rest) = line.split_once("http://127.0.0.1:")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|&p| p != 0)
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
    let transport = mcpkit::transport::http_client::HttpClientTransport::new(url).unwrap();
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
    let transport = mcpkit::transport::http_client::HttpClientTransport::new(url).unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        mcpkit::Client::builder().mode(mode).connect(transport),
    )
    .await
    .expect("connect timed out")
    .expect("connect")
}

/// `mcpkit proxy --listen 127.0.0.1:0 -- mcpkit serve`, killed on drop.
pub(crate) struct Proxy {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
}

impl Proxy {
    pub(crate) fn start() -> Proxy {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .args([
                "proxy",
                "--listen",
                "127.0.0.1:0",
                "--",
                env!("CARGO_BIN_EXE_mcpkit"),
                "serve",
            ])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "mcpkit proxy: listening on http://127.0.0.1:PORT/mcp, one `…` per session"
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap()
            .trim_end_matches(',')
            .to_owned();
        Proxy { child, url }
    }

    /// The proxy's live child processes.
    pub(crate) fn children(&self) -> Vec<String> {
        let pid = self.child.id();
        let mut all = Vec::new();
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
            let p = task.path().join("children");
            if let Ok(s) = std::fs::read_to_string(&p) {
                all.extend(s.split_whitespace().map(str::to_owned));
            }
        }
        all
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `mcpkit ARGS…`; (exit code, stdout, stderr).
pub(crate) fn mcpkit(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(args)
        .env("COLUMNS", "160")
        .stdin(Stdio::null())
        .output()
        .expect("run mcpkit");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mcpkit inspect` and `mcpkit call` against an SDK's echo server (tools echo, add, fail);
/// `target` is `--server URL` or `-- CMD ARGS…`.
pub(crate) fn cli_against_echo_server(target: &[&str]) {
    let with = |args: &[&str]| {
        // SDK servers start slowly on a loaded machine: a generous handshake timeout.
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(&["--timeout", "120s"]);
        all.extend_from_slice(target);
        mcpkit(&all)
    };
    let (code, out, err) = with(&["inspect"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Server "), "{out}");
    assert!(out.contains("Protocol   2025-"), "{out}");
    for tool in ["echo", "add", "fail"] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(tool)),
            "{tool} missing: {out}"
        );
    }
    let (code, out, _) = with(&["inspect", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["tools"].as_array().unwrap().len() >= 3);
    let (code, out, err) = with(&["call", "echo", "message=hi from the cli"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("hi from the cli\n"), "{out}");
    let (code, out, err) = with(&["call", "add", "a=2", "b=3"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"result\": 5"), "{out}");
    let (code, _, err) = with(&["call", "fail"]);
    assert_eq!(code, 1, "isError exits 1: {err}");
    let (code, _, err) = with(&["call", "add", "a=two", "b=3"]);
    assert_eq!(code, 2);
    // "must be an integer" (Python: int) or "must be a number" (TypeScript: z.number()).
    assert!(
        err.trim().starts_with("mcpkit call: argument \"a\" must be an") || err.contains("must be a number"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `mcpkit serve --http 127.0.0.1:0 ARGS` as a tokio child (killed on drop): the URL it printed
/// (`http://127.0.0.1:PORT/mcp`) and the rest of its stderr, drained in the background so the
/// child never blocks on it.
pub(crate) async fn serve_http(args: &[&str]) -> (tokio::process::Child, String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mcpkit serve --http");
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        let n = mcpkit_test_support::within("the listening line", stderr.read_line(&mut line))
            .await
            .unwrap();
        assert!(n > 0, "mcpkit serve exited before listening");
        if let Some(rest) = line.trim().strip_prefix("mcpkit serve: listening on ") {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let rest = tokio::spawn(async move {
        let mut all = String::new();
        let _ = stderr.read_to_string(&mut all).await;
        all
    });
    (child, url, rest)
}
