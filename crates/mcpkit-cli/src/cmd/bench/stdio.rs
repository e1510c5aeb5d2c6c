//! The stdio load: the bench and the client share one server process. The client talks to it
//! through [`PipeTransport`] (the handshake, `tools/list`, and anything the server asks during
//! the load); the bench's own calls are written by the same writer task, in batches, and their
//! replies are picked out of the server's output by the reader task with a borrowed parse.
//!
//! Pipelining: a phase keeps `concurrency` calls in flight; each reply read frees its slot,
//! and all the calls that refill the slots freed by one read go out as one write.

use std::io;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Transport, DEFAULT_MAX_FRAME};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};

use super::reply::{bench_id, classify, Message, Template, ID_BASE};
use super::{new_histogram, Phase, PhaseResult};
use crate::target::Failure;

/// How much is read from the server's stdout at once.
const READ_CHUNK: usize = 64 * 1024;
/// How long closing waits for the server to exit after its stdin closed, and again after SIGTERM
/// (unix).
const GRACE: Duration = Duration::from_secs(2);

/// What the writer task writes.
enum Out {
    /// One of the client's frames (a newline is added).
    Frame(Vec<u8>),
    /// The bench's calls, newline-terminated already.
    Batch(Vec<u8>),
    /// Write what is queued, close the server's stdin, say so.
    Close(oneshot::Sender<()>),
}

/// One pipelined phase, handed to the reader task.
struct Job {
    phase: Arc<Phase>,
    template: Arc<Template>,
    concurrency: usize,
    timeout: Duration,
    done: oneshot::Sender<Result<PhaseResult, Failure>>,
}

/// The client's side of the shared server process.
pub(super) struct PipeTransport {
    from_server: mpsc::UnboundedReceiver<io::Result<Option<Frame>>>,
    writer: PipeWriter,
}

/// The client's reading half: the server's messages that are not replies to the bench.
pub(super) struct PipeReader(mpsc::UnboundedReceiver<io::Result<Option<Frame>>>);

/// The client's writing half; closing it shuts the server down (close stdin, wait, SIGTERM,
/// wait, SIGKILL).
pub(super) struct PipeWriter {
    out: mpsc::UnboundedSender<Out>,
    child: Child,
}

impl Transport for PipeTransport {
    type Reader = PipeReader;
    type Writer = PipeWriter;
    fn split(self) -> (PipeReader, PipeWriter) {
        (PipeReader(self.from_server), self.writer)
    }
}

impl FrameReader for PipeReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        match self.0.recv().await {
            Some(r) => r,
            None => Ok(None),
        }
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the server's stdin is closed")
}

impl FrameWriter for PipeWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        self.out.send(Out::Frame(frame.to_vec())).map_err(|_| closed())
    }
    async fn flush(&mut self) -> io::Result<()> {
        // The writer task writes whenever it has something.
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        if self.out.send(Out::Close(tx)).is_ok() {
            let _ = rx.await;
        }
        if tokio::time::timeout(GRACE, self.child.wait()).await.is_ok() {
            return Ok(());
        }
        if terminate(&mut self.child).await {
            return Ok(());
        }
        self.child.kill().await
    }
}

/// Sends SIGTERM and gives the server [`GRACE`] to exit; true when it did.
#[cfg(unix)]
async fn terminate(child: &mut Child) -> bool {
    let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) else {
        return false;
    };
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
    tokio::time::timeout(GRACE, child.wait()).await.is_ok()
}

/// Elsewhere (Windows) there is no termination signal to send: the next step is the kill.
#[cfg(not(unix))]
async fn terminate(_child: &mut Child) -> bool {
    false
}

/// The bench's handle on the shared server process.
#[derive(Debug, Clone)]
pub(super) struct PipeDriver {
    jobs: mpsc::UnboundedSender<Job>,
}

/// Start the server: the client's transport and the bench's driver.
pub(super) fn spawn(mut cmd: Command) -> io::Result<(PipeTransport, PipeDriver)> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("the server's stdin was not piped"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("the server's stdout was not piped"))?;
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (client_tx, client_rx) = mpsc::unbounded_channel();
    let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
    tokio::spawn(write_loop(stdin, out_rx));
    tokio::spawn(
        Reader {
            stdout,
            to_client: client_tx,
            out: out_tx.clone(),
            jobs: jobs_rx,
            next_seq: 0,
        }
        .run(),
    );
    Ok((
        PipeTransport {
            from_server: client_rx,
            writer: PipeWriter { out: out_tx, child },
        },
        PipeDriver { jobs: jobs_tx },
    ))
}

