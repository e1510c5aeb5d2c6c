//! Transports: a source of incoming frames and a sink for outgoing ones.
//!
//! A transport moves bytes, never typed messages: the engine parses each frame itself so that a
//! malformed frame still yields an error reply carrying the request's id.
//!
//! - [`stdio`]: newline-delimited JSON over any reader/writer, the process's stdin/stdout.
//! - [`child`]: spawn a server process and talk to it over its stdin/stdout.
//! - [`memory`]: a connected in-memory pair, for tests.
//! - [`http`]: the Streamable HTTP client (falling back to the legacy HTTP+SSE transport).
//! - [`tap`]: a wrapper that records every frame.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::Arc;

use mcpkit_types::RequestId;

pub mod child;
pub mod http;
pub mod memory;
pub mod stdio;
pub mod tap;

/// One unit read from a transport.
#[derive(Debug)]
pub enum Frame {
    /// One JSON text.
    Message(Vec<u8>),
    /// A frame longer than the configured limit was discarded; the reader goes on.
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
/// caller's verified `auth::resource::AuthInfo` here (feature `auth`), never the bearer token.
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
    /// Not a frame: end the response stream of this request now (the client may resume it,
    /// e.g. with `Last-Event-ID` on HTTP). The frame is empty; stream transports ignore it.
    CloseStream(RequestId),
    /// Not a frame: this incoming request ended without a reply (it was cancelled), so its
    /// stream can be released. Stream transports ignore it.
    Finished(RequestId),
}

/// The outgoing half of a transport.
pub trait FrameWriter: Send + 'static {
    /// Queue one complete JSON text.
    fn write_frame(&mut self, frame: &[u8]) -> impl Future<Output = io::Result<()>> + Send;
    /// Queue one frame knowing where it belongs (default: ignore the route).
    fn write_routed(&mut self, frame: &[u8], route: &Route) -> impl Future<Output = io::Result<()>> + Send {
        async move {
            match route {
                Route::CloseStream(_) | Route::Finished(_) => Ok(()),
                _ => self.write_frame(frame).await,
            }
        }
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
}

/// The default cap on one incoming frame: 16 MiB.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::Extensions;

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
}
