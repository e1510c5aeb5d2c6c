//! One HTTP session: the engine connection behind it, and where its outgoing frames go.
//!
//! The engine writes frames with a [`Route`]; the session's writer puts each on the response
//! stream of the request it belongs to (or the standalone GET stream) and keeps a bounded copy
//! of every stream's events so a client can resume with `Last-Event-ID`.

use crate::sync::lock;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcpkit_types::jsonrpc::MessageRef;
use mcpkit_types::RequestId;
use tokio::sync::mpsc;

use super::event_store::EventStore;
use crate::engine::Dispatcher;
use crate::transport::{Extensions, Frame, FrameReader, FrameWriter, Route, Transport};

/// One server-sent event: its id and its JSON-RPC frame.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) id: String,
    pub(crate) data: Bytes,
    /// This event is the reply that ends its request's stream.
    pub(crate) is_reply: bool,
}

pub(crate) type Sink = mpsc::UnboundedSender<Event>;

/// The stream of one POSTed request.
#[derive(Debug)]
struct RequestStream {
    stream: u64,
    sink: Option<Sink>,
}

/// Where one stream stands; its events live in the [`EventStore`].
#[derive(Debug, Default)]
struct StreamLog {
    next_seq: u64,
    finished: bool,
}

/// Finished streams kept resumable per session (older ones are forgotten).
const FINISHED_STREAMS_KEPT: usize = 64;

pub(crate) struct Routes {
    session: Arc<str>,
    store: Arc<dyn EventStore>,
    requests: HashMap<RequestId, RequestStream>,
    standalone: Option<Sink>,
    /// Standalone events sent while no GET stream was open, for the next one.
    undelivered: VecDeque<Event>,
    logs: HashMap<u64, StreamLog>,
    finished: VecDeque<u64>,
    next_stream: u64,
    /// The last request or event: idleness counts from the end of activity, not its start.
    last_activity: Instant,
}

/// Stream 0 is the standalone (GET) stream; request streams count up from 1.
const STANDALONE: u64 = 0;

pub(crate) struct HttpSession {
    pub(crate) id: Arc<str>,
    engine: Engine,
    routes: Arc<Mutex<Routes>>,
}

/// What serves a session's frames.
enum Engine {
    /// The engine serving a [`crate::server::Server`], driven by the POSTs themselves: an idle
    /// session is this struct and its routes, no task and no queue.
    Direct(Dispatcher),
    /// A custom backend (see [`super::server::SessionFactory`]) reading a channel.
    Factory {
        inbound: mpsc::UnboundedSender<(Vec<u8>, Extensions)>,
        stop: tokio_util::sync::CancellationToken,
    },
}

/// What serves the sessions of an endpoint.
#[derive(Clone)]
pub(crate) enum Backend {
    /// The engine, serving this server.
    Server(crate::server::Server),
    /// Something else: each session's frames are handed to it.
    Factory(Arc<dyn super::server::SessionFactory>),
}

impl Routes {
    fn record(&mut self, stream: u64, data: Bytes, is_reply: bool) -> Event {
        self.last_activity = Instant::now();
        let log = self.logs.entry(stream).or_default();
        log.next_seq += 1;
        let seq = log.next_seq;
        // A priming event (no data) is never replayed: a resume asks for what came after it.
        if !data.is_empty() {
            self.store.append(&self.session, stream, seq, data.clone());
        }
        if is_reply {
            self.finish(stream);
        }
        Event {
            id: format!("{stream}-{seq}"),
            data,
            is_reply,
        }
    }

    /// Turn a request's stream into an SSE stream and give its priming event (sequence 1, no
    /// data). Until then nothing of the stream is recorded: most replies go out as plain JSON
    /// and never need an event id or a replay copy.
    fn prime(&mut self, stream: u64) -> Event {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.logs.entry(stream) {
            slot.insert(StreamLog {
                next_seq: 1,
                finished: false,
            });
            if !self.requests.values().any(|s| s.stream == stream) {
                // Already over (cancelled): resumable for a while like any finished stream.
                self.finish(stream);
            }
        }
        Event {
            id: format!("{stream}-1"),
            data: Bytes::new(),
            is_reply: false,
        }
    }

    /// The stream got its last event: keep it resumable for a while, then forget it.
    fn finish(&mut self, stream: u64) {
        if let Some(log) = self.logs.get_mut(&stream) {
            if !log.finished {
                log.finished = true;
                self.finished.push_back(stream);
            }
        }
        while self.finished.len() > FINISHED_STREAMS_KEPT {
            if let Some(old) = self.finished.pop_front() {
                self.forget(old);
            }
        }
    }

    fn forget(&mut self, stream: u64) {
        self.logs.remove(&stream);
        self.store.remove_stream(&self.session, stream);
    }
}

/// Parse an event id `"{stream}-{seq}"`.
fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (s, q) = id.trim().split_once('-')?;
    Some((s.parse().ok()?, q.parse().ok()?))
}

