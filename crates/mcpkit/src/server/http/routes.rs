//! Where a session's outgoing frames go: each on the response stream of the request it belongs
//! to (or the standalone GET stream), with a bounded copy of every SSE stream's events in the
//! [`EventStore`] so a client can resume with `Last-Event-ID`.

use crate::sync::lock;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use mcpkit_types::RequestId;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use super::config::Clock;
use crate::server::backend::{BackendFuture, EventStore};
use crate::transport::Route;

/// One server-sent event: its id and its JSON-RPC frame.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) id: String,
    pub(super) data: Bytes,
    /// This event is the reply that ends its request's stream.
    pub(super) is_reply: bool,
}

/// Where one SSE stream's events wait for its client: bounded (see [`Routes::channel`]).
pub(super) type Sink = mpsc::Sender<Event>;

/// The stream of one POSTed request.
#[derive(Debug)]
pub(super) struct RequestStream {
    pub(super) stream: u64,
    pub(super) sink: Option<Sink>,
}

/// Where one stream stands; its events live in the [`EventStore`].
#[derive(Debug)]
pub(super) struct StreamLog {
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
#[derive(Clone)]
pub(super) struct RouteSettings {
    pub(super) store: Arc<dyn EventStore>,
    pub(super) clock: Arc<dyn Clock>,
    /// Events each stream's channel holds for a client that is not reading.
    pub(super) buffer: usize,
    /// Finished streams kept resumable per session (older ones are forgotten).
    pub(super) streams_kept: usize,
    /// What request streams' names start with (`"{tag}."`) when instances share the event
    /// store, so that a name is unique among them; empty for a lone instance.
    pub(super) stream_prefix: Arc<str>,
}

/// Told of every event recorded (stream name, position, data, is_reply): instances sharing the
/// event store pass them on to whichever instance a stream was resumed on.
pub(super) type OnRecord = Arc<dyn Fn(&str, u64, &Bytes, bool) + Send + Sync>;

/// Where a standalone frame goes when instances share the event store: appended to the
/// session's GET-stream log (the store numbers it, whichever instance writes), then told to
/// whichever instance holds the GET stream.
pub(super) type StandaloneOut = Arc<dyn Fn(Bytes) + Send + Sync>;

pub(super) struct Routes {
    pub(super) session: Arc<str>,
    /// The endpoint's, shared by all its sessions (one pointer each, not five fields).
    pub(super) settings: Arc<RouteSettings>,
    pub(super) requests: HashMap<RequestId, RequestStream>,
    pub(super) standalone: Option<Sink>,
    /// Standalone events sent while no GET stream was open, for the next one.
    pub(super) undelivered: VecDeque<Event>,
    pub(super) logs: HashMap<u64, StreamLog>,
    finished: VecDeque<u64>,
    pub(super) next_stream: u64,
    /// What only instances sharing the event store use, made on first use (see
    /// [`Routes::shared`]): a lone instance's sessions, idle ones above all, carry a pointer
    /// instead of ~170 bytes of empty maps.
    pub(super) shared: Option<Box<SharedRoutes>>,
    /// The last request or event: idleness counts from the end of activity, not its start.
    pub(super) last_activity: Instant,
}

/// The part of [`Routes`] for instances sharing the event store.
#[derive(Default)]
pub(super) struct SharedRoutes {
    /// Instances share the event store: see [`OnRecord`]; request streams start with a stored
    /// marker (so another instance can tell a stream exists), and standalone events are not
    /// held back (the store has them for any instance's GET).
    pub(super) on_record: Option<OnRecord>,
    /// Streams of other instances resumed here: the position delivered so far, and the sink.
    pub(super) remote: HashMap<Arc<str>, (u64, Sink)>,
    /// Instances share the event store: see [`StandaloneOut`].
    pub(super) standalone_out: Option<StandaloneOut>,
    /// The GET stream open here: the store position it delivered up to (`None` while it is
    /// being opened: what arrives waits in `ahead` until the store was read).
    pub(super) cursor: Option<u64>,
    /// GET-stream events that arrived beyond the cursor, delivered in store order.
    pub(super) ahead: BTreeMap<u64, Event>,
    /// A store read filling a gap before `ahead` is under way.
    pub(super) filling: bool,
    /// Streams of other instances resumed here: how many times their instance answered that
    /// it still runs the request (see `HttpSession::watch_owner`).
    pub(super) alive: HashMap<Arc<str>, u64>,
}

impl Routes {
    pub(super) fn new(session: Arc<str>, settings: &Arc<RouteSettings>) -> Routes {
        let last_activity = settings.clock.now();
        Routes {
            session,
            settings: settings.clone(),
            requests: HashMap::new(),
            standalone: None,
            undelivered: VecDeque::new(),
            logs: HashMap::new(),
            finished: VecDeque::new(),
            next_stream: 1,
            shared: None,
            last_activity,
        }
    }

