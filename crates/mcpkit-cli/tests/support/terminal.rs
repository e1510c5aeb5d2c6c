//! Running `mcpkit` on a pseudo-terminal: its stdout and stderr are a terminal, as a user's are,
//! and everything written to them is read back from the terminal's other side.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long `mcpkit` may run before the test gives up on it (and kills it).
const PATIENCE: Duration = Duration::from_secs(60);

/// Run `mcpkit ARGS…` with stdout and stderr on one new pseudo-terminal and stdin from
/// /dev/null (not interactive); its exit code and every byte it wrote to the terminal.
pub(crate) fn mcpkit_on_a_terminal(args: &[&str]) -> (Option<i32>, Vec<u8>) {
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let stdout = pty.slave.try_clone().expect("a second handle on the terminal");
    // The command, and with it this process's handles on the terminal, is dropped once spawned:
    // the terminal reports its end when mcpkit (and its server) have closed theirs.
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(pty.slave))
        .spawn()
        .expect("run mcpkit");
    let mut master = std::fs::File::from(pty.master);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match master.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // EIO: every handle on the terminal's side is closed.
                Err(_) => break,
            }
        }
        let _ = tx.send(all);
    });
    let deadline = Instant::now() + PATIENCE;
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait for mcpkit") {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcpkit {args:?} did not exit within {PATIENCE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the terminal's output (is a server still holding the terminal?)");
    (code, output)
}
