//! Newline-delimited JSON (spec: `basic/transports` "stdio"): each message is one line of UTF-8
//! JSON with no embedded newline.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

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
pub fn stdio() -> LineTransport<BufReader<tokio::io::Stdin>, BufWriter<tokio::io::Stdout>> {
    LineTransport::new(tokio::io::stdin(), tokio::io::stdout())
}

/// Reading half of a [`LineTransport`].
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    max_frame: usize,
    buf: Vec<u8>,
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
    fn split(self) -> (LineReader<R>, LineWriter<W>) {
        (
            LineReader {
                inner: self.reader,
                max_frame: self.max_frame,
                buf: Vec::new(),
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
                return Ok(Some(Frame::Oversized(oversized)));
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
}
