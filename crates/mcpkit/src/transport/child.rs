//! The client side of stdio: spawn a server process and speak newline-delimited JSON over its
//! stdin/stdout. Closing the transport shuts the child down as the spec asks: close its stdin,
//! wait, then SIGTERM, wait, then SIGKILL (on Windows, which has no SIGTERM: close its stdin,
//! wait, then kill).

use std::ffi::OsStr;
use std::io;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::stdio::{LineReader, LineTransport, LineWriter};
use super::{Frame, FrameReader, FrameWriter, Transport};

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
        cmd.stderr(match stderr {
            Stderr::Inherit => Stdio::inherit(),
            Stderr::Trace => Stdio::piped(),
            Stderr::Null => Stdio::null(),
        });
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

/// Reading half: the child's stdout.
#[derive(Debug)]
pub struct ChildReader(LineReader<BufReader<ChildStdout>>);

/// Writing half: the child's stdin; closing it shuts the child down.
#[derive(Debug)]
pub struct ChildWriter {
    /// `None` once closed: dropping the pipe is what closes the child's stdin.
    inner: Option<LineWriter<BufWriter<ChildStdin>>>,
    child: Child,
    grace: Duration,
}

impl Transport for ChildTransport {
    type Reader = ChildReader;
    type Writer = ChildWriter;
    fn split(self) -> (ChildReader, ChildWriter) {
        let (r, w) = self.inner.split();
        (
            ChildReader(r),
            ChildWriter {
                inner: Some(w),
                child: self.child,
                grace: self.grace,
            },
        )
    }
}

impl FrameReader for ChildReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        self.0.read_frame().await
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
        if let Some(mut w) = self.inner.take() {
            let _ = w.flush().await;
        }
        if tokio::time::timeout(self.grace, self.child.wait()).await.is_ok() {
            return Ok(());
        }
        if terminate(&mut self.child, self.grace).await {
            return Ok(());
        }
        self.child.kill().await
    }
}

/// Sends SIGTERM and gives the child `grace` to exit; true when it did.
#[cfg(unix)]
async fn terminate(child: &mut Child, grace: Duration) -> bool {
    let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) else {
        return false;
    };
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
    tokio::time::timeout(grace, child.wait()).await.is_ok()
}

/// Elsewhere (Windows) there is no termination signal a child can catch: after its stdin
/// closed, the next step is [`Child::kill`].
#[cfg(not(unix))]
async fn terminate(_child: &mut Child, _grace: Duration) -> bool {
    false
}