/// What a resumed GET gets: the missed events, and a live sink if the stream goes on.
pub(crate) struct Resumed {
    pub(crate) missed: Vec<Event>,
    pub(crate) live: Option<mpsc::UnboundedReceiver<Event>>,
}

impl HttpSession {
    /// Start a session: the engine serving `server`, or the factory's backend.
    pub(crate) fn start(
        id: Arc<str>,
        backend: &Backend,
        store: Arc<dyn EventStore>,
        preset: Option<crate::server::Preset>,
    ) -> Arc<HttpSession> {
        let routes = Arc::new(Mutex::new(Routes {
            session: id.clone(),
            store,
            requests: HashMap::new(),
            standalone: None,
            undelivered: VecDeque::new(),
            logs: HashMap::new(),
            finished: VecDeque::new(),
            next_stream: 1,
            last_activity: Instant::now(),
        }));
        let engine = match backend {
            Backend::Server(server) => {
                let sink_routes = routes.clone();
                let sink =
                    Box::new(move |frame: Vec<u8>, route: Route| route_frame(&sink_routes, frame.into(), &route));
                Engine::Direct(server.start_direct(sink, preset))
            }
            Backend::Factory(factory) => {
                let (inbound, rx) = mpsc::unbounded_channel();
                let transport = SessionTransport {
                    rx,
                    routes: routes.clone(),
                };
                Engine::Factory {
                    inbound,
                    stop: factory.start(&id, transport),
                }
            }
        };
        Arc::new(HttpSession { id, engine, routes })
    }

    pub(crate) fn touch(&self) {
        lock(&self.routes).last_activity = Instant::now();
    }

    /// How long the session has been idle: zero while anything is in flight or streaming,
    /// otherwise the time since its last request or event.
    pub(crate) fn idle(&self) -> Duration {
        let mut r = lock(&self.routes);
        if !r.requests.is_empty() || r.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            // Busy now: idleness will count from here once it stops.
            r.last_activity = Instant::now();
            return Duration::ZERO;
        }
        r.last_activity.elapsed()
    }

    /// Open the response stream of a request: its receiver and its stream number. The stream
    /// is not recorded until it becomes SSE ([`HttpSession::prime`]). `None` when `id` is already
    /// in flight on this session (checked and registered under one lock, so two concurrent POSTs
    /// with the same id cannot both pass).
    pub(crate) fn open_request(&self, id: RequestId) -> Option<(mpsc::UnboundedReceiver<Event>, u64)> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut r = lock(&self.routes);
        if r.requests.contains_key(&id) {
            return None;
        }
        let stream = r.next_stream;
        r.next_stream += 1;
        r.requests.insert(id, RequestStream { stream, sink: Some(tx) });
        Some((rx, stream))
    }

    /// The request's answer will be an SSE stream: its priming event (an id to resume from, no
    /// data). Every event of the stream from now on is recorded for resuming.
    pub(crate) fn prime(&self, stream: u64) -> Event {
        lock(&self.routes).prime(stream)
    }

    /// Hand a message (read from `frame`) to the engine, with what the HTTP layer knows about
    /// its request; `false` when the session has ended.
    pub(crate) fn deliver(&self, frame: &[u8], message: MessageRef<'_>, extensions: Extensions) -> bool {
        match &self.engine {
            Engine::Direct(d) => {
                if d.is_closed() {
                    return false;
                }
                d.on_message(message, extensions);
                true
            }
            Engine::Factory { inbound, .. } => inbound.send((frame.to_vec(), extensions)).is_ok(),
        }
    }

    /// Open the standalone stream. `None` when one is already open.
    pub(crate) fn open_standalone(&self) -> Option<(mpsc::UnboundedReceiver<Event>, Event)> {
        let mut r = lock(&self.routes);
        if r.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let prime = r.record(STANDALONE, Bytes::new(), false);
        for event in r.undelivered.drain(..) {
            let _ = tx.send(event);
        }
        r.standalone = Some(tx);
        Some((rx, prime))
    }

    /// Resume after `last_event_id`: replay what that stream missed (nothing from other
    /// streams), then keep delivering if the stream is still open.
    pub(crate) fn resume(&self, last_event_id: &str) -> Option<Resumed> {
        let (stream, seq) = parse_event_id(last_event_id)?;
        let mut r = lock(&self.routes);
        let finished = r.logs.get(&stream)?.finished;
        let missed: Vec<Event> = r
            .store
            .after(&r.session, stream, seq)
            .into_iter()
            .map(|(seq, data)| Event {
                id: format!("{stream}-{seq}"),
                data,
                is_reply: false,
            })
            .collect();
        let live = if stream == STANDALONE {
            let (tx, rx) = mpsc::unbounded_channel();
            r.standalone = Some(tx);
            // The replay already covers what was held back for the next GET.
            r.undelivered.clear();
            Some(rx)
        } else if finished {
            None
        } else {
            let (tx, rx) = mpsc::unbounded_channel();
            let slot = r.requests.values_mut().find(|s| s.stream == stream)?;
            slot.sink = Some(tx);
            Some(rx)
        };
        Some(Resumed { missed, live })
    }

    /// End the session: the engine stops and every open stream ends.
    pub(crate) fn close(&self) {
        match &self.engine {
            Engine::Direct(d) => d.shutdown(),
            Engine::Factory { stop, .. } => stop.cancel(),
        }
        let mut r = lock(&self.routes);
        r.requests.clear();
        r.standalone = None;
        r.logs.clear();
        r.store.remove_session(&r.session);
    }

    /// The request's reply went out as plain JSON: nothing to resume.
    pub(crate) fn forget_stream(&self, stream: u64) {
        let mut r = lock(&self.routes);
        r.finished.retain(|s| *s != stream);
        r.forget(stream);
    }
}

