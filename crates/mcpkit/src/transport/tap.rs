//! A transport wrapper that records every frame written and read, for tests and wire tracing.

use std::io;
use std::sync::{Arc, Mutex};

use super::{Frame, FrameReader, FrameWriter, Route, Transport};

/// Which way a recorded frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read from the peer.
    Incoming,
    /// Written to the peer.
    Outgoing,
}

/// The frames seen so far, in order.
pub type Log = Arc<Mutex<Vec<(Direction, String)>>>;

/// Wraps a transport and records its traffic into a shared [`Log`].
#[derive(Debug)]
pub struct Tap<T> {
    inner: T,
    log: Log,
}

impl<T> Tap<T> {
    /// Wrap `inner`; the returned log fills as frames pass.
    pub fn new(inner: T) -> (Self, Log) {
        let log = Log::default();
        (
            Tap {
                inner,
                log: log.clone(),
            },
            log,
        )
    }
}

/// Reading half of a [`Tap`].
#[derive(Debug)]
pub struct TapReader<R> {
    inner: R,
    log: Log,
}

/// Writing half of a [`Tap`].
#[derive(Debug)]
pub struct TapWriter<W> {
    inner: W,
    log: Log,
}

fn record(log: &Log, d: Direction, bytes: &[u8]) {
    if let Ok(mut l) = log.lock() {
        l.push((d, String::from_utf8_lossy(bytes).into_owned()));
    }
}

impl<T: Transport> Transport for Tap<T> {
    type Reader = TapReader<T::Reader>;
    type Writer = TapWriter<T::Writer>;
    fn split(self) -> (Self::Reader, Self::Writer) {
        let (r, w) = self.inner.split();
        (
            TapReader {
                inner: r,
                log: self.log.clone(),
            },
            TapWriter {
                inner: w,
                log: self.log,
            },
        )
    }
}

impl<R: FrameReader> FrameReader for TapReader<R> {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        let f = self.inner.read_frame().await?;
        if let Some(Frame::Message(m)) = &f {
            record(&self.log, Direction::Incoming, m);
        }
        Ok(f)
    }
    fn take_extensions(&mut self) -> crate::transport::Extensions {
        self.inner.take_extensions()
    }
}

impl<W: FrameWriter> FrameWriter for TapWriter<W> {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        record(&self.log, Direction::Outgoing, frame);
        self.inner.write_frame(frame).await
    }
    async fn write_routed(&mut self, frame: &[u8], route: &Route) -> io::Result<()> {
        if !matches!(route, Route::CloseStream(_) | Route::Finished(_)) {
            record(&self.log, Direction::Outgoing, frame);
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
