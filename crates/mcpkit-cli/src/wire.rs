//! `--trace-wire`: a transport wrapper that prints every JSON-RPC message, in and out, to stderr
//! with a UTC timestamp.
//!
//! ```text
//! 21:30:01.123 -> server {"jsonrpc":"2.0","id":1,"method":"initialize",…}
//! 21:30:01.130 <- server {"jsonrpc":"2.0","id":1,"result":{…}}
//! ```

use std::io::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use mcpkit::transport::{Frame, FrameReader, FrameWriter, Route, Transport};

/// A transport that prints its traffic to stderr; `peer` names the other side in each line.
#[derive(Debug)]
pub struct Traced<T> {
    inner: T,
    peer: &'static str,
}

impl<T> Traced<T> {
    /// Wrap `inner`.
    pub fn new(inner: T, peer: &'static str) -> Self {
        Traced { inner, peer }
    }
}

/// Reading half of [`Traced`].
#[derive(Debug)]
pub struct TracedReader<R> {
    inner: R,
    peer: &'static str,
}

/// Writing half of [`Traced`].
#[derive(Debug)]
pub struct TracedWriter<W> {
    inner: W,
    peer: &'static str,
}

/// `HH:MM:SS.mmm` in UTC.
pub fn timestamp() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        now.subsec_millis()
    )
}

/// Print one traced frame: `arrow` is `->` (sent) or `<-` (received).
pub fn print_frame(arrow: &str, peer: &str, frame: &[u8]) {
    let text = String::from_utf8_lossy(frame);
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{} {arrow} {peer} {}", timestamp(), text.trim_end());
}

impl<T: Transport> Transport for Traced<T> {
    type Reader = TracedReader<T::Reader>;
    type Writer = TracedWriter<T::Writer>;
    fn split(self) -> (Self::Reader, Self::Writer) {
        let (r, w) = self.inner.split();
        (
            TracedReader {
                inner: r,
                peer: self.peer,
            },
            TracedWriter {
                inner: w,
                peer: self.peer,
            },
        )
    }
}

impl<R: FrameReader> FrameReader for TracedReader<R> {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        let f = self.inner.read_frame().await?;
        match &f {
            Some(Frame::Message(m)) => print_frame("<-", self.peer, m),
            Some(Frame::Oversized(n)) => print_frame(
                "<-",
                self.peer,
                format!("(a frame of {n} bytes, over the limit, dropped)").as_bytes(),
            ),
            None => {}
        }
        Ok(f)
    }
}

impl<W: FrameWriter> FrameWriter for TracedWriter<W> {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        print_frame("->", self.peer, frame);
        self.inner.write_frame(frame).await
    }
    async fn write_routed(&mut self, frame: &[u8], route: &Route) -> io::Result<()> {
        if !matches!(route, Route::CloseStream(_) | Route::Finished(_)) {
            print_frame("->", self.peer, frame);
        }
        self.inner.write_routed(frame, route).await
    }
    async fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().await
    }
    async fn close(&mut self) -> io::Result<()> {
        self.inner.close().await
    }
}
