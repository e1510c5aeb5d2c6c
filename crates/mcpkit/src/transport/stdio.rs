//! Newline-delimited JSON (spec: `basic/transports` "stdio"): each message is one line of UTF-8
//! JSON with no embedded newline.

use std::io;
#[cfg(unix)]
use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use super::discarded::{self, Ends};
use super::{Frame, FrameReader, FrameWriter, Transport, DEFAULT_MAX_FRAME};

/// A newline-delimited transport over any reader and writer.
#[derive(Debug)]
pub struct LineTransport<R, W> {
    reader: R,
    writer: W,
    max_frame: usize,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Wrap a reader and a writer (both get buffered).
    pub fn new(reader: R, writer: W) -> LineTransport<BufReader<R>, BufWriter<W>> {
        LineTransport {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer: BufWriter::with_capacity(64 * 1024, writer),
            max_frame: DEFAULT_MAX_FRAME,
        }
    }
}

impl<R, W> LineTransport<R, W> {
    /// Set the longest accepted line in bytes; longer lines are skipped and reported.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }
}

/// The process's own stdin and stdout, for a server launched by a host.
///
/// When a standard stream is a pipe or a socket (the usual case: a host spawned the server) and
/// this is called inside a tokio runtime with I/O enabled, it is put in non-blocking mode and
/// driven by the runtime's reactor directly: no hand-off to the blocking thread pool per read
/// and per write. A terminal, a regular file or a stream shared with stderr keeps tokio's
/// blocking `stdin()`/`stdout()`. The original flags are restored when the halves are dropped.
/// Elsewhere than unix (Windows), both are always tokio's `stdin()`/`stdout()`.
pub fn stdio() -> LineTransport<BufReader<StdinReader>, BufWriter<StdoutWriter>> {
    LineTransport::new(StdinReader::open(), StdoutWriter::open())
}

/// The process's stdin, as [`stdio`] reads it.
#[derive(Debug)]
pub struct StdinReader(StdinKind);

#[derive(Debug)]
enum StdinKind {
    #[cfg(unix)]
    /// The restore guard is held for its `Drop`.
    Pipe(tokio::net::unix::pipe::Receiver, #[allow(dead_code)] Restore),
    Blocking(tokio::io::Stdin),
}

/// The process's stdout, as [`stdio`] writes it.
#[derive(Debug)]
pub struct StdoutWriter(StdoutKind);

#[derive(Debug)]
enum StdoutKind {
    #[cfg(unix)]
    /// The restore guard is held for its `Drop`.
    Pipe(tokio::net::unix::pipe::Sender, #[allow(dead_code)] Restore),
    Blocking(tokio::io::Stdout),
}

impl StdinReader {
    /// Open the process's stdin (non-blocking when it is a pipe or socket, see [`stdio`]).
    pub fn open() -> Self {
        #[cfg(unix)]
        if let Some((nonblocking::Opened::Read(rx), restore)) =
            nonblocking::open(std::io::stdin().as_fd(), nonblocking::Dir::Read)
        {
            return StdinReader(StdinKind::Pipe(rx, restore));
        }
        StdinReader(StdinKind::Blocking(tokio::io::stdin()))
    }

    /// Whether reads go through the runtime's reactor (not the blocking thread pool).
    pub fn is_nonblocking(&self) -> bool {
        match self.0 {
            #[cfg(unix)]
            StdinKind::Pipe(..) => true,
            StdinKind::Blocking(_) => false,
        }
    }
}

impl StdoutWriter {
    /// Open the process's stdout (non-blocking when it is a pipe or socket, see [`stdio`]).
    pub fn open() -> Self {
        #[cfg(unix)]
        if let Some((nonblocking::Opened::Write(tx), restore)) =
            nonblocking::open(std::io::stdout().as_fd(), nonblocking::Dir::Write)
        {
            return StdoutWriter(StdoutKind::Pipe(tx, restore));
        }
        StdoutWriter(StdoutKind::Blocking(tokio::io::stdout()))
    }

