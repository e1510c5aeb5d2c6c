//! `mcpkit serve --http ADDR --trace-wire -vv`: every JSON-RPC message in and out is printed
//! to stderr, as on stdio (`HH:MM:SS.mmm <- client {…}` / `-> client {…}`), for a
//! handshake-era session, a 2026-07-28 request and the legacy HTTP+SSE endpoints; and `-vv`
//! prints the HTTP front end's debug lines (one per request, sessions started and ended).
//! Before, both printed nothing over HTTP. Real processes.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `mcpkit serve --http 127.0.0.1:0 --trace-wire -vv`, its stderr lines collected; killed on drop.
struct TracedServer {
    child: Child,
    url: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl TracedServer {
    fn start() -> TracedServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .env_remove("RUST_LOG")
            .args(["serve", "--http", "127.0.0.1:0", "--trace-wire", "-vv"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let url = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "mcpkit serve exited");
            if let Some((_, url)) = line.trim().split_once("listening on ") {
                break url.to_owned();
            }
        };
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        TracedServer { child, url, lines }
    }

    /// Wait until some line satisfies `want`, then return it.
    fn line(&self, what: &str, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(l) = self.lines.lock().unwrap().iter().find(|l| want(l)) {
                return l.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no line {what} in the server's stderr:\n{}",
                self.lines.lock().unwrap().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The traced message going `arrow` (`<-` received, `->` sent) whose JSON contains every
    /// one of `parts`.
    fn traced(&self, arrow: &str, parts: &[&str]) -> String {
        let marker = format!(" {arrow} client {{");
        self.line(&format!("{arrow} {parts:?}"), |l| {
            is_timestamped(l) && l.contains(&marker) && parts.iter().all(|p| l.contains(p))
        })
    }
}

impl Drop for TracedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `HH:MM:SS.mmm ` at the start, as `--trace-wire` prints on stdio.
fn is_timestamped(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 13
        && [0, 1, 3, 4, 6, 7, 9, 10, 11].iter().all(|&i| b[i].is_ascii_digit())
        && b[2] == b':'
        && b[5] == b':'
        && b[8] == b'.'
        && b[12] == b' '
}

fn call(args: &[&str]) {
    let out = assert_cmd::Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .arg("call")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mcpkit call {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn trace_wire_over_http_prints_every_message_of_both_eras_and_the_legacy_endpoints() {
    let server = TracedServer::start();
    call(&["echo", "message=handshake-traced", "--server", &server.url]);
    server.traced("<-", &[r#""method":"initialize""#]);
    server.traced("->", &[r#""serverInfo""#, r#""protocolVersion""#]);
    server.traced("<-", &[r#""method":"notifications/initialized""#]);
    server.traced("<-", &[r#""method":"tools/call""#, "handshake-traced"]);
    server.traced("->", &[r#""result""#, "handshake-traced"]);

    call(&[
        "echo",
        "message=stateless-traced",
        "--protocol",
        "2026-07-28",
        "--server",
        &server.url,
    ]);
    server.traced("<-", &[r#""method":"tools/call""#, "stateless-traced", "2026-07-28"]);
    server.traced("->", &[r#""result""#, "stateless-traced"]);

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    let sse = server.url.replace("/mcp", "/sse");
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"old": {{"type": "sse", "url": "{sse}"}}}}}}"#),
    )
    .unwrap();
    call(&[
        "echo",
        "message=legacy-traced",
        "--config",
        config.to_str().unwrap(),
        "--server",
        "old",
    ]);
    server.traced("<-", &[r#""method":"tools/call""#, "legacy-traced"]);
    server.traced("->", &[r#""result""#, "legacy-traced"]);
}

#[test]
fn verbose_serve_over_http_logs_each_request_and_the_session_lifecycle_at_debug() {
    let server = TracedServer::start();
    call(&["echo", "message=hi", "--server", &server.url]);
    let debug = |l: &str| l.contains("DEBUG");
    server.line("about a POST", |l| debug(l) && l.contains("POST /mcp -> 200 OK"));
    server.line("about a session started", |l| {
        debug(l) && l.contains("MCP session") && l.contains("started")
    });
    server.line("about the DELETE", |l| debug(l) && l.contains("DELETE /mcp -> 200 OK"));
    server.line("about the session ended", |l| {
        debug(l) && l.contains("ended by its client")
    });
}
