//! A real Prometheus server (Debian's `prometheus` package) and `promtool`, for the metrics
//! tests: started on a free port of 127.0.0.1 with a scrape config and a data directory of its
//! own, stopped by pid when dropped.

use crate::process::free_port;
use std::io::Write as _;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const INSTALL: &str =
    "install it with `apt-get install prometheus` (Debian's package ships `prometheus` and `promtool`)";

fn find(tool: &str) -> PathBuf {
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        let p = Path::new(dir).join(tool);
        if p.is_file() {
            return p;
        }
    }
    panic!("`{tool}` is not on PATH: {INSTALL}");
}

/// `promtool check metrics` on `text`: `Ok` when it accepts it, else its complaint.
pub fn promtool_check_metrics(text: &str) -> Result<(), String> {
    let mut child = Command::new(find("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A running Prometheus scraping one target every second.
pub struct Prometheus {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    _dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Start Prometheus scraping `target` (`host:port`, path `/metrics`) every second.
    pub async fn start(target: &str) -> Prometheus {
        let binary = find("prometheus");
        let dir = std::env::temp_dir().join(format!("mcpkit-prometheus-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: mcpkit\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address={listen}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start prometheus: {e}; {INSTALL}"));
        let p = Prometheus {
            child,
            url: format!("http://{listen}"),
            _dir: TempDir(dir),
        };
        for _ in 0..300 {
            if get(&listen, "/-/ready").await.is_some_and(|(status, _)| status == 200) {
                return p;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("prometheus did not become ready on {listen}");
    }

    /// The JSON answer of an instant query (`/api/v1/query?query=…`).
    pub async fn query(&self, query: &str) -> serde_json::Value {
        let addr = self.url.trim_start_matches("http://");
        let path = format!("/api/v1/query?query={}", urlencode(query));
        let (_, body) = get(addr, &path).await.expect("prometheus answers queries");
        serde_json::from_str(&body).unwrap()
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// A plain HTTP/1.1 GET on `addr` (`host:port`): status and body, `None` when nothing answers.
pub async fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    Some((status, if chunked { dechunk(body) } else { body.to_owned() }))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}