    /// Whether writes go through the runtime's reactor (not the blocking thread pool).
    pub fn is_nonblocking(&self) -> bool {
        match self.0 {
            #[cfg(unix)]
            StdoutKind::Pipe(..) => true,
            StdoutKind::Blocking(_) => false,
        }
    }
}

impl AsyncRead for StdinReader {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdinKind::Pipe(rx, _) => Pin::new(rx).poll_read(cx, buf),
            StdinKind::Blocking(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for StdoutWriter {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(tx, _) => Pin::new(tx).poll_write(cx, buf),
            StdoutKind::Blocking(s) => Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(tx, _) => Pin::new(tx).poll_write_vectored(cx, bufs),
            StdoutKind::Blocking(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            #[cfg(unix)]
            StdoutKind::Pipe(tx, _) => tx.is_write_vectored(),
            StdoutKind::Blocking(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(tx, _) => Pin::new(tx).poll_flush(cx),
            StdoutKind::Blocking(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            StdoutKind::Pipe(tx, _) => Pin::new(tx).poll_shutdown(cx),
            StdoutKind::Blocking(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// Driving a standard stream that is a pipe or socket through the reactor.
#[cfg(unix)]
mod nonblocking {
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    use nix::sys::stat::{fstat, FileStat, SFlag};
    use tokio::net::unix::pipe;

    pub(super) enum Dir {
        Read,
        Write,
    }

    pub(super) enum Opened {
        Read(pipe::Receiver),
        Write(pipe::Sender),
    }

    /// Puts a stream's original file status flags back when its half is dropped (the open file
    /// description may be shared with the process that started us).
    #[derive(Debug)]
    pub(super) struct Restore {
        fd: OwnedFd,
        flags: Option<OFlag>,
    }

    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(flags) = self.flags {
                let _ = fcntl(&self.fd, FcntlArg::F_SETFL(flags));
            }
        }
    }

    fn kind(st: &FileStat) -> SFlag {
        SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
    }

    fn same_file(a: &FileStat, b: &FileStat) -> bool {
        a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// The stream as a reactor-driven pipe end, or `None` to keep the blocking path: not a pipe
    /// or socket, shared with stderr (whose writes must stay blocking), no runtime with I/O.
    pub(super) fn open(fd: BorrowedFd<'_>, dir: Dir) -> Option<(Opened, Restore)> {
        let st = fstat(fd).ok()?;
        let k = kind(&st);
        if k != SFlag::S_IFIFO && k != SFlag::S_IFSOCK {
            return None;
        }
        // The same pipe as stderr: O_NONBLOCK would be shared with it, and a log line could
        // then fail with EAGAIN. Keep the blocking path.
        if let Ok(err) = fstat(std::io::stderr().as_fd()) {
            if same_file(&st, &err) {
                return None;
            }
        }
        tokio::runtime::Handle::try_current().ok()?;
        let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).ok()?);
        let access = flags & OFlag::O_ACCMODE;
        let readable = access == OFlag::O_RDONLY || access == OFlag::O_RDWR;
        let writable = access == OFlag::O_WRONLY || access == OFlag::O_RDWR;
        match dir {
            Dir::Read if !readable => return None,
            Dir::Write if !writable => return None,
            _ => {}
        }
        let keep = fd.try_clone_to_owned().ok()?;
        let owned = fd.try_clone_to_owned().ok()?;
        if !flags.contains(OFlag::O_NONBLOCK) {
            fcntl(&owned, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
        }
        let restore = Restore {
            fd: keep,
            flags: (!flags.contains(OFlag::O_NONBLOCK)).then_some(flags),
        };
        // Registering with the reactor panics in a runtime without I/O enabled; that runtime
        // gets the blocking path instead.
        let registered = std::panic::catch_unwind(move || match dir {
            Dir::Read => pipe::Receiver::from_owned_fd_unchecked(owned).map(Opened::Read),
            Dir::Write => pipe::Sender::from_owned_fd_unchecked(owned).map(Opened::Write),
        });
        match registered {
            Ok(Ok(opened)) => Some((opened, restore)),
            _ => None, // `restore` puts the flags back
        }
    }
}

#[cfg(unix)]
use nonblocking::Restore;

/// Reading half of a [`LineTransport`].
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    max_frame: usize,
    buf: Vec<u8>,
    /// The ends of the line being discarded, for the id of the request it answered.
    discarded: Ends,
}

/// Writing half of a [`LineTransport`].
#[derive(Debug)]
pub struct LineWriter<W> {
    inner: W,
}

impl<R, W> Transport for LineTransport<R, W>
where
    R: AsyncBufRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Reader = LineReader<R>;
    type Writer = LineWriter<W>;
    fn network_transport(&self) -> Option<&'static str> {
        Some("pipe")
    }
    fn split(self) -> (LineReader<R>, LineWriter<W>) {
        (
            LineReader {
                inner: self.reader,
                max_frame: self.max_frame,
                buf: Vec::new(),
                discarded: Ends::default(),
            },
            LineWriter { inner: self.writer },
        )
    }
}

impl<R: AsyncBufRead + Send + Unpin + 'static> FrameReader for LineReader<R> {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            self.buf.clear();
            let mut oversized = 0usize;
            // Read one line without ever holding more than `max_frame` bytes of it.
            let ended = loop {
                let available = self.inner.fill_buf().await?;
                if available.is_empty() {
                    break true;
                }
                let (chunk, found) = match memchr(available) {
                    Some(i) => (&available[..i], Some(i)),
                    None => (available, None),
                };
                if oversized > 0 || self.buf.len() + chunk.len() > self.max_frame {
                    if oversized == 0 {
                        self.discarded.clear();
                        self.discarded.push(&self.buf);
                    }
                    self.discarded.push(chunk);
                    oversized += self.buf.len() + chunk.len();
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
                let consumed = found.map_or(chunk.len(), |i| i + 1);
                self.inner.consume(consumed);
                if found.is_some() {
                    break false;
                }
            };
            if oversized > 0 {
                // The answer to one of our requests fails that request now, rather than leave it
                // waiting for an answer that came (see `discarded`); any other frame is dropped.
                let reply = self
                    .discarded
                    .answered()
                    .and_then(|id| discarded::error_reply(&id, oversized, self.max_frame));
                return Ok(Some(match reply {
                    Some(reply) => Frame::Message(reply),
                    None => Frame::Oversized(oversized),
                }));
            }
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                if ended {
                    return Ok(None);
                }
                continue; // blank lines between messages are tolerated
            }
            return Ok(Some(Frame::Message(std::mem::take(&mut self.buf))));
        }
    }
}

fn memchr(haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == b'\n')
}

