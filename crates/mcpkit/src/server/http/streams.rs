//! Where a session's outgoing frames go: each on the response stream of the request it belongs
//! to (or the standalone GET stream), with a bounded copy of every SSE stream's events kept by
//! the [`StreamLog`] so a client can resume with `Last-Event-ID`.
//!
//! The stream log is one of the two seams of the HTTP front end (the session directory is the
//! other): single-instance code records, primes, resumes and ends streams through it, and the
//! part that shares streams with other instances plugs in behind [`SharedLog`].

use crate::sync::lock;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use mcpkit_types::RequestId;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::config::Clock;
use crate::engine::StreamEnd;
use crate::server::backend::{BackendFuture, EventId, EventStore};
use crate::transport::Route;

/// One server-sent event: its id and its JSON-RPC frame.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) id: String,
    pub(super) data: Bytes,
    /// This event is the reply that ends its request's stream.
    pub(super) is_reply: bool,
}

/// What a resumed or opened GET gets: the events to send first, and a live sink if the stream
/// goes on.
pub(super) struct Resumed {
    pub(super) missed: Vec<Event>,
    pub(super) live: Option<mpsc::Receiver<Event>>,
}

/// Where one SSE stream's events wait for its client: bounded (see [`StreamTable::channel`]).
pub(super) type Sink = mpsc::Sender<Event>;

/// The stream of one POSTed request.
#[derive(Debug)]
pub(super) struct RequestStream {
    pub(super) stream: u64,
    pub(super) sink: Option<Sink>,
}

/// Where one stream stands; its events live in the [`EventStore`].
#[derive(Debug)]
pub(super) struct StreamStatus {
    /// Its name in the store and in event ids.
    pub(super) name: Arc<str>,
    /// The position of its latest event (0 before the first).
    position: u64,
    pub(super) finished: bool,
}

/// Standalone events held for a GET stream that is not open (older ones are dropped).
const UNDELIVERED_KEPT: usize = 256;

/// Stream 0 is the standalone (GET) stream; request streams count up from 1.
pub(super) const STANDALONE: u64 = 0;

/// How every session of an endpoint keeps its streams.
pub(super) struct StreamSettings {
    pub(super) log: StreamLog,
    pub(super) clock: Arc<dyn Clock>,
    /// Events each stream's channel holds for a client that is not reading.
    pub(super) buffer: usize,
    /// Finished streams kept resumable per session (older ones are forgotten).
    pub(super) streams_kept: usize,
    /// What request streams' names start with, so that a name is unique among every writer of
    /// the event store (see [`SharedLog::stream_prefix`]); empty for a log of its own.
    pub(super) stream_prefix: Arc<str>,
}

/// The stream log of an endpoint: its [`EventStore`], and what shares the streams with other
/// writers of that store, when something does.
#[derive(Clone)]
pub(super) struct StreamLog {
    pub(super) store: Arc<dyn EventStore>,
    shared: Option<Arc<dyn SharedLog>>,
}

/// An event as the log recorded it.
pub(super) struct Recorded<'a> {
    pub(super) stream: &'a str,
    pub(super) position: u64,
    pub(super) data: &'a Bytes,
    /// The reply that ends its request's stream.
    pub(super) is_reply: bool,
}

/// The stream log beyond this instance: the events of a session's streams reach whichever
/// instance the client resumes them on, and the GET stream is one log whoever writes it.
pub(super) trait SharedLog: Send + Sync {
    /// What request streams' names start with.
    fn stream_prefix(&self) -> String;
    /// An event was recorded on one of `session`'s streams.
    fn recorded(&self, session: &str, event: Recorded<'_>);
    /// A standalone frame of `session`: it goes to the session's GET-stream log, and from there
    /// to whichever GET stream reads it. Nothing waits for it.
    fn standalone(&self, session: &str, frame: Bytes);
    /// Resume the stream `last_event_id` names, wherever it was written.
    fn resume<'a>(
        &'a self,
        streams: &'a Arc<Mutex<StreamTable>>,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Option<Resumed>>;
    /// Open the session's GET stream (`None` while one is open here).
    fn open_standalone<'a>(&'a self, streams: &'a Arc<Mutex<StreamTable>>) -> BoxFuture<'a, Option<Resumed>>;
    /// The session left this instance: its events stay for the others.
    fn left(&self, streams: &Arc<Mutex<StreamTable>>);
}

impl StreamLog {
    /// A log in `store` alone.
    pub(super) fn local(store: Arc<dyn EventStore>) -> StreamLog {
        StreamLog { store, shared: None }
    }

