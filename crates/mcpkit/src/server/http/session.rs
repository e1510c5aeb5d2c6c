//! One HTTP session: what serves its frames (the engine of a [`Server`], or a
//! [`SessionFactory`]'s backend) and its [`Routes`].

use crate::sync::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcpkit_types::jsonrpc::MessageRef;
use mcpkit_types::RequestId;
use tokio::sync::mpsc;

use super::cluster::Link;
use super::factory::{SessionFactory, SessionTransport};
use super::routes::{fill_gap, route_frame, settle, standalone_arrived, Event, RequestStream, Routes, STANDALONE};
use super::state::HttpState;
use crate::engine::Dispatcher;
use crate::server::backend::{EventId, SessionRecord, SessionUpdate};
use crate::server::{Preset, Server};
use crate::transport::channel::{self, Inbound, InboundSender};
use crate::transport::{Extensions, Frame, Route, VerifiedCaller};

/// How long an instance that resumed another's stream waits for the answer to "does an
/// instance still run its request?" before it ends the stream.
const OWNER_PROBE_WAIT: Duration = Duration::from_millis(1000);
/// How often it asks again while the stream goes on.
const OWNER_PROBE_EVERY: Duration = Duration::from_secs(2);

pub(super) struct HttpSession {
    pub(super) id: Arc<str>,
    /// The verified caller that opened it (authorization on): no one else may use it. Boxed:
    /// most sessions have none, and an idle session is mostly its fixed-size structs.
    pub(super) owner: Option<Box<VerifiedCaller>>,
    engine: Engine,
    routes: Arc<Mutex<Routes>>,
    /// The engine's view of the session (a [`Server`] backend only).
    served: Option<Arc<crate::server::session::Session>>,
    /// What instances sharing backends keep beside (see [`super::cluster`]); boxed, as a lone
    /// instance has none.
    pub(super) link: Option<Box<Link>>,
}

/// What serves a session's frames.
enum Engine {
    /// The engine serving a [`Server`], driven by the POSTs themselves: an idle session is
    /// this struct and its routes, no task and no queue.
    Direct(Dispatcher),
    /// A custom backend (see [`SessionFactory`]) reading a channel.
    Factory {
        inbound: InboundSender,
        stop: tokio_util::sync::CancellationToken,
    },
}

/// What serves the sessions of an endpoint.
#[derive(Clone)]
pub(super) enum Backend {
    /// The engine, serving this server.
    Server(Server),
    /// Something else: each session's frames are handed to it.
    Factory(Arc<dyn SessionFactory>),
}

/// What a resumed GET gets: the missed events, and a live sink if the stream goes on.
pub(super) struct Resumed {
    pub(super) missed: Vec<Event>,
    pub(super) live: Option<mpsc::Receiver<Event>>,
}

impl HttpSession {
    /// Start a session of the endpoint `state`, belonging to `owner`: the engine serving its
    /// server (already negotiated when `preset` is given), or its factory's backend.
    pub(super) fn start(
        id: Arc<str>,
        state: &HttpState,
        preset: Option<Preset>,
        owner: Option<VerifiedCaller>,
    ) -> Arc<HttpSession> {
        HttpSession::start_with(id, state, preset, true, owner)
    }

    /// Start the throwaway session of one sessionless request. Nothing can resume its stream
    /// (there is no session to GET on), so a handler's wish to close the stream early is
    /// ignored: the stream stays open until the result.
    pub(super) fn start_sessionless(id: Arc<str>, state: &HttpState, preset: Option<Preset>) -> Arc<HttpSession> {
        HttpSession::start_with(id, state, preset, false, None)
    }