impl PipeDriver {
    /// Run one phase: `concurrency` calls in flight until the phase says stop.
    pub(super) async fn run(
        &self,
        template: &Arc<Template>,
        concurrency: usize,
        timeout: Duration,
        phase: &Arc<Phase>,
    ) -> Result<PhaseResult, Failure> {
        let (done, result) = oneshot::channel();
        let job = Job {
            phase: phase.clone(),
            template: template.clone(),
            concurrency,
            timeout,
            done,
        };
        self.jobs
            .send(job)
            .map_err(|_| Failure::usage("the server's stdout closed"))?;
        result
            .await
            .map_err(|_| Failure::usage("the bench's stdio reader stopped"))?
    }
}

/// Write everything queued at once; stop at `Close` or when every sender is gone.
async fn write_loop(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<Out>) {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    while let Some(first) = rx.recv().await {
        let mut close = None;
        let mut next = Some(first);
        while let Some(out) = next.take() {
            match out {
                Out::Frame(f) => {
                    buf.extend_from_slice(&f);
                    buf.push(b'\n');
                }
                Out::Batch(b) if buf.is_empty() => buf = b,
                Out::Batch(b) => buf.extend_from_slice(&b),
                Out::Close(ack) => {
                    close = Some(ack);
                    break;
                }
            }
            next = rx.try_recv().ok();
        }
        if !buf.is_empty() {
            let written = stdin.write_all(&buf).await;
            buf.clear();
            if let Err(e) = written {
                tracing::debug!("writing to the server's stdin failed: {e}");
                return;
            }
        }
        if let Some(ack) = close {
            drop(stdin);
            let _ = ack.send(());
            return;
        }
    }
}

/// The phase in progress in the reader task.
struct Active {
    job: Job,
    /// Per slot, the id and start of its call in flight.
    slots: Vec<Option<(u64, Instant)>>,
    in_flight: usize,
    hist: Histogram<u64>,
    first_error: Option<String>,
}

impl Active {
    /// Start call `seq` in `slot` (its id encodes the slot).
    fn issue(&mut self, slot: usize, seq: u64, now: Instant, batch: &mut Vec<u8>) {
        let id = ID_BASE + seq * self.job.concurrency as u64 + slot as u64;
        self.job.template.write(id, batch);
        batch.push(b'\n');
        self.slots[slot] = Some((id, now));
        self.in_flight += 1;
    }

    fn error(&mut self, e: impl FnOnce() -> String) {
        self.job.phase.errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.first_error.is_none() {
            self.first_error = Some(e());
        }
    }
}

struct Reader {
    stdout: ChildStdout,
    to_client: mpsc::UnboundedSender<io::Result<Option<Frame>>>,
    out: mpsc::UnboundedSender<Out>,
    jobs: mpsc::UnboundedReceiver<Job>,
    /// Calls issued so far, over every phase (ids never repeat).
    next_seq: u64,
}

impl Reader {
    async fn run(mut self) {
        let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
        // Bytes of an oversized line being skipped.
        let mut skipping: Option<usize> = None;
        let mut active: Option<Active> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let mut jobs_open = true;
        loop {
            let read = tokio::select! {
                biased;
                r = self.stdout.read_buf(&mut buf) => r,
                job = self.jobs.recv(), if jobs_open && active.is_none() => {
                    match job {
                        Some(job) => active = self.start(job),
                        None => jobs_open = false,
                    }
                    continue;
                }
                _ = tick.tick(), if active.is_some() => {
                    self.expire(&mut active);
                    continue;
                }
            };
            let n = match read {
                Ok(n) => n,
                Err(e) => {
                    self.end(&mut active, &format!("reading the server's stdout failed: {e}"));
                    let _ = self.to_client.send(Err(e));
                    return;
                }
            };
            if n == 0 {
                self.end(&mut active, "the server closed its stdout");
                let _ = self.to_client.send(Ok(None));
                return;
            }
            let mut batch = Vec::new();
            let mut start = 0;
            let now = Instant::now();
            while let Some(i) = memchr::memchr(b'\n', &buf[start..]) {
                let line = &buf[start..start + i];
                start += i + 1;
                if let Some(n) = skipping.take() {
                    let _ = self.to_client.send(Ok(Some(Frame::Oversized(n + line.len()))));
                    continue;
                }
                self.line(line, &mut active, now, &mut batch);
            }
            buf.drain(..start);
            if buf.len() > DEFAULT_MAX_FRAME {
                *skipping.get_or_insert(0) += buf.len();
                buf.clear();
            }
            if buf.capacity() - buf.len() < READ_CHUNK / 4 {
                buf.reserve(READ_CHUNK);
            }
            if !batch.is_empty() {
                let _ = self.out.send(Out::Batch(batch));
            }
            self.finish_if_done(&mut active);
        }
    }

