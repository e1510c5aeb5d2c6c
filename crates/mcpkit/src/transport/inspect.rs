//! A transport wrapper that shows every frame to a callback as it passes, unchanged: for wire
//! tracing (`mcpkit --trace-wire`) and for tests that record the traffic
//! ([`crate::testing::TestPair`]).
//!
//! ```
//! use mcpkit::transport::inspect::{inspect, Direction, Observed};
//! use mcpkit::transport::memory;
//!
//! let (a, _b) = memory::pair();
//! let traced = inspect(a, |direction, frame| {
//!     if let Observed::Message(bytes) = frame {
//!         let arrow = if direction == Direction::Outgoing { "->" } else { "<-" };
//!         eprintln!("{arrow} {}", String::from_utf8_lossy(bytes));
//!     }
//! });
//! # drop(traced);
//! ```

use std::fmt;
use std::io;
use std::sync::Arc;

use super::{Extensions, Frame, FrameReader, FrameWriter, Route, Transport};

/// Which way an observed frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read from the peer.
    Incoming,
    /// Written to the peer.
    Outgoing,
}

/// What the callback of [`inspect`] is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observed<'a> {
    /// One JSON text, read or written.
    Message(&'a [u8]),
    /// An incoming frame of this many bytes, over the reader's limit, was discarded.
    Oversized(usize),
}

/// Wrap `transport` so that `observe` sees every frame read and written (in each direction, in
/// order; the reader and writer halves call it from their own tasks). Everything else passes
/// through untouched: routes, flushes, and the [`Extensions`] of each incoming message.
pub fn inspect<T, F>(transport: T, observe: F) -> Inspect<T, F>
where
    T: Transport,
    F: Fn(Direction, Observed<'_>) + Send + Sync + 'static,
{
    Inspect {
        inner: transport,
        observe: Arc::new(observe),
    }
}

/// A transport wrapped by [`inspect`].
pub struct Inspect<T, F> {
    inner: T,
    observe: Arc<F>,
}

/// Reading half of an [`Inspect`].
pub struct InspectReader<R, F> {
    inner: R,
    observe: Arc<F>,
}

/// Writing half of an [`Inspect`].
pub struct InspectWriter<W, F> {
    inner: W,
    observe: Arc<F>,
}

impl<T: fmt::Debug, F> fmt::Debug for Inspect<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inspect")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<R: fmt::Debug, F> fmt::Debug for InspectReader<R, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InspectReader")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<W: fmt::Debug, F> fmt::Debug for InspectWriter<W, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InspectWriter")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<T, F> Transport for Inspect<T, F>
where
    T: Transport,
    F: Fn(Direction, Observed<'_>) + Send + Sync + 'static,
{
    type Reader = InspectReader<T::Reader, F>;
    type Writer = InspectWriter<T::Writer, F>;
    fn network_transport(&self) -> Option<&'static str> {
        self.inner.network_transport()
    }
    fn split(self) -> (Self::Reader, Self::Writer) {
        let (r, w) = self.inner.split();
        (
            InspectReader {
                inner: r,
                observe: self.observe.clone(),
            },
            InspectWriter {
                inner: w,
                observe: self.observe,
            },
        )
    }
}

impl<R, F> FrameReader for InspectReader<R, F>
where
    R: FrameReader,
    F: Fn(Direction, Observed<'_>) + Send + Sync + 'static,
{
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        let frame = self.inner.read_frame().await?;
        match &frame {
            Some(Frame::Message(m)) => (self.observe)(Direction::Incoming, Observed::Message(m)),
            Some(Frame::Oversized(n)) => (self.observe)(Direction::Incoming, Observed::Oversized(*n)),
            None => {}
        }
        Ok(frame)
    }
    fn take_extensions(&mut self) -> Extensions {
        self.inner.take_extensions()
    }
}

impl<W, F> FrameWriter for InspectWriter<W, F>
where
    W: FrameWriter,
    F: Fn(Direction, Observed<'_>) + Send + Sync + 'static,
{
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        (self.observe)(Direction::Outgoing, Observed::Message(frame));
        self.inner.write_frame(frame).await
    }
    async fn write_routed(&mut self, frame: &[u8], route: &Route) -> io::Result<()> {
        (self.observe)(Direction::Outgoing, Observed::Message(frame));
        self.inner.write_routed(frame, route).await
    }
    async fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().await
    }
    async fn close(&mut self) -> io::Result<()> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A reader that yields one message carrying one extension, then ends.
    struct OneMessage(Option<Vec<u8>>);

    impl FrameReader for OneMessage {
        async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
            Ok(self.0.take().map(Frame::Message))
        }
        fn take_extensions(&mut self) -> Extensions {
            let mut e = Extensions::new();
            e.insert(7u32);
            e
        }
    }

    #[tokio::test]
    async fn frames_are_observed_and_extensions_pass_through() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let observe = move |d: Direction, o: Observed<'_>| {
            if let Observed::Message(m) = o {
                crate::sync::lock(&log).push((d, m.to_vec()));
            }
        };
        let mut reader = InspectReader {
            inner: OneMessage(Some(b"{}".to_vec())),
            observe: Arc::new(observe),
        };
        assert!(matches!(reader.read_frame().await, Ok(Some(Frame::Message(_)))));
        assert_eq!(reader.take_extensions().get::<u32>(), Some(&7));
        assert!(matches!(reader.read_frame().await, Ok(None)));
        assert_eq!(*crate::sync::lock(&seen), vec![(Direction::Incoming, b"{}".to_vec())]);
    }
}
