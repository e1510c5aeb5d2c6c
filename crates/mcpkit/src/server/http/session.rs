//! One HTTP session: what serves its frames (the engine of a [`Server`], or a
//! [`SessionFactory`]'s service) and its [`StreamTable`].

use crate::sync::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpkit_types::jsonrpc::MessageRef;
use mcpkit_types::{ProtocolVersion, RequestId};
use tokio::sync::mpsc;

use super::factory::{SessionFactory, SessionTransport};
use super::inspector::Inspector;
use super::streams::{self, end_stream, route_frame, Event, RequestStream, Resumed, StreamSettings, StreamTable};
use crate::engine::{Dispatcher, Outgoing, StreamEnd};
use crate::server::backend::{SessionRecord, SessionUpdate};
use crate::server::client_state::Observer;
use crate::server::{Preset, Server};
use crate::transport::channel::{self, Inbound, InboundSender};
use crate::transport::{Extensions, Frame, VerifiedCaller};

pub(super) struct HttpSession {
    pub(super) id: Arc<str>,
    /// The verified caller that opened it (authorization on): no one else may use it. Boxed:
    /// most sessions have none, and an idle session is mostly its fixed-size structs.
    pub(super) owner: Option<Box<VerifiedCaller>>,
    engine: Engine,
    pub(super) streams: Arc<Mutex<StreamTable>>,
    /// The engine's view of the session (a [`Server`] source only).
    served: Option<Arc<crate::server::client_state::ClientState>>,
}

/// What serves a session's frames.
enum Engine {
    /// The engine serving a [`Server`], driven by the POSTs themselves: an idle session is
    /// this struct and its streams, no task and no queue.
    Direct(Dispatcher),
    /// A custom service (see [`SessionFactory`]) reading a channel.
    Factory {
        inbound: InboundSender,
        stop: tokio_util::sync::CancellationToken,
    },
}

/// What serves the sessions of an endpoint.
#[derive(Clone)]
pub(super) enum SessionSource {
    /// The engine, serving this server.
    Server(Server),
    /// Something else: each session's frames are handed to it.
    Factory(Arc<dyn SessionFactory>),
}

/// A session, or the throwaway session of one sessionless request.
enum Kind {
    /// Belonging to its verified caller, if any.
    Session(Option<VerifiedCaller>),
    Sessionless,
}

/// What starts the sessions of an endpoint, shared by all of them.
pub(super) struct Launcher {
    pub(super) source: SessionSource,
    /// How sessions keep their streams.
    pub(super) streams: Arc<StreamSettings>,
    /// How the throwaway session of a sessionless request keeps its streams: in this
    /// instance's log alone, as nothing can resume them elsewhere.
    pub(super) sessionless_streams: Arc<StreamSettings>,
    /// Shown every message written.
    pub(super) inspector: Inspector,
}

impl Launcher {
    /// Start a session belonging to `owner`: the engine serving its server (already
    /// negotiated when `preset` is given), or its factory's service.
    pub(super) fn start(
        &self,
        id: Arc<str>,
        preset: Option<Preset>,
        owner: Option<VerifiedCaller>,
    ) -> Arc<HttpSession> {
        self.start_with(id, preset, Kind::Session(owner))
    }

    /// Start the throwaway session of one sessionless request. Nothing can resume its stream
    /// (there is no session to GET on), so a handler's wish to close the stream early is
    /// ignored: the stream stays open until the result.
    pub(super) fn start_sessionless(&self, id: Arc<str>, preset: Option<Preset>) -> Arc<HttpSession> {
        self.start_with(id, preset, Kind::Sessionless)
    }

    /// Where this endpoint's metrics go: its server's telemetry (none for a factory's).
    pub(super) fn telemetry(&self) -> crate::telemetry::Telemetry {
        match &self.source {
            SessionSource::Server(s) => s.telemetry().clone(),
            SessionSource::Factory(_) => crate::telemetry::Telemetry::default(),
        }
    }

