//! A real `redis-server` for tests: started on a free port of 127.0.0.1 with no persistence, in
//! its own temporary directory, stopped (and restartable on the same port, for the tests of a
//! Redis outage) by pid, and killed when dropped. Plus a tiny RESP client for what tests ask
//! Redis directly: `INFO commandstats` (how many commands a call cost), `CONFIG RESETSTAT`,
//! `KEYS`.
//!
//! Everything here is blocking std I/O: a test spends a few milliseconds in it while nothing
//! else needs its runtime.

use crate::process::free_port;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long `redis-server` may take to answer its first PING.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// A `redis-server` child process on `127.0.0.1:port`.
#[derive(Debug)]
pub struct RedisProcess {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl RedisProcess {
    /// Start `redis-server` on a free port and wait until it answers PING. Panics (failing the
    /// test) with the install command when `redis-server` is not installed.
    pub fn start() -> RedisProcess {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "mcpkit-redis-{}-{}-{}",
            std::process::id(),
            port,
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create the redis-server directory");
        let mut redis = RedisProcess { port, dir, child: None };
        redis.restart();
        redis
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port it listens on (the same across [`RedisProcess::restart`]).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the process is running (started and not stopped).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Kill the process (SIGKILL, by pid) and wait for it: every connection to it breaks, and
    /// its data is gone.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start it again on the same port (stopping it first if it runs), with empty data, and wait
    /// for PING.
    pub fn restart(&mut self) {
        self.stop();
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--protected-mode", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .current_dir(&self.dir)
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "redis-server is not installed; these tests need a real Redis: \
                 run `apt-get install redis-server` (Debian/Ubuntu)"
            ),
            Err(e) => panic!("could not start redis-server: {e}"),
        };
        self.child = Some(child);
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(RespValue::Simple(s)) = self.command(&["PING"]) {
                if s == "PONG" {
                    return;
                }
            }
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                panic!("redis-server on port {} exited at start: {status}", self.port);
            }
            assert!(
                Instant::now() < deadline,
                "redis-server on port {} did not answer PING within {READY_TIMEOUT:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Send one command on a new connection and read its reply.
    pub fn command(&self, args: &[&str]) -> std::io::Result<RespValue> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut frame = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            frame.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            frame.extend_from_slice(a.as_bytes());
            frame.extend_from_slice(b"\r\n");
        }
        stream.write_all(&frame)?;
        read_value(&mut BufReader::new(stream))
    }

    /// Calls per command name since the last [`RedisProcess::reset_stats`] (or the start), from
    /// `INFO commandstats`, lower-case (`"hset"`, `"evalsha"`, `"client|setinfo"`). The `INFO`
    /// and `CONFIG` commands the tests send themselves are left out.
    pub fn command_stats(&self) -> BTreeMap<String, u64> {
        let info = match self.command(&["INFO", "commandstats"]) {
            Ok(RespValue::Bulk(Some(s))) => s,
            other => panic!("INFO commandstats failed: {other:?}"),
        };
        let mut stats = BTreeMap::new();
        for line in info.lines() {
            let Some(rest) = line.strip_prefix("cmdstat_") else {
                continue;
            };
            let Some((name, fields)) = rest.split_once(':') else {
                continue;
            };
            if name == "info" || name.starts_with("config") {
                continue;
            }
            let calls = fields
                .split(',')
                .find_map(|f| f.strip_prefix("calls="))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            stats.insert(name.to_owned(), calls);
        }
        stats
    }

    /// The number of commands counted by [`RedisProcess::command_stats`], all names together.
    pub fn total_commands(&self) -> u64 {
        self.command_stats().values().sum()
    }

    /// How many changes Redis made to its data since it started (`rdb_changes_since_last_save`
    /// of `INFO persistence`; nothing is ever saved): unchanged across a call means the call
    /// wrote nothing.
    pub fn writes(&self) -> u64 {
        let info = match self.command(&["INFO", "persistence"]) {
            Ok(RespValue::Bulk(Some(s))) => s,
            other => panic!("INFO persistence failed: {other:?}"),
        };
        info.lines()
            .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("rdb_changes_since_last_save in INFO persistence")
    }

    /// Zero the command statistics (`CONFIG RESETSTAT`).
    pub fn reset_stats(&self) {
        match self.command(&["CONFIG", "RESETSTAT"]) {
            Ok(RespValue::Simple(_)) => {}
            other => panic!("CONFIG RESETSTAT failed: {other:?}"),
        }
    }

    /// Every key name matching `pattern` (`KEYS`; fine on a test's small data set), sorted.
    pub fn keys(&self, pattern: &str) -> Vec<String> {
        match self.command(&["KEYS", pattern]) {
            Ok(RespValue::Array(items)) => {
                let mut keys: Vec<String> = items
                    .into_iter()
                    .filter_map(|v| match v {
                        RespValue::Bulk(Some(s)) => Some(s),
                        _ => None,
                    })
                    .collect();
                keys.sort();
                keys
            }
            other => panic!("KEYS failed: {other:?}"),
        }
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One RESP2 reply, as far as the tests need to read it.
#[derive(Debug, Clone, PartialEq)]
pub enum RespValue {
    /// `+OK`.
    Simple(String),
    /// `-ERR …`.
    Error(String),
    /// `:1`.
    Integer(i64),
    /// `$…`; `None` for the null bulk string.
    Bulk(Option<String>),
    /// `*…` (a null array reads as empty).
    Array(Vec<RespValue>),
}

fn read_value(reader: &mut impl BufRead) -> std::io::Result<RespValue> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end_matches(['\r', '\n']);
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad RESP line {line:?}"));
    let (kind, rest) = line.split_at_checked(1).ok_or_else(bad)?;
    Ok(match kind {
        "+" => RespValue::Simple(rest.to_owned()),
        "-" => RespValue::Error(rest.to_owned()),
        ":" => RespValue::Integer(rest.parse().map_err(|_| bad())?),
        "$" => {
            let len: i64 = rest.parse().map_err(|_| bad())?;
            if len < 0 {
                RespValue::Bulk(None)
            } else {
                let mut buf = vec![0; usize::try_from(len).map_err(|_| bad())? + 2];
                reader.read_exact(&mut buf)?;
                buf.truncate(buf.len() - 2);
                RespValue::Bulk(Some(String::from_utf8_lossy(&buf).into_owned()))
            }
        }
        "*" => {
            let len: i64 = rest.parse().map_err(|_| bad())?;
            let mut items = Vec::new();
            for _ in 0..len.max(0) {
                items.push(read_value(reader)?);
            }
            RespValue::Array(items)
        }
        _ => return Err(bad()),
    })
}
