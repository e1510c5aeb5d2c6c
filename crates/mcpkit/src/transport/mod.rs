//! Transports: a source of incoming frames and a sink for outgoing ones.
//!
//! The rule: a transport moves whole frames (one JSON text each), unchanged, and never hands
//! the engine a typed message: the engine parses every frame itself, so a malformed one still
//! gets an error reply carrying the request's id. A transport whose wire depends on what a
//! frame is may read the frame's envelope, and only that: the HTTP client classifies each
//! outgoing frame (request or notification, method, id, the stateless-era `_meta`) to choose its
//! headers and the stream its reply comes on, and notes the replies it waits for (the
//! negotiated version, the tools whose parameters become headers). It reads envelopes with
//! `mcpkit_types::jsonrpc` alone: nothing in `transport` imports the engine, `server`, `client`
//! or `auth`.
//!
//! - [`stdio`]: newline-delimited JSON over any reader/writer, the process's stdin/stdout.
//! - [`child`]: spawn a server process and talk to it over its stdin/stdout.
//! - [`memory`]: a connected in-memory pair, for tests.
//! - [`channel`]: the reader of transports fed by other tasks (the HTTP endpoints and client).
//! - `http_client` (feature `http-client`): Streamable HTTP as a client, falling back to the
//!   legacy HTTP+SSE transport.
//! - [`inspect`](mod@inspect): a wrapper that shows every frame to a callback (wire tracing, recording).
//!
//! [`BoxTransport`] (from [`Transport::boxed`]) erases a transport's type, for code that picks
//! one of several kinds at run time.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use mcpkit_types::RequestId;

mod caller;
#[cfg(any(feature = "http-server", feature = "http-client"))]
pub(crate) mod channel;
pub mod child;
mod discarded;
#[cfg(fuzzing)]
pub use discarded::oversized_reply_id_for_fuzzing;
#[cfg(feature = "http-client")]
pub mod http_client;
pub mod inspect;
pub mod memory;
pub mod stdio;

pub use caller::{AuthInfo, ScopeRefusal, VerifiedCaller};

/// One unit read from a transport.
#[derive(Debug)]
pub enum Frame {
    /// One JSON text.
    Message(Vec<u8>),
    /// A frame longer than the configured limit was discarded; the reader goes on. (A stream
    /// transport gives a discarded answer to one of our requests whose id it could read as an
    /// error answer to that request instead, a [`Frame::Message`].)
    Oversized(usize),
}

/// The incoming half of a transport.
pub trait FrameReader: Send + 'static {
    /// The next frame; `Ok(None)` at a clean end of stream.
    fn read_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send;
    /// What the transport knows about the message [`FrameReader::read_frame`] returned last,
    /// beyond its bytes (for example, the verified identity of an HTTP caller). The engine calls
    /// it once after each message; the default knows nothing.
    fn take_extensions(&mut self) -> Extensions {
        Extensions::default()
    }
}

/// Typed values a transport attaches to one incoming message, one per type, for the handler
/// that serves it (`RequestContext::extensions`). Cheap to clone. The HTTP server puts the
/// caller's verified [`AuthInfo`] here (feature `auth`), never the bearer token.
#[derive(Clone, Default)]
pub struct Extensions(Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>);

impl Extensions {
    /// No values.
    pub fn new() -> Extensions {
        Extensions::default()
    }

    /// Attach `value`, replacing a value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        let map = self.0.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one was attached.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.0.as_ref()?.get(&TypeId::of::<T>())?.downcast_ref::<T>()
    }

    /// Whether no value is attached.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|m| m.is_empty())
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("values", &self.0.as_ref().map_or(0, |m| m.len()))
            .finish()
    }
}

/// Where an outgoing frame belongs. Stream transports ignore it; HTTP uses it to put a reply,
/// and everything sent while serving a request, on that request's response stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The response to this incoming request.
    Reply(RequestId),
    /// A notification or request sent while serving this incoming request.
    Related(RequestId),
    /// Not tied to any request.
    Standalone,
}

/// The outgoing half of a transport.
pub trait FrameWriter: Send + 'static {
    /// Queue one complete JSON text.
    fn write_frame(&mut self, frame: &[u8]) -> impl Future<Output = io::Result<()>> + Send;
    /// Queue one frame knowing where it belongs (default: ignore the route).
    fn write_routed(&mut self, frame: &[u8], route: &Route) -> impl Future<Output = io::Result<()>> + Send {
        let _ = route;
        self.write_frame(frame)
    }
    /// Push queued frames out (called when the outgoing queue runs empty).
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// Close the sink (the peer sees end of stream).
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// A bidirectional transport, split into its halves when a connection starts.
pub trait Transport: Send + 'static {
    /// The incoming half.
    type Reader: FrameReader;
    /// The outgoing half.
    type Writer: FrameWriter;
    /// Split into reader and writer.
    fn split(self) -> (Self::Reader, Self::Writer);
    /// What carries the bytes, for telemetry's `network.transport`: `"pipe"` (stdio, a child
    /// process), `"tcp"` (HTTP), or `None` when the transport does not say (the default).
    fn network_transport(&self) -> Option<&'static str> {
        None
    }
    /// This transport behind a [`BoxTransport`], so that transports of different types can be
    /// chosen at run time and passed on as one type.
    fn boxed(self) -> BoxTransport
    where
        Self: Sized,
    {
        BoxTransport::new(self)
    }
}

/// A boxed future, as the type-erased halves return them.
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Any [`Transport`], type-erased (see [`Transport::boxed`]). Each frame read or written costs
/// one small allocation for its future.
pub struct BoxTransport(Box<dyn ErasedTransport>);