    /// A log in `store` that `shared` shares with other instances.
    pub(super) fn shared(store: Arc<dyn EventStore>, shared: Arc<dyn SharedLog>) -> StreamLog {
        StreamLog {
            store,
            shared: Some(shared),
        }
    }

    /// Append an event to stream `name`; its position (`predicted` when the store answers
    /// later).
    fn append(&self, session: &str, name: &str, data: &Bytes, is_reply: bool, predicted: u64) -> u64 {
        let position = now_or_later(self.store.append(session, name, data.clone()), predicted);
        if let Some(shared) = &self.shared {
            let event = Recorded {
                stream: name,
                position,
                data,
                is_reply,
            };
            shared.recorded(session, event);
        }
        position
    }

    /// The position a request stream's priming event names. A shared log starts the stream
    /// with a stored marker, so that another instance can tell the stream exists.
    fn start(&self, session: &str, name: &str, fresh: bool) -> (u64, Option<u64>) {
        if self.shared.is_none() {
            return (0, None);
        }
        let marked = fresh.then(|| now_or_later(self.store.append(session, name, Bytes::new()), 1));
        (1, marked)
    }
}

/// The streams of one session.
pub(super) struct StreamTable {
    pub(super) session: Arc<str>,
    /// The endpoint's, shared by all its sessions (one pointer each, not five fields).
    pub(super) settings: Arc<StreamSettings>,
    pub(super) requests: HashMap<RequestId, RequestStream>,
    pub(super) standalone: Option<Sink>,
    /// Standalone events sent while no GET stream was open, for the next one.
    pub(super) undelivered: VecDeque<Event>,
    pub(super) logs: HashMap<u64, StreamStatus>,
    finished: VecDeque<u64>,
    pub(super) next_stream: u64,
    /// The last request or event: idleness counts from the end of activity, not its start.
    pub(super) last_activity: Instant,
}

impl StreamTable {
    pub(super) fn new(session: Arc<str>, settings: &Arc<StreamSettings>) -> StreamTable {
        let last_activity = settings.clock.now();
        StreamTable {
            session,
            settings: settings.clone(),
            requests: HashMap::new(),
            standalone: None,
            undelivered: VecDeque::new(),
            logs: HashMap::new(),
            finished: VecDeque::new(),
            next_stream: 1,
            last_activity,
        }
    }

    /// A new stream's channel. Full means the client stopped reading: the stream is then closed
    /// (its events stay in the log for resuming) instead of buffering without limit.
    pub(super) fn channel(&self) -> (Sink, mpsc::Receiver<Event>) {
        mpsc::channel(self.settings.buffer)
    }

    /// Whether a GET stream is open on this session.
    pub(super) fn standalone_open(&self) -> bool {
        self.standalone.as_ref().is_some_and(|s| !s.is_closed())
    }

    /// The request `id` is answered (or cancelled): its stream leaves the table. An idle
    /// session keeps no table: its buckets would outweigh the rest of the session.
    fn end_request(&mut self, id: &RequestId) -> Option<RequestStream> {
        let slot = self.requests.remove(id);
        if self.requests.is_empty() {
            self.requests.shrink_to_fit();
        }
        slot
    }

    /// Something happened on the session now.
    pub(super) fn touch(&mut self) {
        self.last_activity = self.settings.clock.now();
    }

    /// The local number of the stream named `name`, if this session has it.
    pub(super) fn stream_named(&self, name: &str) -> Option<u64> {
        if name == "0" {
            return Some(STANDALONE);
        }
        self.logs.iter().find(|(_, l)| &*l.name == name).map(|(n, _)| *n)
    }

    fn log_of(&mut self, stream: u64) -> &mut StreamStatus {
        let prefix = &self.settings.stream_prefix;
        self.logs.entry(stream).or_insert_with(|| StreamStatus {
            name: stream_name(prefix, stream),
            position: 0,
            finished: false,
        })
    }

    pub(super) fn record(&mut self, stream: u64, data: Bytes, is_reply: bool) -> Event {
        self.touch();
        let (session, settings) = (self.session.clone(), self.settings.clone());
        let log = self.log_of(stream);
        // A priming event (no data) is never replayed: it names the position it starts after.
        if !data.is_empty() {
            log.position = settings
                .log
                .append(&session, &log.name, &data, is_reply, log.position + 1);
        }
        let id = format!("{}-{}", log.name, log.position);
        if is_reply {
            self.finish(stream);
        }
        Event { id, data, is_reply }
    }

