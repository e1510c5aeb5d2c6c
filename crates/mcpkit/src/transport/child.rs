//! The client side of stdio: spawn a server process and speak newline-delimited JSON over its
//! stdin/stdout. Closing the transport shuts the child down as the spec asks: close its stdin,
//! wait, then SIGTERM, wait, then SIGKILL (on Windows, which has no SIGTERM: close its stdin,
//! wait, then kill).

use std::ffi::OsStr;
use std::io;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::stdio::{LineReader, LineTransport, LineWriter};
use super::{Frame, FrameReader, FrameWriter, Transport};
use crate::sync::lock;

/// What to do with the child's stderr (its log channel).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stderr {
    /// Pass it through to our own stderr.
    #[default]
    Inherit,
    /// Read it line by line into `tracing` at debug level, target `mcpkit::child`.
    Trace,
    /// Discard it.
    Null,
    /// Keep what the command was given with `Command::stderr` (a file, say); without that, the
    /// child inherits ours.
    AsConfigured,
}

/// A spawned MCP server process.
#[derive(Debug)]
pub struct ChildTransport {
    child: Child,
    inner: LineTransport<BufReader<ChildStdout>, BufWriter<ChildStdin>>,
    grace: Duration,
}

impl ChildTransport {
    /// Spawn `program args…` with piped stdin/stdout.
    pub fn spawn<I, S>(program: impl AsRef<OsStr>, args: I) -> io::Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(program);
        cmd.args(args);
        Self::from_command(cmd, Stderr::Inherit)
    }

    /// Spawn a prepared command; stdin/stdout are replaced with pipes.
    pub fn from_command(mut cmd: Command, stderr: Stderr) -> io::Result<Self> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).kill_on_drop(true);
        match stderr {
            Stderr::Inherit => {
                cmd.stderr(Stdio::inherit());
            }
            Stderr::Trace => {
                cmd.stderr(Stdio::piped());
            }
            Stderr::Null => {
                cmd.stderr(Stdio::null());
            }
            Stderr::AsConfigured => {}
        }
        let mut child = cmd.spawn()?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("child stdin was not piped"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("child stdout was not piped"))?;
        if let Some(err) = child.stderr.take() {
            tokio::spawn(async move {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(target: "mcpkit::child", "{line}");
                }
            });
        }
        Ok(ChildTransport {
            child,
            inner: LineTransport::new(stdout, stdin),
            grace: Duration::from_secs(2),
        })
    }

    /// How long to wait after closing stdin, and again after SIGTERM (default 2 s each).
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The child's process id.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

/// The child process, shared by both halves: the writer shuts it down, the reader looks at its
/// exit status when its stdout ends.
#[derive(Debug)]
struct Process {
    child: Mutex<Child>,
    /// Set once our side began the shutdown: the exit that follows is no news.
    closing: AtomicBool,
}

/// How often an exit is polled for (the halves share the child, so nobody awaits it).
const EXIT_POLL: Duration = Duration::from_millis(10);
/// How long the reader waits at the end of stdout for the child's exit status.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);

impl Process {
    /// The exit status, once the child has exited (reaping it).
    fn exited(&self) -> Option<std::process::ExitStatus> {
        lock(&self.child).try_wait().ok().flatten()
    }

    /// Wait up to `limit` for the child to exit; its status if it did.
    async fn wait_for_exit(&self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(EXIT_POLL).await;
        }
    }
}

/// Reading half: the child's stdout.
#[derive(Debug)]
pub struct ChildReader {
    inner: LineReader<BufReader<ChildStdout>>,
    process: Arc<Process>,
}

/// Writing half: the child's stdin; closing it shuts the child down.
#[derive(Debug)]
pub struct ChildWriter {
    /// `None` once closed: dropping the pipe is what closes the child's stdin.
    inner: Option<LineWriter<BufWriter<ChildStdin>>>,
    process: Arc<Process>,
    grace: Duration,
}

impl Transport for ChildTransport {
    type Reader = ChildReader;
    type Writer = ChildWriter;
    fn network_transport(&self) -> Option<&'static str> {
        Some("pipe")
    }
    fn split(self) -> (ChildReader, ChildWriter) {
        let (r, w) = self.inner.split();
        let process = Arc::new(Process {
            child: Mutex::new(self.child),
            closing: AtomicBool::new(false),
        });
        (
            ChildReader {
                inner: r,
                process: process.clone(),
            },
            ChildWriter {
                inner: Some(w),
                process,
                grace: self.grace,
            },
        )
    }
}

impl FrameReader for ChildReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        let frame = self.inner.read_frame().await?;
        if frame.is_some() || self.process.closing.load(Ordering::Acquire) {
            return Ok(frame);
        }
        // Stdout ended without our asking: when the server died (killed, crashed, exited with
        // a failure code), say so with its status rather than a bare end of input.
        match self.process.wait_for_exit(EXIT_STATUS_WAIT).await {
            Some(status) if !status.success() && !self.process.closing.load(Ordering::Acquire) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the server process exited ({status})"),
            )),
            _ => Ok(None),
        }
    }
}

impl FrameWriter for ChildWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        match self.inner.as_mut() {
            Some(w) => w.write_frame(frame).await,
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "the child's stdin is closed")),
        }
    }
    async fn flush(&mut self) -> io::Result<()> {
        match self.inner.as_mut() {
            Some(w) => w.flush().await,
            None => Ok(()),
        }
    }
    async fn close(&mut self) -> io::Result<()> {
        // Closing stdin is the polite request to exit: flush, then drop the pipe (shutting a
        // pipe down does not close it). Failures here just mean the child is gone.
        self.process.closing.store(true, Ordering::Release);
        if let Some(mut w) = self.inner.take() {
            let _ = w.flush().await;
        }
        if self.process.wait_for_exit(self.grace).await.is_some() {
            return Ok(());
        }
        if terminate(&self.process, self.grace).await {
            return Ok(());
        }
        lock(&self.process.child).start_kill()?;
        self.process.wait_for_exit(self.grace).await;
        Ok(())
    }
}

/// Sends SIGTERM and gives the child `grace` to exit; true when it did.
#[cfg(unix)]
async fn terminate(process: &Process, grace: Duration) -> bool {
    let pid = lock(&process.child).id().and_then(|p| i32::try_from(p).ok());
    let Some(pid) = pid else {
        return false;
    };
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
    process.wait_for_exit(grace).await.is_some()
}

/// Elsewhere (Windows) there is no termination signal a child can catch: after its stdin
/// closed, the next step is [`Child::kill`].
#[cfg(not(unix))]
async fn terminate(_process: &Process, _grace: Duration) -> bool {
    false
}