    fn start_with(
        id: Arc<str>,
        state: &HttpState,
        preset: Option<Preset>,
        resumable: bool,
        owner: Option<VerifiedCaller>,
    ) -> Arc<HttpSession> {
        let link = state
            .cluster
            .as_ref()
            .filter(|_| resumable)
            .map(|c| Link::new(c.clone()));
        let mut table = Routes::new(id.clone(), &state.routes);
        if let Some(link) = &link {
            let (cluster, session) = (link.cluster.clone(), id.clone());
            table.shared().on_record = Some(Arc::new(
                move |stream: &str, position: u64, data: &Bytes, is_reply: bool| {
                    cluster.stream_event(&session, stream, position, data, is_reply);
                },
            ));
            let (cluster, session) = (link.cluster.clone(), id.clone());
            table.shared().standalone_out = Some(Arc::new(move |data: Bytes| cluster.standalone_event(&session, data)));
        }
        let routes = Arc::new(Mutex::new(table));
        let tap = state.tap.clone();
        let mut served = None;
        let engine = match &state.backend {
            Backend::Server(server) => {
                let sink_routes = routes.clone();
                let sink = Box::new(move |frame: Vec<u8>, route: Route| {
                    if !resumable && matches!(route, Route::CloseStream(_)) {
                        return;
                    }
                    tap.outgoing(&frame);
                    route_frame(&sink_routes, frame.into(), &route)
                });
                let (dispatcher, session) = server.start_direct(sink, preset);
                if let Some(link) = &link {
                    dispatcher.peer().set_request_id_base(link.cluster.id_base());
                    session.observe_with(link.observer(id.clone()));
                    // The cluster tells the session of catalogue changes, through the store
                    // (see `Cluster::notify_sessions`), wherever its GET stream is.
                    session.set_hears_broadcasts(false);
                }
                if resumable {
                    dispatcher.peer().telemetry_scope().set_session_id(id.clone());
                }
                served = Some(session);
                Engine::Direct(dispatcher)
            }
            Backend::Factory(factory) => {
                let (inbound, rx) = channel::channel();
                let transport = SessionTransport::new(rx, routes.clone(), tap);
                Engine::Factory {
                    inbound,
                    stop: factory.start(&id, transport),
                }
            }
        };
        Arc::new(HttpSession {
            id,
            owner: owner.map(Box::new),
            engine,
            routes,
            served,
            link: link.map(Box::new),
        })
    }

    pub(super) fn touch(&self) {
        lock(&self.routes).touch();
    }

