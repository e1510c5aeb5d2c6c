//! `mcpkit dev --no-open ARGS` as a child process (killed on drop): the page's URL (the first
//! line on its stdout) and its stderr, drained in the background.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(crate) struct DevHost {
    child: Child,
    /// `http://127.0.0.1:PORT/?token=…`.
    pub(crate) url: String,
    /// When the process was started.
    pub(crate) started: Instant,
    stderr: Arc<Mutex<String>>,
}

impl DevHost {
    /// `mcpkit dev --no-open ARGS…`, once it printed its URL.
    pub(crate) fn start(args: &[&str]) -> DevHost {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .args(["dev", "--no-open"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcpkit dev");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.contains("/?token="),
            "the first line is not the page's URL: {line:?}; stderr: {}",
            stderr.lock().unwrap()
        );
        DevHost {
            child,
            url,
            started,
            stderr,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base(&self) -> &str {
        self.url.split("/?").next().unwrap()
    }

    /// The token.
    pub(crate) fn token(&self) -> &str {
        self.url.split("token=").nth(1).unwrap()
    }

    /// What it wrote on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for DevHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