    /// Start a phase: fill every slot.
    fn start(&mut self, job: Job) -> Option<Active> {
        let hist = match new_histogram() {
            Ok(h) => h,
            Err(e) => {
                let _ = job.done.send(Err(e));
                return None;
            }
        };
        let mut a = Active {
            slots: vec![None; job.concurrency],
            in_flight: 0,
            hist,
            first_error: None,
            job,
        };
        let now = Instant::now();
        let mut batch = Vec::new();
        for slot in 0..a.job.concurrency {
            if !a.job.phase.take(now) {
                break;
            }
            a.issue(slot, self.next_seq, now, &mut batch);
            self.next_seq += 1;
        }
        if !batch.is_empty() {
            let _ = self.out.send(Out::Batch(batch));
        }
        let mut active = Some(a);
        self.finish_if_done(&mut active);
        active
    }

    /// One line from the server: a reply to the bench, or something for the client.
    fn line(&mut self, line: &[u8], active: &mut Option<Active>, now: Instant, batch: &mut Vec<u8>) {
        let line = match line {
            [head @ .., b'\r'] => head,
            l => l,
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if let Message::Response { id, outcome } = classify(line) {
            if let Some(id) = bench_id(id) {
                // A reply to the bench (a stale one, after its call timed out, is dropped).
                let Some(a) = active.as_mut() else { return };
                let slot = ((id - ID_BASE) % a.job.concurrency as u64) as usize;
                let Some((want, t0)) = a.slots[slot] else { return };
                if want != id {
                    return;
                }
                a.slots[slot] = None;
                a.in_flight -= 1;
                a.hist
                    .saturating_record(now.saturating_duration_since(t0).as_micros().max(1) as u64);
                a.job.phase.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if outcome.is_error() {
                    a.error(|| outcome.describe());
                }
                if a.job.phase.take(now) {
                    a.issue(slot, self.next_seq, now, batch);
                    self.next_seq += 1;
                }
                return;
            }
        }
        let _ = self.to_client.send(Ok(Some(Frame::Message(line.to_vec()))));
    }

    /// Calls older than the timeout fail (their slots are reused).
    fn expire(&mut self, active: &mut Option<Active>) {
        let Some(a) = active.as_mut() else { return };
        let now = Instant::now();
        let mut batch = Vec::new();
        for slot in 0..a.slots.len() {
            let Some((_, t0)) = a.slots[slot] else { continue };
            if now.saturating_duration_since(t0) < a.job.timeout {
                continue;
            }
            a.slots[slot] = None;
            a.in_flight -= 1;
            a.hist.saturating_record(a.job.timeout.as_micros() as u64);
            a.job.phase.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let timeout = a.job.timeout;
            a.error(|| format!("no reply within {timeout:?}"));
            if a.job.phase.take(now) {
                a.issue(slot, self.next_seq, now, &mut batch);
                self.next_seq += 1;
            }
        }
        if !batch.is_empty() {
            let _ = self.out.send(Out::Batch(batch));
        }
        self.finish_if_done(active);
    }

    /// The server is gone: the calls in flight fail, the phase ends.
    fn end(&mut self, active: &mut Option<Active>, why: &str) {
        if let Some(a) = active.as_mut() {
            a.job.phase.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let lost = a.in_flight as u64;
            a.job.phase.done.fetch_add(lost, std::sync::atomic::Ordering::Relaxed);
            for _ in 0..lost {
                a.error(|| why.to_owned());
            }
            a.in_flight = 0;
            a.slots.iter_mut().for_each(|s| *s = None);
        }
        self.finish_if_done(active);
        // Phases asked for later fail at once.
        self.jobs.close();
        while let Ok(job) = self.jobs.try_recv() {
            let _ = job.done.send(Err(Failure::usage(why.to_owned())));
        }
    }

    fn finish_if_done(&mut self, active: &mut Option<Active>) {
        if active.as_ref().is_some_and(|a| a.in_flight == 0) {
            if let Some(a) = active.take() {
                let _ = a.job.done.send(Ok((a.hist, a.first_error)));
            }
        }
    }
}
