//! A stdio server's stderr shown line by line as `server: LINE` (`--server-stderr prefix`, the
//! default), so its banners and logs cannot be taken for mcpkit's own words, each line escaped
//! on a terminal like any other server text ([`crate::terminal`]).
//!
//! While `--protocol auto` probes with `server/discover`, lines are held back: a handshake-era
//! server may answer the probe with pages of validation errors on its stderr. Once connected,
//! held lines are shown when the probe was taken (or with `-v`), and dropped when mcpkit fell
//! back to the handshake, which it says in one line instead.

use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How many held lines are kept at most (a server that floods its stderr while being probed
/// must not grow mcpkit without bound); later ones are counted, not kept.
const MAX_HELD: usize = 10_000;

/// The prefix of every line.
pub const PREFIX: &str = "server: ";

/// Before held lines are dropped, the reader must have been quiet this long: what the server
/// wrote about the probe was written before it answered the handshake, so it is already in the
/// socket, but the reader thread may not have been scheduled to read it yet.
const SETTLE: Duration = Duration::from_millis(30);
/// The longest a release waits for a server that keeps writing.
const SETTLE_MAX: Duration = Duration::from_millis(500);

#[derive(Debug)]
struct Gate {
    holding: bool,
    held: Vec<String>,
    /// Lines dropped because [`MAX_HELD`] were held.
    overflow: usize,
    /// When the reader last read a line.
    last_line: Instant,
}

/// The handle on a server's stderr reader: what decides whether held lines are shown.
#[derive(Debug, Clone)]
pub struct ServerLog {
    gate: Arc<Mutex<Gate>>,
}

impl ServerLog {
    /// Read `stderr` on a thread of its own until it ends, showing each line with [`PREFIX`];
    /// with `hold`, lines are held until [`ServerLog::release`].
    pub fn start(stderr: impl Read + Send + 'static, hold: bool) -> std::io::Result<ServerLog> {
        let log = ServerLog {
            gate: Arc::new(Mutex::new(Gate {
                holding: hold,
                held: Vec::new(),
                overflow: 0,
                last_line: Instant::now(),
            })),
        };
        let gate = log.gate.clone();
        std::thread::Builder::new()
            .name("server-stderr".into())
            .spawn(move || read_lines(stderr, &gate))?;
        Ok(log)
    }

    /// Stop holding lines: show the held ones (`show`) or drop them, once the server has been
    /// quiet for a moment (see [`SETTLE`]); later lines are shown as they come. Returns how many
    /// were dropped.
    pub async fn release(&self, show: bool) -> usize {
        if !show {
            let start = Instant::now();
            tokio::time::sleep(SETTLE).await;
            while start.elapsed() < SETTLE_MAX && self.lock().last_line.elapsed() < SETTLE {
                tokio::time::sleep(SETTLE / 3).await;
            }
        }
        let (held, overflow) = {
            let mut gate = self.lock();
            gate.holding = false;
            (std::mem::take(&mut gate.held), std::mem::take(&mut gate.overflow))
        };
        if show {
            for line in &held {
                write_line(line);
            }
            if overflow > 0 {
                write_line(&format!("({overflow} more lines were not kept)"));
            }
            0
        } else {
            held.len() + overflow
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Gate> {
        self.gate.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn read_lines(stderr: impl Read, gate: &Mutex<Gate>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        let mut g = gate.lock().unwrap_or_else(PoisonError::into_inner);
        g.last_line = Instant::now();
        if g.holding {
            if g.held.len() < MAX_HELD {
                g.held.push(line.to_owned());
            } else {
                g.overflow += 1;
            }
        } else {
            // Written under the lock: a release that shows held lines keeps their order.
            write_line(line);
        }
    }
}

/// One server line on our stderr, escaped on a terminal.
fn write_line(line: &str) {
    let shown = crate::terminal::err(line);
    let mut err = std::io::stderr().lock();
    // Nothing to do when our own stderr is gone.
    let _ = writeln!(err, "{PREFIX}{shown}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that yields its lines, then ends.
    fn wait_for_end(log: &ServerLog) {
        for _ in 0..200 {
            if Arc::strong_count(&log.gate) == 1 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("the reader thread did not end");
    }

    #[tokio::test]
    async fn held_lines_are_dropped_or_kept_in_order() {
        let log = ServerLog::start(&b"one\r\ntwo\nthree"[..], true).unwrap();
        wait_for_end(&log);
        {
            let g = log.gate.lock().unwrap();
            assert_eq!(g.held, ["one", "two", "three"]);
        }
        assert_eq!(log.release(false).await, 3);
        assert!(log.gate.lock().unwrap().held.is_empty());
    }

    #[test]
    fn a_flood_while_holding_is_bounded() {
        let text = "x\n".repeat(MAX_HELD + 5);
        let log = ServerLog::start(std::io::Cursor::new(text.into_bytes()), true).unwrap();
        wait_for_end(&log);
        let g = log.gate.lock().unwrap();
        assert_eq!((g.held.len(), g.overflow), (MAX_HELD, 5));
    }
}