    /// Turn a request's stream into an SSE stream and give its priming event (no data). Until
    /// then nothing of the stream is recorded: most replies go out as plain JSON and never need
    /// an event id or a replay copy.
    pub(super) fn prime(&mut self, stream: u64) -> Event {
        let fresh = !self.logs.contains_key(&stream);
        let (session, settings) = (self.session.clone(), self.settings.clone());
        let log = self.log_of(stream);
        let name = log.name.clone();
        let mut start = 0;
        if stream != STANDALONE {
            let (first, marked) = settings.log.start(&session, &name, fresh);
            start = first;
            if let Some(position) = marked {
                log.position = position;
            }
        }
        if fresh && !self.requests.values().any(|s| s.stream == stream) {
            // Already over (cancelled): resumable for a while like any finished stream.
            self.finish(stream);
        }
        Event {
            id: format!("{name}-{start}"),
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
        while self.finished.len() > self.settings.streams_kept {
            if let Some(old) = self.finished.pop_front() {
                self.forget(old);
            }
        }
    }

    /// The stream will not be resumed: drop its log and its stored events.
    pub(super) fn forget(&mut self, stream: u64) {
        self.finished.retain(|s| *s != stream);
        if let Some(log) = self.logs.remove(&stream) {
            now_or_later(self.settings.log.store.remove_stream(&self.session, &log.name), ());
        }
    }

    /// Every stream ends (the session or its engine stopped).
    pub(super) fn clear_streams(&mut self) {
        self.requests.clear();
        self.standalone = None;
    }

    /// Open the standalone stream here. `None` when one is already open.
    fn open_standalone(&mut self) -> Option<Resumed> {
        if self.standalone_open() {
            return None;
        }
        let (tx, rx) = self.channel();
        let prime = self.record(STANDALONE, Bytes::new(), false);
        let held: Vec<Event> = self.undelivered.drain(..).collect();
        // More held events than the buffer takes: this stream ends after what fits, and the
        // client resumes the rest from the log.
        let fits = held.into_iter().all(|event| tx.try_send(event).is_ok());
        self.standalone = fits.then_some(tx);
        Some(Resumed {
            missed: vec![prime],
            live: Some(rx),
        })
    }

    /// Resume after `last_event_id` here: replay what that stream missed (nothing from other
    /// streams), then keep delivering if the stream is still open. `None` as well when it
    /// names the standalone stream while a GET still holds it.
    fn resume(&mut self, last_event_id: &str) -> Option<Resumed> {
        let EventId { stream: name, position } = EventId::parse(last_event_id)?;
        let stream = self.stream_named(&name)?;
        if stream == STANDALONE && self.standalone_open() {
            return None;
        }
        let finished = self.logs.get(&stream)?.finished;
        let kept = now_or_later(
            self.settings.log.store.after(&self.session, &name, position),
            Vec::new(),
        );
        let missed: Vec<Event> = kept
            .into_iter()
            .map(|(position, data)| Event {
                id: format!("{name}-{position}"),
                data,
                is_reply: false,
            })
            .collect();
        let live = if stream == STANDALONE {
            let (tx, rx) = self.channel();
            self.standalone = Some(tx);
            // The replay already covers what was held back for the next GET.
            self.undelivered.clear();
            Some(rx)
        } else if finished {
            None
        } else {
            let (tx, rx) = self.channel();
            let slot = self.requests.values_mut().find(|s| s.stream == stream)?;
            slot.sink = Some(tx);
            Some(rx)
        };
        Some(Resumed { missed, live })
    }
}

/// Open the session's GET stream: a priming event, then everything sent on it. `None` while a
/// GET stream is open (a resume included: it never takes over an open stream).
pub(super) async fn open_standalone(streams: &Arc<Mutex<StreamTable>>) -> Option<Resumed> {
    let shared = lock(streams).settings.log.shared.clone();
    match shared {
        Some(shared) => shared.open_standalone(streams).await,
        None => lock(streams).open_standalone(),
    }
}

/// Resume the stream `last_event_id` names: what it missed, and the live stream if it goes
/// on. `None` when no such stream can be resumed.
pub(super) async fn resume(streams: &Arc<Mutex<StreamTable>>, last_event_id: &str) -> Option<Resumed> {
    let shared = lock(streams).settings.log.shared.clone();
    match shared {
        Some(shared) => shared.resume(streams, last_event_id).await,
        None => lock(streams).resume(last_event_id),
    }
}

/// The session leaves this instance: every stream ends, and a log of its own drops the
/// session's events (a shared one keeps them for the other instances).
pub(super) fn close(streams: &Arc<Mutex<StreamTable>>) {
    let (log, session) = {
        let mut r = lock(streams);
        r.clear_streams();
        r.logs.clear();
        (r.settings.log.clone(), r.session.clone())
    };
    match &log.shared {
        Some(shared) => shared.left(streams),
        None => now_or_later(log.store.remove_session(&session), ()),
    }
}

/// The name of stream `stream` in the store and in event ids: `0` for the standalone stream
/// (one per session, whichever instance writes it), `{prefix}{n}` for a request's.
pub(super) fn stream_name(prefix: &str, stream: u64) -> Arc<str> {
    if stream == STANDALONE {
        Arc::from("0")
    } else {
        Arc::from(format!("{prefix}{stream}"))
    }
}

/// The outcome of a store operation issued from synchronous code: at once when it is ready
/// (an in-memory store always is), else `fallback`, with the operation left to finish on the
/// runtime (stores take effect in call order, so nothing waits for it here).
pub(super) fn now_or_later<T: Send + 'static>(op: BackendFuture<T>, fallback: T) -> T {
    use futures_util::FutureExt;
    let mut op = op;
    match (&mut op).now_or_never() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            tracing::warn!("event store: {e}");
            fallback
        }
        None => {
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    if let Err(e) = op.await {
                        tracing::warn!("event store: {e}");
                    }
                });
            }
            fallback
        }
    }
}