    /// How long the session has been idle: zero while anything is in flight or streaming,
    /// otherwise the time since its last request or event.
    pub(super) fn idle(&self) -> Duration {
        let mut r = lock(&self.routes);
        if !r.requests.is_empty() || r.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            // Busy now: idleness will count from here once it stops.
            r.touch();
            return Duration::ZERO;
        }
        r.settings.clock.now().saturating_duration_since(r.last_activity)
    }

    /// Open the response stream of a request: its receiver and its stream number. The stream
    /// is not recorded until it becomes SSE ([`HttpSession::prime`]). `None` when `id` is already
    /// in flight on this session (checked and registered under one lock, so two concurrent POSTs
    /// with the same id cannot both pass).
    pub(super) fn open_request(&self, id: RequestId) -> Option<(mpsc::Receiver<Event>, u64)> {
        let mut r = lock(&self.routes);
        if r.requests.contains_key(&id) {
            return None;
        }
        let (tx, rx) = r.channel();
        let stream = r.next_stream;
        r.next_stream += 1;
        r.requests.insert(id, RequestStream { stream, sink: Some(tx) });
        Some((rx, stream))
    }

    /// The request's answer will be an SSE stream: its priming event (an id to resume from, no
    /// data). Every event of the stream from now on is recorded for resuming.
    pub(super) fn prime(&self, stream: u64) -> Event {
        lock(&self.routes).prime(stream)
    }

    /// Hand a message (read from `frame`) to the engine, with what the HTTP layer knows about
    /// its request; `false` when the session has ended.
    pub(super) fn deliver(&self, frame: &[u8], message: MessageRef<'_>, extensions: Extensions) -> bool {
        match &self.engine {
            Engine::Direct(d) => {
                if d.is_closed() {
                    return false;
                }
                d.on_message(message, extensions);
                true
            }
            Engine::Factory { inbound, .. } => inbound
                .send(Inbound::Frame(Frame::Message(frame.to_vec()), extensions))
                .is_ok(),
        }
    }

    /// Open the standalone stream. `None` when one is already open.
    pub(super) fn open_standalone(&self) -> Option<(mpsc::Receiver<Event>, Event)> {
        let mut r = lock(&self.routes);
        if r.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let (tx, rx) = r.channel();
        let prime = r.record(STANDALONE, Bytes::new(), false);
        let held: Vec<Event> = r.undelivered.drain(..).collect();
        // More held events than the buffer takes: this stream ends after what fits, and the
        // client resumes the rest from the log.
        let fits = held.into_iter().all(|event| tx.try_send(event).is_ok());
        r.standalone = fits.then_some(tx);
        Some((rx, prime))
    }

    /// Resume after `last_event_id`: replay what that stream missed (nothing from other
    /// streams), then keep delivering if the stream is still open. `None` as well when it
    /// names the standalone stream while a GET still holds it: a resume never takes over an
    /// open GET stream (the caller answers 409, as for a second plain GET).
    pub(super) fn resume(&self, last_event_id: &str) -> Option<Resumed> {
        let EventId { stream: name, position } = EventId::parse(last_event_id)?;
        let mut r = lock(&self.routes);
        let stream = r.stream_named(&name)?;
        if stream == STANDALONE && r.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return None;
        }
        let finished = r.logs.get(&stream)?.finished;
        let kept = settle(r.settings.store.after(&r.session, &name, position), Vec::new());
        let missed: Vec<Event> = kept
            .into_iter()
            .map(|(position, data)| Event {
                id: format!("{name}-{position}"),
                data,
                is_reply: false,
            })
            .collect();
        let live = if stream == STANDALONE {
            let (tx, rx) = r.channel();
            r.standalone = Some(tx);
            // The replay already covers what was held back for the next GET.
            r.undelivered.clear();
            Some(rx)
        } else if finished {
            None
        } else {
            let (tx, rx) = r.channel();
            let slot = r.requests.values_mut().find(|s| s.stream == stream)?;
            slot.sink = Some(tx);
            Some(rx)
        };
        Some(Resumed { missed, live })
    }

    /// End the session here: the engine stops and every open stream ends. A session of
    /// instances sharing backends only leaves this instance (its record and events stay for
    /// the others; [`Link::end`] ends it for all).
    pub(super) fn close(&self) {
        match &self.engine {
            Engine::Direct(d) => d.shutdown(),
            Engine::Factory { stop, .. } => stop.cancel(),
        }
        let mut r = lock(&self.routes);
        r.clear_streams();
        if let Some(s) = r.shared.as_deref_mut() {
            s.remote.clear();
        }
        r.logs.clear();
        match &self.link {
            Some(link) => link.stop.cancel(),
            None => settle(r.settings.store.remove_session(&r.session), ()),
        }
    }

    /// Whether request `id` runs on this instance.
    pub(super) fn runs(&self, id: &RequestId) -> bool {
        lock(&self.routes).requests.contains_key(id)
    }

    /// A change of the record made on another instance.
    pub(super) fn apply(&self, change: &SessionUpdate) {
        if let Some(s) = &self.served {
            s.apply(change);
        }
    }

    /// Take the record's level and subscriptions (a session rebuilt on this instance).
    pub(super) fn restore(&self, record: &SessionRecord) {
        if let Some(s) = &self.served {
            s.restore(record);
        }
    }

    /// Deliver server-wide notifications to this session from this instance, or not.
    pub(super) fn set_hears_broadcasts(&self, on: bool) {
        if let Some(s) = &self.served {
            s.set_hears_broadcasts(on);
        }
    }

    /// An event another instance recorded on stream `name`: to the GET stream if it is the
    /// standalone one and open here, or to the resumed stream of that name (once, in order).
    pub(super) fn forward_event(&self, name: &str, position: u64, event: Event) {
        if name == "0" {
            standalone_arrived(&self.routes, position, event);
            return;
        }
        let mut r = lock(&self.routes);
        let remote = &mut r.shared().remote;
        let Some((last, sink)) = remote.get_mut(name) else {
            return;
        };
        if position <= *last {
            return;
        }
        *last = position;
        let end = event.is_reply;
        if sink.try_send(event).is_err() || end {
            remote.remove(name);
        }
    }

    /// [`HttpSession::resume`] for instances sharing the event store: the stream may be this
    /// instance's or another's, and the store may answer later. The live sink is in place
    /// before the store is read, and what it got meanwhile is cut to what the replay lacks.
    pub(super) async fn resume_shared(&self, last_event_id: &str) -> Option<Resumed> {
        self.link.as_ref()?;
        let EventId { stream: name, position } = EventId::parse(last_event_id)?;
        if &*name == "0" {
            return self.open_standalone_shared(Some(position)).await;
        }
        let (tx, mut rx) = lock(&self.routes).channel();
        let (store, local) = {
            let mut r = lock(&self.routes);
            let local = r.stream_named(&name);
            match local {
                Some(n) => {
                    let finished = r.logs.get(&n).is_none_or(|l| l.finished);
                    if !finished {
                        let slot = r.requests.values_mut().find(|s| s.stream == n)?;
                        slot.sink = Some(tx);
                    }
                }
                None => {
                    r.shared().remote.insert(name.clone(), (position, tx));
                }
            }
            (r.settings.store.clone(), local)
        };
        // Another instance's stream must show it exists: the event the client names (its
        // marker at least) is still in the store.
        let from = if local.is_none() {
            position.saturating_sub(1)
        } else {
            position
        };
        let kept = store.after(&self.id, &name, from).await.unwrap_or_default();
        if local.is_none() && kept.first().is_none_or(|(p, _)| *p != position) {
            lock(&self.routes).remove_remote(&name);
            return None;
        }
        let mut finished = false;
        let mut seen = position;
        let mut missed = Vec::new();
        for (p, data) in kept.into_iter().filter(|(p, d)| *p > position && !d.is_empty()) {
            let is_reply = matches!(mcpkit_types::jsonrpc::parse(&data), Ok(MessageRef::Response(_)));
            finished |= is_reply;
            seen = p;
            missed.push(Event {
                id: format!("{name}-{p}"),
                data,
                is_reply,
            });
        }
        while let Ok(event) = rx.try_recv() {
            let p = EventId::parse(&event.id).map_or(u64::MAX, |e| e.position);
            if p > seen {
                finished |= event.is_reply;
                missed.push(event);
            }
        }
        if local.is_none() {
            let mut r = lock(&self.routes);
            match r.shared().remote.get_mut(&name) {
                Some(entry) if !finished => {
                    entry.0 = entry.0.max(seen);
                    drop(r);
                    self.watch_owner(name.clone());
                }
                _ => r.remove_remote(&name),
            }
        }
        let live = (!finished).then_some(rx);
        Some(Resumed { missed, live })
    }

    /// Whether the request of stream `name` runs here (its stream is not finished).
    pub(super) fn runs_stream(&self, name: &str) -> bool {
        let r = lock(&self.routes);
        r.stream_named(name)
            .filter(|n| *n != STANDALONE)
            .and_then(|n| r.logs.get(&n))
            .is_some_and(|l| !l.finished)
    }

    /// The instance running the request of stream `name` (resumed here) answered a probe.
    pub(super) fn stream_alive(&self, name: &str) {
        if let Some(n) = lock(&self.routes).shared().alive.get_mut(name) {
            *n += 1;
        }
    }

    /// Stream `name` of another instance was resumed here and goes on live: while it does, ask
    /// every [`OWNER_PROBE_EVERY`] whether an instance still runs its request. When none
    /// answers within [`OWNER_PROBE_WAIT`] (its instance died, and the request with it), the
    /// stream ends after what it delivered: its result cannot come any more.
    fn watch_owner(&self, name: Arc<str>) {
        let Some(link) = &self.link else { return };
        let (cluster, routes, session) = (link.cluster.clone(), self.routes.clone(), self.id.clone());
        lock(&routes).shared().alive.insert(name.clone(), 0);
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            loop {
                let before = {
                    let mut r = lock(&routes);
                    let s = r.shared();
                    match (s.remote.contains_key(&name), s.alive.get(&name)) {
                        (true, Some(n)) => *n,
                        _ => return,
                    }
                };
                if let Err(e) = cluster.probe(&session, &name).await {
                    tracing::debug!("probing stream {name}: {e}");
                }
                tokio::time::sleep(OWNER_PROBE_WAIT).await;
                {
                    let mut r = lock(&routes);
                    let s = r.shared();
                    if !s.remote.contains_key(&name) {
                        s.alive.remove(&name);
                        return;
                    }
                    if s.alive.get(&name).copied().unwrap_or(0) == before {
                        tracing::debug!("stream {name}: no instance runs its request; it ends");
                        r.remove_remote(&name);
                        return;
                    }
                }
                tokio::time::sleep(OWNER_PROBE_EVERY).await;
            }
        });
    }

    /// Open the GET stream of a session of instances sharing the event store: fresh (`from`
    /// `None`: a priming event naming the log's latest position) or resumed after `from` (what
    /// the log kept after it). From then on every event of the log is delivered once, in store
    /// order, whichever instance appended it. `None` while a GET stream is open here.
    pub(super) async fn open_standalone_shared(&self, from: Option<u64>) -> Option<Resumed> {
        let (store, rx) = {
            let mut r = lock(&self.routes);
            if r.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
                return None;
            }
            let (tx, rx) = r.channel();
            r.standalone = Some(tx);
            let s = r.shared();
            s.cursor = None;
            s.ahead.clear();
            s.filling = false;
            (r.settings.store.clone(), rx)
        };
        // What arrives from the bus meanwhile waits in `ahead`, cut to what the read lacks.
        let kept = store.after(&self.id, "0", from.unwrap_or(0)).await.unwrap_or_else(|e| {
            tracing::warn!("event store: {e}");
            Vec::new()
        });
        let latest = kept.last().map_or(0, |(p, _)| *p).max(from.unwrap_or(0));
        let missed = match from {
            Some(_) => kept
                .into_iter()
                .filter(|(_, d)| !d.is_empty())
                .map(|(p, data)| Event {
                    id: format!("0-{p}"),
                    data,
                    is_reply: false,
                })
                .collect(),
            None => vec![Event {
                id: format!("0-{latest}"),
                data: Bytes::new(),
                is_reply: false,
            }],
        };
        let gap = {
            let mut r = lock(&self.routes);
            r.shared().cursor = Some(latest);
            let gap = r.drain_ahead();
            let s = r.shared();
            if gap && !s.filling {
                s.filling = true;
                true
            } else {
                false
            }
        };
        if gap {
            fill_gap(self.routes.clone());
        }
        Some(Resumed { missed, live: Some(rx) })
    }

    /// Wait for the record writes and bus messages this session's last request made.
    pub(super) async fn flush(&self) {
        if let Some(link) = &self.link {
            link.flush().await;
        }
    }

    /// The engine's negotiation, for the session record.
    pub(super) fn negotiation(&self) -> Option<crate::server::backend::Negotiation> {
        let s = self.served.as_ref().filter(|s| s.is_negotiated())?;
        Some(crate::server::backend::Negotiation {
            protocol_version: s.version().as_str().to_owned(),
            client_info: s.client_info().unwrap_or_default(),
            client_capabilities: s.client_capabilities(),
        })
    }

    /// The request's reply went out as plain JSON: nothing to resume.
    pub(super) fn forget_stream(&self, stream: u64) {
        lock(&self.routes).forget(stream);
    }
}

/// Ends its session when dropped: a sessionless request's session lives exactly as long as the
/// response that answers it (its SSE stream, when it has one), and ends with it whether the
/// result went out or the client went away.
pub(super) struct CloseOnDrop(pub(super) Arc<HttpSession>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}