    /// The shared-store part, made now if it was not yet.
    pub(super) fn shared(&mut self) -> &mut SharedRoutes {
        self.shared.get_or_insert_with(Default::default)
    }

    /// Told of every event recorded: instances share the event store.
    fn on_record(&self) -> Option<&OnRecord> {
        self.shared.as_ref()?.on_record.as_ref()
    }

    /// Where standalone frames go: instances share the event store.
    fn standalone_out(&self) -> Option<&StandaloneOut> {
        self.shared.as_ref()?.standalone_out.as_ref()
    }

    /// A new stream's channel. Full means the client stopped reading: the stream is then closed
    /// (its events stay in the log for resuming) instead of buffering without limit.
    pub(super) fn channel(&self) -> (Sink, mpsc::Receiver<Event>) {
        mpsc::channel(self.settings.buffer)
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

    fn log_of(&mut self, stream: u64) -> &mut StreamLog {
        let prefix = &self.settings.stream_prefix;
        self.logs.entry(stream).or_insert_with(|| StreamLog {
            name: stream_name(prefix, stream),
            position: 0,
            finished: false,
        })
    }

    pub(super) fn record(&mut self, stream: u64, data: Bytes, is_reply: bool) -> Event {
        self.touch();
        let session = self.session.clone();
        let store = self.settings.store.clone();
        let tell = self.on_record().cloned();
        let log = self.log_of(stream);
        // A priming event (no data) is never replayed: it names the position it starts after.
        if !data.is_empty() {
            let predicted = log.position + 1;
            log.position = settle(store.append(&session, &log.name, data.clone()), predicted);
        }
        let id = format!("{}-{}", log.name, log.position);
        if let Some(tell) = tell.filter(|_| !data.is_empty()) {
            tell(&log.name, log.position, &data, is_reply);
        }
        if is_reply {
            self.finish(stream);
        }
        Event { id, data, is_reply }
    }

    /// Turn a request's stream into an SSE stream and give its priming event (position 0, no
    /// data). Until then nothing of the stream is recorded: most replies go out as plain JSON
    /// and never need an event id or a replay copy.
    pub(super) fn prime(&mut self, stream: u64) -> Event {
        let fresh = !self.logs.contains_key(&stream);
        let clustered = self.on_record().is_some();
        let (session, store) = (self.session.clone(), self.settings.store.clone());
        let log = self.log_of(stream);
        let name = log.name.clone();
        let mut start = 0;
        if clustered && stream != STANDALONE {
            start = 1;
            if fresh {
                log.position = settle(store.append(&session, &name, Bytes::new()), 1);
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
            settle(self.settings.store.remove_stream(&self.session, &log.name), ());
        }
    }

    /// A resumed stream of another instance ends here.
    pub(super) fn remove_remote(&mut self, name: &str) {
        if let Some(s) = &mut self.shared {
            s.remote.remove(name);
            s.alive.remove(name);
        }
    }

    /// Every stream ends (the session or its backend stopped).
    pub(super) fn clear_streams(&mut self) {
        self.requests.clear();
        self.standalone = None;
        if let Some(s) = &mut self.shared {
            s.cursor = None;
            s.ahead.clear();
        }
    }

    /// Deliver what `ahead` holds right after the cursor, in order; `true` when a gap remains
    /// (an event beyond it arrived before one the store has).
    pub(super) fn drain_ahead(&mut self) -> bool {
        let Some(s) = self.shared.as_deref_mut() else {
            return false;
        };
        let Some(mut cursor) = s.cursor else { return false };
        while let Some((&p, _)) = s.ahead.first_key_value() {
            if p <= cursor {
                s.ahead.pop_first();
                continue;
            }
            if p != cursor + 1 {
                break;
            }
            let Some((_, event)) = s.ahead.pop_first() else {
                break;
            };
            cursor = p;
            let sent = self.standalone.as_ref().is_some_and(|s| s.try_send(event).is_ok());
            if !sent {
                // The client went away or stopped reading: the stream ends, the store keeps it.
                self.standalone = None;
                s.cursor = None;
                s.ahead.clear();
                return false;
            }
        }
        s.cursor = Some(cursor);
        !s.ahead.is_empty()
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
pub(super) fn settle<T: Send + 'static>(op: BackendFuture<T>, fallback: T) -> T {
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

/// Put one outgoing frame where it belongs: a reply (and related traffic) on its request's
/// response stream, standalone traffic on the GET stream; every event of an SSE stream is
/// recorded for resuming.
pub(super) fn route_frame(routes: &Mutex<Routes>, frame: Bytes, route: &Route) {
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
            if let Some(slot) = r.end_request(id) {
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
        _ if r.standalone_out().is_some() => {
            // Shared event store: numbered by the store, delivered by the GET stream's holder.
            r.touch();
            if let Some(out) = r.standalone_out().cloned() {
                out(frame);
            }
        }
        _ => {
            // Standalone traffic (or traffic of a request already answered): GET stream.
            let event = r.record(STANDALONE, frame, false);
            let delivered = match &r.standalone {
                Some(sink) => sink.try_send(event.clone()).is_ok(),
                None => false,
            };
            if !delivered && r.on_record().is_some() {
                // Another instance may hold the GET stream (it got the event from the bus), and
                // any instance's GET resumes it from the store.
                r.standalone = None;
            } else if !delivered {
                // No GET stream yet, or it broke, or its client fell a whole buffer behind (the
                // stream ends): hold the event for the next one.
                r.standalone = None;
                r.undelivered.push_back(event);
                while r.undelivered.len() > UNDELIVERED_KEPT {
                    r.undelivered.pop_front();
                }
            }
        }
    }
}

/// A GET-stream event arrived (from the bus) at `position`: delivered once, in store order,
/// by the stream open here; a gap is filled from the store first.
pub(super) fn standalone_arrived(routes: &Arc<Mutex<Routes>>, position: u64, event: Event) {
    let mut r = lock(routes);
    if r.standalone.is_none() {
        // Not read here: the store keeps it for whichever GET resumes.
        return;
    }
    r.shared().ahead.insert(position, event);
    let gap = r.drain_ahead();
    let s = r.shared();
    if gap && !s.filling && s.cursor.is_some() {
        s.filling = true;
        drop(r);
        fill_gap(routes.clone());
    }
}

/// Read the GET-stream log after the cursor and deliver it, then whatever waited beyond.
/// Events the store no longer has (evicted) are skipped over.
pub(super) fn fill_gap(routes: Arc<Mutex<Routes>>) {
    let (store, session, cursor) = {
        let mut r = lock(&routes);
        let cursor = r.shared().cursor;
        (r.settings.store.clone(), r.session.clone(), cursor)
    };
    let Some(cursor) = cursor else {
        lock(&routes).shared().filling = false;
        return;
    };
    let read = store.after(&session, "0", cursor);
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move {
        let kept = read.await.unwrap_or_else(|e| {
            tracing::warn!("event store: {e}");
            Vec::new()
        });
        let mut r = lock(&routes);
        let s = r.shared();
        s.filling = false;
        if s.cursor.is_none() {
            return;
        }
        for (p, data) in kept.into_iter().filter(|(_, d)| !d.is_empty()) {
            s.ahead.entry(p).or_insert(Event {
                id: format!("0-{p}"),
                data,
                is_reply: false,
            });
        }
        if r.drain_ahead() {
            // Still a gap: what it lacks is gone from the store; go on after it.
            let s = r.shared();
            if let (Some(&first), Some(_)) = (s.ahead.keys().next(), s.cursor) {
                s.cursor = Some(first - 1);
                r.drain_ahead();
            }
        }
    });
}