/// End a request's response stream before its reply.
pub(super) fn end_stream(streams: &Mutex<StreamTable>, end: &StreamEnd) {
    let mut r = lock(streams);
    match end {
        StreamEnd::Close(id) => {
            if let Some(stream) = r.requests.get(id).map(|s| s.stream) {
                // The client will resume this request with `Last-Event-ID`: from now on its events
                // (the reply too) are recorded, even if nothing was sent on it yet.
                r.prime(stream);
            }
            if let Some(slot) = r.requests.get_mut(id) {
                slot.sink = None;
            }
        }
        StreamEnd::Unanswered(id) => {
            // Cancelled: no reply will come, so the stream ends and is not resumable.
            if let Some(slot) = r.end_request(id) {
                r.finish(slot.stream);
            }
        }
    }
}

/// Put one outgoing frame where it belongs: a reply (and related traffic) on its request's
/// response stream, standalone traffic on the GET stream; every event of an SSE stream is
/// recorded for resuming.
pub(super) fn route_frame(streams: &Mutex<StreamTable>, frame: Bytes, route: &Route) {
    let mut r = lock(streams);
    match route {
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
                r.touch();
                Event {
                    id: String::new(),
                    data: frame,
                    is_reply,
                }
            };
            let slot = if is_reply { r.end_request(id) } else { None };
            let sink = match &slot {
                Some(s) => s.sink.clone(),
                None => r.requests.get(id).and_then(|s| s.sink.clone()),
            };
            if let Some(sink) = sink {
                if let Err(e) = sink.try_send(event) {
                    // The client went away, or stopped reading and fell a whole buffer behind:
                    // the stream ends here, its events stay replayable.
                    if matches!(e, TrySendError::Full(_)) {
                        tracing::debug!(request = %id, "response stream closed: its client is not reading");
                    }
                    if let Some(s) = r.requests.get_mut(id) {
                        s.sink = None;
                    }
                }
            }
        }
        _ => standalone_frame(&mut r, frame),
    }
}

/// Standalone traffic (or traffic of a request already answered): the GET stream.
fn standalone_frame(r: &mut StreamTable, frame: Bytes) {
    if let Some(shared) = &r.settings.log.shared {
        // Numbered by the shared log, delivered by whichever GET stream reads it.
        r.last_activity = r.settings.clock.now();
        shared.standalone(&r.session, frame);
        return;
    }
    let event = r.record(STANDALONE, frame, false);
    let delivered = match &r.standalone {
        Some(sink) => sink.try_send(event.clone()).is_ok(),
        None => false,
    };
    if !delivered {
        // No GET stream yet, or it broke, or its client fell a whole buffer behind (the stream
        // ends): hold the event for the next one.
        r.standalone = None;
        r.undelivered.push_back(event);
        while r.undelivered.len() > UNDELIVERED_KEPT {
            r.undelivered.pop_front();
        }
    }
}