/// The backend's side of one HTTP session: frames in from POST bodies (read), frames out by
/// [`Route`] (written): a reply goes on its request's response stream, related traffic too,
/// standalone traffic on the GET stream. Given to a [`super::server::SessionFactory`].
pub struct SessionTransport {
    rx: mpsc::UnboundedReceiver<(Vec<u8>, Extensions)>,
    routes: Arc<Mutex<Routes>>,
}

/// Reading half of a [`SessionTransport`]: the frames the client POSTed, in order.
#[derive(Debug)]
pub struct SessionReader {
    rx: mpsc::UnboundedReceiver<(Vec<u8>, Extensions)>,
    last: Extensions,
}

/// Writing half of a [`SessionTransport`]: routes each frame to its response stream.
pub struct SessionWriter {
    routes: Arc<Mutex<Routes>>,
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
            SessionReader {
                rx: self.rx,
                last: Extensions::default(),
            },
            SessionWriter { routes: self.routes },
        )
    }
}

impl FrameReader for SessionReader {
    async fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        Ok(self.rx.recv().await.map(|(frame, extensions)| {
            self.last = extensions;
            Frame::Message(frame)
        }))
    }
    fn take_extensions(&mut self) -> Extensions {
        std::mem::take(&mut self.last)
    }
}

/// Put one outgoing frame where it belongs: a reply (and related traffic) on its request's
/// response stream, standalone traffic on the GET stream; every event of an SSE stream is
/// recorded for resuming.
fn route_frame(routes: &Mutex<Routes>, frame: Bytes, route: &Route) {
    let mut r = lock(routes);
    match route {
        Route::CloseStream(id) => {
            if let Some(stream) = r.requests.get(id).map(|s| s.stream) {
                // The client will resume this request with `Last-Event-ID`: from now on its events
                // (the reply too) are recorded, even if nothing was sent on it yet.
                r.prime(stream);
            }
            if let Some(slot) = r.requests.get_mut(id) {
                slot.sink = None;
            }
        }
        Route::Finished(id) => {
            // Cancelled: no reply will come, so the stream ends and is not resumable.
            if let Some(slot) = r.requests.remove(id) {
                r.finish(slot.stream);
            }
        }
        Route::Reply(id) | Route::Related(id) if r.requests.contains_key(id) => {
            let is_reply = matches!(route, Route::Reply(_));
            let stream = r.requests.get(id).map_or(STANDALONE, |s| s.stream);
            if !is_reply {
                // Anything before the reply makes the answer an SSE stream.
                r.prime(stream);
            }
            let event = if r.logs.contains_key(&stream) {
                r.record(stream, frame, is_reply)
            } else {
                // A reply alone, on a stream not primed: it goes out as plain JSON.
                r.last_activity = Instant::now();
                Event {
                    id: String::new(),
                    data: frame,
                    is_reply,
                }
            };
            let slot = if is_reply { r.requests.remove(id) } else { None };
            let sink = match &slot {
                Some(s) => s.sink.clone(),
                None => r.requests.get(id).and_then(|s| s.sink.clone()),
            };
            if let Some(sink) = sink {
                if sink.send(event).is_err() {
                    // The client went away; the events stay replayable.
                    if let Some(s) = r.requests.get_mut(id) {
                        s.sink = None;
                    }
                }
            }
        }
        _ => {
            // Standalone traffic (or traffic of a request already answered): GET stream.
            let event = r.record(STANDALONE, frame, false);
            let delivered = match &r.standalone {
                Some(sink) => sink.send(event.clone()).is_ok(),
                None => false,
            };
            if !delivered {
                // No GET stream yet (or it broke): hold the event for the next one.
                r.standalone = None;
                r.undelivered.push_back(event);
                while r.undelivered.len() > 256 {
                    r.undelivered.pop_front();
                }
            }
        }
    }
}

impl FrameWriter for SessionWriter {
    async fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        route_frame(&self.routes, Bytes::copy_from_slice(frame), &Route::Standalone);
        Ok(())
    }
    async fn write_routed(&mut self, frame: &[u8], route: &Route) -> io::Result<()> {
        route_frame(&self.routes, Bytes::copy_from_slice(frame), route);
        Ok(())
    }
    async fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    async fn close(&mut self) -> io::Result<()> {
        let mut r = lock(&self.routes);
        r.requests.clear();
        r.standalone = None;
        Ok(())
    }
}