impl BoxTransport {
    /// Erase the type of `transport`.
    pub fn new<T: Transport>(transport: T) -> BoxTransport {
        BoxTransport(Box::new(transport))
    }

    /// The transport inside, to look up what only its own type knows (the HTTP client's
    /// session id, for telemetry).
    #[cfg_attr(
        not(feature = "http-client"),
        allow(dead_code, reason = "read by the client's telemetry")
    )]
    pub(crate) fn as_any(&self) -> &dyn Any {
        self.0.as_any()
    }
}

impl std::fmt::Debug for BoxTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxTransport")
    }
}

impl Transport for BoxTransport {
    type Reader = BoxReader;
    type Writer = BoxWriter;
    fn split(self) -> (BoxReader, BoxWriter) {
        self.0.split_boxed()
    }
    fn boxed(self) -> BoxTransport {
        self
    }
    fn network_transport(&self) -> Option<&'static str> {
        self.0.network_transport_erased()
    }
}

/// The reading half of a [`BoxTransport`].
pub struct BoxReader(Box<dyn ErasedReader>);

/// The writing half of a [`BoxTransport`].
pub struct BoxWriter(Box<dyn ErasedWriter>);

impl std::fmt::Debug for BoxReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxReader")
    }
}

impl std::fmt::Debug for BoxWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxWriter")
    }
}

impl FrameReader for BoxReader {
    fn read_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send {
        self.0.read_frame_boxed()
    }
    fn take_extensions(&mut self) -> Extensions {
        self.0.take_extensions_erased()
    }
}

impl FrameWriter for BoxWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        self.0.write_frame_boxed(frame).await
    }
    async fn write_routed(&mut self, frame: &[u8], route: &Route) -> io::Result<()> {
        self.0.write_routed_boxed(frame, route).await
    }
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.0.flush_boxed()
    }
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.0.close_boxed()
    }
}

// The object-safe forms of the three traits (their `impl Future` methods are not), implemented
// for every transport and half.

trait ErasedTransport: Send + 'static {
    fn split_boxed(self: Box<Self>) -> (BoxReader, BoxWriter);
    fn network_transport_erased(&self) -> Option<&'static str>;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Transport> ErasedTransport for T {
    fn split_boxed(self: Box<Self>) -> (BoxReader, BoxWriter) {
        let (r, w) = (*self).split();
        (BoxReader(Box::new(r)), BoxWriter(Box::new(w)))
    }
    fn network_transport_erased(&self) -> Option<&'static str> {
        self.network_transport()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

trait ErasedReader: Send + 'static {
    fn read_frame_boxed(&mut self) -> BoxFuture<'_, io::Result<Option<Frame>>>;
    fn take_extensions_erased(&mut self) -> Extensions;
}

impl<R: FrameReader> ErasedReader for R {
    fn read_frame_boxed(&mut self) -> BoxFuture<'_, io::Result<Option<Frame>>> {
        Box::pin(self.read_frame())
    }
    fn take_extensions_erased(&mut self) -> Extensions {
        self.take_extensions()
    }
}

trait ErasedWriter: Send + 'static {
    fn write_frame_boxed<'a>(&'a mut self, frame: &'a [u8]) -> BoxFuture<'a, io::Result<()>>;
    fn write_routed_boxed<'a>(&'a mut self, frame: &'a [u8], route: &'a Route) -> BoxFuture<'a, io::Result<()>>;
    fn flush_boxed(&mut self) -> BoxFuture<'_, io::Result<()>>;
    fn close_boxed(&mut self) -> BoxFuture<'_, io::Result<()>>;
}

impl<W: FrameWriter> ErasedWriter for W {
    fn write_frame_boxed<'a>(&'a mut self, frame: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.write_frame(frame))
    }
    fn write_routed_boxed<'a>(&'a mut self, frame: &'a [u8], route: &'a Route) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.write_routed(frame, route))
    }
    fn flush_boxed(&mut self) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(self.flush())
    }
    fn close_boxed(&mut self) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(self.close())
    }
}

/// The default cap on one incoming frame: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::{memory, Extensions, Frame, FrameReader, FrameWriter, Transport};

    #[test]
    fn extensions_hold_one_value_per_type_and_clones_are_independent() {
        let mut e = Extensions::new();
        assert!(e.is_empty());
        assert_eq!(e.get::<String>(), None);
        e.insert(String::from("first"));
        e.insert(7u32);
        let before = e.clone();
        e.insert(String::from("second"));
        assert_eq!(e.get::<String>().map(String::as_str), Some("second"));
        assert_eq!(e.get::<u32>(), Some(&7));
        assert_eq!(e.get::<u64>(), None, "looked up by exact type");
        assert_eq!(before.get::<String>().map(String::as_str), Some("first"));
        assert!(!before.is_empty());
    }

    #[tokio::test]
    async fn a_boxed_transport_carries_frames_both_ways() {
        let (a, b) = memory::pair();
        let (mut ar, mut aw) = a.boxed().split();
        let (mut br, mut bw) = b.boxed().boxed().split();
        aw.write_frame(br#"{"a":1}"#).await.unwrap();
        aw.flush().await.unwrap();
        assert!(matches!(br.read_frame().await, Ok(Some(Frame::Message(m))) if m == br#"{"a":1}"#));
        bw.write_frame(b"{}").await.unwrap();
        bw.close().await.unwrap();
        assert!(matches!(ar.read_frame().await, Ok(Some(Frame::Message(m))) if m == b"{}"));
        assert!(matches!(ar.read_frame().await, Ok(None)));
        assert!(ar.take_extensions().is_empty());
    }
}