impl<W: AsyncWrite + Send + Unpin + 'static> FrameWriter for LineWriter<W> {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        self.inner.write_all(frame).await?;
        self.inner.write_all(b"\n").await
    }
    async fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().await
    }
    async fn close(&mut self) -> io::Result<()> {
        self.inner.flush().await?;
        self.inner.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn frames(input: &'static [u8], max: usize) -> Vec<Frame> {
        let t = LineTransport::new(input, tokio::io::sink()).max_frame(max);
        let (mut r, _w) = t.split();
        let mut out = Vec::new();
        while let Some(f) = r.read_frame().await.unwrap() {
            out.push(f);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_skips_blank_and_oversized() {
        let input = b"{\"a\":1}\r\n\n{\"b\":2}\n0123456789012345\n{\"c\":3}";
        let f = frames(input, 12).await;
        assert_eq!(f.len(), 4);
        assert!(matches!(&f[0], Frame::Message(m) if m == b"{\"a\":1}"));
        assert!(matches!(&f[1], Frame::Message(m) if m == b"{\"b\":2}"));
        assert!(matches!(&f[2], Frame::Oversized(16)));
        assert!(matches!(&f[3], Frame::Message(m) if m == b"{\"c\":3}"));
    }

    #[tokio::test]
    async fn an_oversized_answer_fails_its_request() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"text\":\"0123456789\"}}\n{\"c\":3}\n";
        let f = frames(input, 20).await;
        assert_eq!(f.len(), 2);
        let Frame::Message(reply) = &f[0] else {
            panic!("not an error answer: {:?}", f[0]);
        };
        assert_eq!(
            String::from_utf8_lossy(reply),
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"the response (55 bytes) exceeds the 20-byte message limit"}}"#
        );
        assert!(matches!(&f[1], Frame::Message(m) if m == b"{\"c\":3}"));
    }
}
