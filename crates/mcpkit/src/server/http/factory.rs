//! Sessions served by something other than a [`crate::server::Server`]: a gateway or proxy
//! that forwards each session's frames elsewhere ([`super::HttpServer::with_factory`]).

use crate::sync::lock;
use std::io;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use super::inspector::Inspector;
use super::streams::{end_stream, route_frame, StreamTable};
use crate::engine::StreamEnd;
use crate::transport::channel::ChannelReader;
use crate::transport::{Extensions, Frame, FrameReader, FrameWriter, Route, Transport};
use mcpkit_types::RequestId;

/// Serves the sessions of an endpoint built with [`super::HttpServer::with_factory`], in place
/// of a [`crate::server::Server`]: a gateway or proxy that forwards each session's frames
/// elsewhere.
///
/// For every new session (an `initialize` POST) the endpoint calls [`SessionFactory::start`]
/// with the session's [`SessionTransport`]: reading it yields the frames the client POSTs (the
/// `initialize` request first); each frame written with a [`crate::transport::Route`] goes
/// where that route says (`Reply(id)` answers the POST of request `id` and ends its stream,
/// `Related(id)` goes on that stream first, `Standalone` on the GET stream;
/// [`SessionWriter::end_unanswered`] releases a request that will get no reply). The endpoint cancels the returned token when
/// the session ends (DELETE, idle expiry, shutdown); the backend should then stop. The
/// endpoint keeps doing everything else: Host/Origin checks, session ids, SSE, resumption.
pub trait SessionFactory: Send + Sync + 'static {
    /// Start serving the session `id` over `transport`; return its stop token.
    fn start(&self, id: &str, transport: SessionTransport) -> CancellationToken;
}

/// The backend's side of one HTTP session: frames in from POST bodies (read), frames out by
/// [`Route`] (written): a reply goes on its request's response stream, related traffic too,
/// standalone traffic on the GET stream. Given to a [`SessionFactory`].
pub struct SessionTransport {
    rx: ChannelReader,
    streams: Arc<Mutex<StreamTable>>,
    inspector: Inspector,
}

impl SessionTransport {
    /// The transport of a session whose POSTed frames arrive on `rx` and whose frames are
    /// routed by `streams`, each shown to `inspector`.
    pub(super) fn new(rx: ChannelReader, streams: Arc<Mutex<StreamTable>>, inspector: Inspector) -> Self {
        SessionTransport { rx, streams, inspector }
    }
}

/// Reading half of a [`SessionTransport`]: the frames the client POSTed, in order, each with
/// what the HTTP layer knows about it.
#[derive(Debug)]
pub struct SessionReader(ChannelReader);

impl FrameReader for SessionReader {
    fn read_frame(&mut self) -> impl std::future::Future<Output = io::Result<Option<Frame>>> + Send {
        self.0.read_frame()
    }
    fn take_extensions(&mut self) -> Extensions {
        self.0.take_extensions()
    }
}

/// Writing half of a [`SessionTransport`]: routes each frame to its response stream.
pub struct SessionWriter {
    streams: Arc<Mutex<StreamTable>>,
    inspector: Inspector,
}

impl std::fmt::Debug for SessionTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTransport").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for SessionWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionWriter").finish_non_exhaustive()
    }
}

impl Transport for SessionTransport {
    type Reader = SessionReader;
    type Writer = SessionWriter;
    fn split(self) -> (SessionReader, SessionWriter) {
        (
            SessionReader(self.rx),
            SessionWriter {
                streams: self.streams,
                inspector: self.inspector,
            },
        )
    }
}

impl SessionWriter {
    /// The client's request `id` will get no reply (the backend dropped it after a
    /// cancellation): end its response stream now instead of when the session ends.
    pub fn end_unanswered(&mut self, id: &RequestId) {
        end_stream(&self.streams, &StreamEnd::Unanswered(id.clone()));
    }
}

impl FrameWriter for SessionWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        self.inspector.outgoing(frame);
        route_frame(&self.streams, Bytes::copy_from_slice(frame), &Route::Standalone);
        Ok(())
    }
    async fn write_routed(&mut self, frame: &[u8], route: &Route) -> io::Result<()> {
        self.inspector.outgoing(frame);
        route_frame(&self.streams, Bytes::copy_from_slice(frame), route);
        Ok(())
    }
    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        lock(&self.streams).clear_streams();
        Ok(())
    }
}
