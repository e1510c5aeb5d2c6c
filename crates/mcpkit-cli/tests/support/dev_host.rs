//! `mcpkit dev --no-open ARGS` as a child process (killed on drop): the page's URL (the first
//! line on its stdout) and its stderr, drained in the background; and the page's event stream.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

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
        DevHost::start_in(&std::env::current_dir().unwrap(), args)
    }

    /// [`DevHost::start`] in the folder `dir`.
    pub(crate) fn start_in(dir: &Path, args: &[&str]) -> DevHost {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .current_dir(dir)
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

    /// The processes it started (the stdio server), by pid.
    pub(crate) fn children(&self) -> Vec<u32> {
        let mut all = Vec::new();
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).unwrap();
        for task in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(task.path().join("children")) {
                all.extend(s.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
            }
        }
        all
    }

    /// Its pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Wait up to `limit` for it to exit; its status, or `None` if it still runs.
    pub(crate) fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What it wrote on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The page's event stream, from its start.
    pub(crate) async fn events(&self) -> Events {
        let reply = reqwest::get(format!("{}/api/events?token={}", self.base(), self.token()))
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        Events {
            reply,
            buffered: String::new(),
        }
    }

    /// `GET /api/state`.
    pub(crate) async fn state(&self) -> Value {
        let reply = reqwest::get(format!("{}/api/state?token={}", self.base(), self.token()))
            .await
            .unwrap();
        serde_json::from_str(&reply.text().await.unwrap()).unwrap()
    }

    /// `POST path` with a JSON body; the JSON reply.
    pub(crate) async fn post(&self, path: &str, body: &Value) -> Value {
        let reply = reqwest::Client::new()
            .post(format!("{}{path}?token={}", self.base(), self.token()))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        serde_json::from_str(&reply.text().await.unwrap()).unwrap()
    }

    /// `POST /api/call` with `body` on a task of its own (for a call that waits on the page, an
    /// answer or a cancel): its JSON reply when it ends.
    pub(crate) fn spawn_call(&self, body: Value) -> tokio::task::JoinHandle<Value> {
        let (base, token) = (self.base().to_owned(), self.token().to_owned());
        tokio::spawn(async move {
            let reply = reqwest::Client::new()
                .post(format!("{base}/api/call?token={token}"))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            serde_json::from_str::<Value>(&reply.text().await.unwrap()).unwrap()
        })
    }
}

/// The page's event stream (`GET /api/events`), read as it comes.
pub(crate) struct Events {
    reply: reqwest::Response,
    buffered: String,
}

impl Events {
    /// Whether the stream ends (the server closes it) within `limit`, whatever comes first.
    pub(crate) async fn ends_within(&mut self, limit: Duration) -> bool {
        let draining = async { while let Ok(Some(_)) = self.reply.chunk().await {} };
        tokio::time::timeout(limit, draining).await.is_ok()
    }

    /// Read events until one satisfies `want` (named `what` in the failure); panics after 20 s.
    pub(crate) async fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let reading = async {
            loop {
                while let Some(end) = self.buffered.find("\n\n") {
                    let event: String = self.buffered.drain(..end + 2).collect();
                    for data in event.lines().filter_map(|l| l.strip_prefix("data: ")) {
                        let v: Value = serde_json::from_str(data).unwrap();
                        if want(&v) {
                            return v;
                        }
                    }
                }
                let chunk = self.reply.chunk().await.unwrap().expect("the event stream ended");
                self.buffered.push_str(&String::from_utf8_lossy(&chunk));
            }
        };
        tokio::time::timeout(Duration::from_secs(20), reading)
            .await
            .unwrap_or_else(|_| panic!("no {what} event within 20 s"))
    }
}

impl Drop for DevHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