    fn start_with(&self, id: Arc<str>, preset: Option<Preset>, kind: Kind) -> Arc<HttpSession> {
        let (resumable, owner, settings) = match kind {
            Kind::Session(owner) => (true, owner, &self.streams),
            Kind::Sessionless => (false, None, &self.sessionless_streams),
        };
        let streams = Arc::new(Mutex::new(StreamTable::new(id.clone(), settings)));
        let inspector = self.inspector.clone();
        let mut served = None;
        let engine = match &self.source {
            SessionSource::Server(server) => {
                let sink_streams = streams.clone();
                let sink = Box::new(move |out: Outgoing| match out {
                    Outgoing::Frame(frame, route) => {
                        inspector.outgoing(&frame);
                        route_frame(&sink_streams, frame.into(), &route)
                    }
                    // Without a session id the client cannot resume a closed stream.
                    Outgoing::End(StreamEnd::Close(_)) if !resumable => {}
                    Outgoing::End(end) => end_stream(&sink_streams, &end),
                });
                let (dispatcher, session) = server.start_direct(sink, preset);
                if resumable {
                    dispatcher.peer().telemetry_scope().set_session_id(id.clone());
                }
                served = Some(session);
                Engine::Direct(dispatcher)
            }
            SessionSource::Factory(factory) => {
                let (inbound, rx) = channel::channel();
                let transport = SessionTransport::new(rx, streams.clone(), inspector);
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
            streams,
            served,
        })
    }
}

impl HttpSession {
    pub(super) fn touch(&self) {
        lock(&self.streams).touch();
    }

    /// How long the session has been idle: zero while anything is in flight or streaming,
    /// otherwise the time since its last request or event.
    pub(super) fn idle(&self) -> Duration {
        let mut r = lock(&self.streams);
        if !r.requests.is_empty() || r.standalone_open() {
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
        let mut r = lock(&self.streams);
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
        lock(&self.streams).prime(stream)
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

    /// Open the session's GET stream: `None` while one is open (see [`streams::open_standalone`]).
    pub(super) async fn open_standalone(&self) -> Option<Resumed> {
        streams::open_standalone(&self.streams).await
    }

    /// Resume after `last_event_id`: what that stream missed (nothing from other streams), and
    /// the stream itself if it goes on. `None` as well when it names the standalone stream
    /// while a GET still holds it: a resume never takes over an open GET stream (the caller
    /// answers 409, as for a second plain GET).
    pub(super) async fn resume(&self, last_event_id: &str) -> Option<Resumed> {
        streams::resume(&self.streams, last_event_id).await
    }

    /// End the session here: the engine stops and every open stream ends (see
    /// [`streams::close`]). Ending it for every instance is the session directory's.
    pub(super) fn close(&self) {
        match &self.engine {
            Engine::Direct(d) => d.shutdown(),
            Engine::Factory { stop, .. } => stop.cancel(),
        }
        streams::close(&self.streams);
    }

    /// Whether request `id` runs on this instance.
    pub(super) fn runs(&self, id: &RequestId) -> bool {
        lock(&self.streams).requests.contains_key(id)
    }

    /// Whether the session's client declared extension `id` (false for a factory's session).
    pub(super) fn client_declares(&self, id: &str) -> bool {
        self.served.as_ref().is_some_and(|s| s.declares_extension(id))
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

    /// Number this session's server→client requests from `base` (ids unique among instances).
    pub(super) fn set_request_id_base(&self, base: i64) {
        if let Engine::Direct(d) = &self.engine {
            d.peer().set_request_id_base(base);
        }
    }

    /// Tell `observer` of every change of the engine's session from now on.
    pub(super) fn observe_with(&self, observer: Observer) {
        if let Some(s) = &self.served {
            s.observe_with(observer);
        }
    }

    /// Deliver server-wide notifications to this session from this instance, or not.
    pub(super) fn set_hears_broadcasts(&self, on: bool) {
        if let Some(s) = &self.served {
            s.set_hears_broadcasts(on);
        }
    }

    /// Whether the session serves a server whose `initialize` has not negotiated it (after the
    /// answer: it was refused). A factory's session is never said to be.
    pub(super) fn not_negotiated(&self) -> bool {
        self.served.as_ref().is_some_and(|s| !s.is_negotiated())
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
        lock(&self.streams).forget(stream);
    }
}

/// The preset that rebuilds a negotiated session from its record.
pub(super) fn preset_of(record: &SessionRecord) -> Option<Preset> {
    let version: ProtocolVersion = record.protocol_version.as_deref()?.parse().ok()?;
    Some(Preset {
        version,
        capabilities: record.client_capabilities.clone(),
        client_info: record.client_info.clone().unwrap_or_default(),
    })
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
