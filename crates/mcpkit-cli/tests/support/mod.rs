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
