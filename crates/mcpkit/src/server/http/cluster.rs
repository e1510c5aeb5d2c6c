//! One server out of many instances: what the endpoint does when it shares [`Backends`] with
//! other instances ([`super::HttpServer::scale_out`]). The only part of the HTTP front end that
//! knows other instances exist: the rest sees the shared halves of its session directory
//! ([`SharedDirectory`]) and of its stream log ([`SharedLog`]), both implemented here by
//! [`Cluster`] (the streams' side in `cluster_streams`).
//!
//! - A session is a record in the session store: created (under the cluster-wide caps, the
//!   total and each client's share) by the instance that answered `initialize`, rebuilt from
//!   the record by any other instance the first time a request of it lands there (then cached
//!   in the local table), its changes (log level, subscriptions) written to the record and told
//!   to the other instances caching it. Its TTL is refreshed lazily, at most every eighth of
//!   the idle timeout.
//! - Every instance caching a session subscribes to the session's bus address. What travels
//!   there: client messages one instance received for another (the response to a server→client
//!   request, a `notifications/cancelled`), record changes, the session's end, every event of
//!   its SSE streams (so a stream resumed on another instance goes on live).
//! - The GET stream's events are appended to the event store by whichever instance produces
//!   them (the store numbers them), then told on the bus; the instance holding the GET stream
//!   delivers the log in store order, filling a gap from the store. A GET resumed elsewhere
//!   after its instance died replays what the log got meanwhile, each event once.
//! - Server→client request ids carry the instance's tag in their high bits (below 2^53, so
//!   every JSON client keeps them exact): a response is forwarded only when its id names
//!   another instance.
//! - Catalogue changes (list_changed, resources/updated): the instance where one is made puts
//!   its notification in the GET-stream log of every live session of the deployment (listed
//!   by the session store) and tells every instance, whose `subscriptions/listen` streams get
//!   it.
//! - Switchable items (`ToolDef::switched_off`, …): their states live in the switch store; an
//!   instance told of a tools or prompts change reads the store (when it serves switchable
//!   items) before its listeners hear of it.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use mcpkit_types::jsonrpc::{self, MessageRef};
use mcpkit_types::method::{Cancelled, NotificationMethod};
use mcpkit_types::RequestId;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::admission::{Client, Refused};
use super::cluster_instance::{self, install_keys, Body, Envelope, Instance};
use super::cluster_streams::{self, Probe, SessionStreams};
use super::directory::{Refusal, ScaleOut, SharedDirectory};
use super::session::{preset_of, HttpSession, Launcher};
use super::streams::{now_or_later, Event, Recorded, Resumed, SharedLog, StreamTable};
use super::table::{plausible_session_id, SessionTable};
use crate::server::backend::{
    Address, Admitted, BackendError, BackendFuture, Backends, SessionLimits, SessionRecord, SessionUpdate,
};
use crate::server::client_state::Observer;
use crate::server::Change;
use crate::server::Server;
use crate::transport::Extensions;

/// The `backend` label of a session store failure.
const SESSION_STORE: &str = "session_store";
/// The `backend` label of a bus failure.
const BUS: &str = "bus";

/// An endpoint's scale-out over `backends`: what [`super::HttpServer::scale_out`] plugs in.
pub(super) fn scale_out(backends: Backends) -> ScaleOut {
    let events = backends.events.clone();
    let cluster = Cluster::new(backends);
    ScaleOut {
        directory: cluster.clone(),
        log: cluster,
        events,
    }
}

/// The shared backends of an endpoint, this instance's tag, and the sessions it follows.
pub(super) struct Cluster {
    backends: Backends,
    /// 1 to 2^20 − 1, from the instance id: the high bits of this instance's request ids.
    tag: u64,
    /// The sessions this instance serves, by id.
    members: Mutex<HashMap<Arc<str>, Arc<Member>>>,
    /// Itself, for the tasks it starts.
    me: Weak<Cluster>,
}

/// What this instance keeps beside one session it serves.
struct Member {
    streams: Arc<SessionStreams>,
    last_touch: Mutex<Instant>,
    /// Record writes and bus messages a request made, awaited before its answer goes out (so
    /// the next request, wherever it lands, sees them).
    pending: Arc<Mutex<Vec<Pending>>>,
    /// Ends the session's bus subscription.
    stop: CancellationToken,
}

/// A write or a message a request made, not yet confirmed.
type Pending = BoxFuture<'static, Result<(), BackendError>>;

impl Cluster {
    fn new(backends: Backends) -> Arc<Cluster> {
        // FNV-1a of the instance id, folded into 20 bits, never 0 (0 is "no tag").
        let hash = backends.instance_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let tag = (hash % ((1 << 20) - 1)) + 1;
        Arc::new_cyclic(|me| Cluster {
            backends,
            tag,
            members: Mutex::default(),
            me: me.clone(),
        })
    }

    /// The member of the session whose streams are `table`, made now if it has none; `None`
    /// when the member of that id is another session's (a copy rebuilt twice, the other kept).
    fn member(&self, table: &Arc<Mutex<StreamTable>>) -> Option<Arc<Member>> {
        let id = lock(table).session.clone();
        let mut members = lock(&self.members);
        if let Some(m) = members.get(&id) {
            return Arc::ptr_eq(&m.streams.table, table).then(|| m.clone());
        }
        let member = Arc::new(Member {
            streams: Arc::new(SessionStreams::new(table.clone())),
            last_touch: Mutex::new(Instant::now()),
            pending: Arc::default(),
            stop: CancellationToken::new(),
        });
        members.insert(id, member.clone());
        Some(member)
    }

    fn member_of(&self, id: &str) -> Option<Arc<Member>> {
        lock(&self.members).get(id).cloned()
    }

    /// Make `session` one of this instance's: its request ids carry the tag, its changes go to
    /// the record and the other instances, and catalogue changes reach it through the store
    /// (see [`Cluster::notify_sessions`]), wherever its GET stream is.
    fn attach(&self, session: &HttpSession) -> Option<Arc<Member>> {
        let member = self.member(&session.streams)?;
        session.set_request_id_base(i64::try_from(self.tag << 32).unwrap_or(0));
        session.observe_with(self.observer(session.id.clone(), member.pending.clone()));
        session.set_hears_broadcasts(false);
        Some(member)
    }

    /// The observer of the engine's session: each change goes to the record and to the other
    /// instances, and the request that made it waits for both.
    fn observer(&self, session: Arc<str>, pending: Arc<Mutex<Vec<Pending>>>) -> Observer {
        let cluster = self.me.clone();
        Observer(Arc::new(move |change: SessionUpdate| {
            let Some(cluster) = cluster.upgrade() else { return };
            let write = cluster.backends.sessions.update(&session, change.clone());
            let tell = cluster.publish(&session, Body::Changed(change));
            lock(&pending).push(Box::pin(async move {
                write.await?;
                tell.await
            }));
        }))
    }

    /// The instance whose session made request `id`: its tag, when the id has one.
    fn tag_of(id: &RequestId) -> Option<u64> {
        match id {
            RequestId::Number(n) => u64::try_from(*n)
                .ok()
                .map(|n| n >> 32)
                .filter(|t| (1..1 << 20).contains(t)),
            _ => None,
        }
    }

    fn publish(&self, session: &str, body: Body) -> BoxFuture<'static, Result<(), BackendError>> {
        let envelope = Envelope {
            from: self.backends.instance_id.to_string(),
            body,
        };
        let bytes = serde_json::to_vec(&envelope).map(Bytes::from).unwrap_or_default();
        let to = match &envelope.body {
            Body::Catalogue(_) => Address::All,
            _ => Address::Session(session.to_owned()),
        };
        let op = self.backends.bus.publish(&to, bytes);
        Box::pin(op)
    }

    /// Publish without waiting (in call order; failures are logged).
    fn send(&self, session: &str, body: Body) {
        now_or_later(self.publish(session, body), ());
    }

    /// A standalone frame of `session` (a catalogue change, a log message, a request to the
    /// client): appended to the session's GET-stream log, where the store gives it its
    /// position (one numbering whichever instances write), then told to whichever instance
    /// holds the GET stream, which delivers the log in order. Nothing waits for it.
    fn standalone_event(&self, session: &str, data: Bytes) {
        let append = self.backends.events.append(session, "0", data.clone());
        let (cluster, session) = (self.me.clone(), session.to_owned());
        now_or_later(
            Box::pin(async move {
                let position = append.await?;
                let Some(cluster) = cluster.upgrade() else {
                    return Ok(());
                };
                let body = Body::StreamEvent {
                    stream: "0".to_owned(),
                    position,
                    data: String::from_utf8_lossy(&data).into_owned(),
                    is_reply: false,
                };
                cluster.publish(&session, body).await
            }),
            (),
        );
    }

    /// A catalogue change made here: its notification goes into the GET-stream log of every
    /// live session of the deployment it concerns (initialized; for `resources/updated`,
    /// subscribed to the resource), so that a session whose GET stream's instance is down
    /// gets it when it resumes elsewhere. One store read (the live records) per change.
    fn notify_sessions(&self, change: Change) {
        let uri = match &change {
            Change::ResourceUpdated(uri) => Some(uri.to_string()),
            _ => None,
        };
        let mut frame = serde_json::json!({"jsonrpc": "2.0", "method": change.method()});
        if let Some(uri) = &uri {
            frame["params"] = serde_json::json!({ "uri": uri });
        }
        let frame = Bytes::from(serde_json::to_vec(&frame).unwrap_or_default());
        let (cluster, live) = (self.me.clone(), self.backends.sessions.live());
        now_or_later(
            Box::pin(async move {
                let records = live.await?;
                let Some(cluster) = cluster.upgrade() else {
                    return Ok(());
                };
                for record in records {
                    let concerned = uri.as_ref().is_none_or(|u| record.subscriptions.contains(u));
                    if record.initialized && concerned {
                        cluster.standalone_event(&record.id, frame.clone());
                    }
                }
                Ok(())
            }),
            (),
        );
    }

    /// Asks the instances of a session whether one still runs the request of a stream.
    fn prober(&self) -> Probe {
        let cluster = self.me.clone();
        Arc::new(move |session: &str, stream: &str| match cluster.upgrade() {
            Some(c) => c.publish(
                session,
                Body::StreamProbe {
                    stream: stream.to_owned(),
                },
            ),
            None => Box::pin(std::future::ready(Ok(()))),
        })
    }

    /// Subscribe to `session`'s bus address and serve what arrives until the session leaves
    /// this instance (a session ended elsewhere leaves `table`).
    async fn follow(
        &self,
        table: Weak<SessionTable>,
        session: &Arc<HttpSession>,
        member: &Member,
    ) -> Result<(), BackendError> {
        let address = Address::Session(session.id.to_string());
        let mut sub = self.backends.bus.subscribe(&address).await?;
        let (weak, stop) = (Arc::downgrade(session), member.stop.clone());
        let (me, tag, cluster) = (self.backends.instance_id.clone(), self.tag, self.me.clone());
        let streams = member.streams.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    _ = stop.cancelled() => return,
                    m = sub.recv() => m,
                };
                let Some(message) = message else {
                    tracing::warn!("bus subscription ended");
                    return;
                };
                let Ok(envelope) = serde_json::from_slice::<Envelope>(&message) else {
                    continue;
                };
                // This instance's own GET-stream events come back too: the GET stream may be
                // here.
                let standalone = matches!(&envelope.body, Body::StreamEvent { stream, .. } if stream == "0");
                if *envelope.from == *me && !standalone {
                    continue;
                }
                let Some(session) = weak.upgrade() else { return };
                match envelope.body {
                    Body::ClientFrame { frame, tag: to } => {
                        if to.is_none_or(|t| t == tag) {
                            if let Ok(m) = jsonrpc::parse(frame.as_bytes()) {
                                session.deliver(frame.as_bytes(), m, Extensions::default());
                            }
                        }
                    }
                    Body::Changed(change) => session.apply(&change),
                    Body::Ended => {
                        if let Some(table) = table.upgrade() {
                            table.remove(&session);
                        }
                        return;
                    }
                    Body::StreamEvent {
                        stream,
                        position,
                        data,
                        is_reply,
                    } => {
                        let event = Event {
                            id: format!("{stream}-{position}"),
                            data: Bytes::from(data),
                            is_reply,
                        };
                        cluster_streams::arrived(&streams, &stream, position, event);
                    }
                    Body::StreamProbe { stream } => {
                        if cluster_streams::runs(&session.streams, &stream) {
                            if let Some(c) = cluster.upgrade() {
                                c.send(&session.id, Body::StreamAlive { stream });
                            }
                        }
                    }
                    Body::StreamAlive { stream } => cluster_streams::alive(&streams, &stream),
                    Body::Catalogue(_) => {}
                }
            }
        });
        Ok(())
    }

    /// A session just recorded or rebuilt here becomes this instance's and follows its bus
    /// address (refused when the bus cannot be reached).
    async fn join_session(&self, session: &Arc<HttpSession>, table: Weak<SessionTable>) -> Result<(), Refusal> {
        let Some(member) = self.attach(session) else {
            return Ok(());
        };
        match self.follow(table, session, &member).await {
            Ok(()) => Ok(()),
            Err(cause) => Err(Refusal::Unavailable { backend: BUS, cause }),
        }
    }

    /// Keep the record of a new session of `client` for every instance, under `limits`: the
    /// total and the client's share, both counted by the store, so both hold for the
    /// deployment rather than per instance.
    async fn record(&self, session: &HttpSession, client: &Client, limits: SessionLimits) -> Result<(), Refusal> {
        let record = SessionRecord::new(session.id.to_string(), client.caller.as_ref().map(|c| c.binding()));
        let created = self.backends.sessions.create(record, client.shared_key(), limits).await;
        match created {
            Ok(Admitted::Yes) => Ok(()),
            // The words of the in-memory path's refusals.
            Ok(Admitted::Full) => Err(Refusal::Full(Refused::Full.message())),
            Ok(Admitted::ClientFull) => Err(Refusal::Full(Refused::ClientFull.message())),
            Ok(Admitted::Duplicate) => Err(Refusal::Full("Session id already in use")),
            Err(cause) => Err(Refusal::Unavailable {
                backend: SESSION_STORE,
                cause,
            }),
        }
    }
}

impl SharedDirectory for Cluster {
    fn create<'a>(
        &'a self,
        session: &'a Arc<HttpSession>,
        client: &'a Client,
        limits: SessionLimits,
        table: Weak<SessionTable>,
    ) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            self.record(session, client, limits).await?;
            if let Err(refusal) = self.join_session(session, table).await {
                let _ = self.backends.sessions.delete(&session.id).await;
                return Err(refusal);
            }
            Ok(())
        })
    }

    fn negotiated<'a>(&'a self, session: &'a HttpSession) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(n) = session.negotiation() else { return };
            let change = SessionUpdate::Negotiated(Box::new(n));
            if let Err(e) = self.backends.sessions.update(&session.id, change).await {
                tracing::warn!("session {}: {e}", session.id);
            }
        })
    }

    fn find<'a>(
        &'a self,
        id: &'a str,
        client: &'a Client,
        launcher: &'a Launcher,
        table: &'a Arc<SessionTable>,
    ) -> BoxFuture<'a, Result<Option<Arc<HttpSession>>, Refusal>> {
        Box::pin(async move {
            // Nothing this server could have issued: no store is asked.
            if !plausible_session_id(id) {
                return Ok(None);
            }
            let record = match self.backends.sessions.get(id).await {
                Ok(Some(record)) => record,
                Ok(None) => return Ok(None),
                Err(cause) => {
                    return Err(Refusal::Unavailable {
                        backend: SESSION_STORE,
                        cause,
                    })
                }
            };
            if record.caller != client.caller.as_ref().map(|c| c.binding()) {
                tracing::debug!("session {id} named by another caller");
                return Ok(None);
            }
            let session = launcher.start(Arc::from(id), preset_of(&record), client.caller.clone());
            session.restore(&record);
            session.set_hears_broadcasts(false);
            let (session, fresh) = table.adopt(session);
            if fresh {
                if let Err(refusal) = self.join_session(&session, Arc::downgrade(table)).await {
                    table.remove(&session);
                    return Err(refusal);
                }
                tracing::debug!("session {id} rebuilt from its record");
            }
            Ok(Some(session))
        })
    }

    fn touch(&self, session: &HttpSession, ttl: Duration) {
        let Some(member) = self.member_of(&session.id) else {
            return;
        };
        let now = Instant::now();
        {
            let mut last = lock(&member.last_touch);
            if now.duration_since(*last) < ttl / 8 {
                return;
            }
            *last = now;
        }
        let op = self.backends.sessions.touch(&session.id, ttl);
        now_or_later(Box::pin(async move { op.await.map(|_| ()) }), ());
    }

    fn forward(&self, session: &HttpSession, frame: &[u8], message: &MessageRef<'_>) -> bool {
        let text = || String::from_utf8_lossy(frame).into_owned();
        match message {
            MessageRef::Response(r) => match Cluster::tag_of(&r.id) {
                Some(tag) if tag != self.tag => {
                    let body = Body::ClientFrame {
                        frame: text(),
                        tag: Some(tag),
                    };
                    self.send(&session.id, body);
                    true
                }
                _ => false,
            },
            MessageRef::Notification(n) if n.method == Cancelled::NAME => {
                let id = n
                    .params
                    .and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok())
                    .and_then(|p| p.get("requestId").cloned())
                    .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
                // Running here: the engine cancels it; elsewhere: the instance running it does.
                if id.is_some_and(|id| !session.runs(&id)) {
                    let body = Body::ClientFrame {
                        frame: text(),
                        tag: None,
                    };
                    self.send(&session.id, body);
                }
                false
            }
            _ => false,
        }
    }

    fn flush(&self, session: &HttpSession) -> Option<BoxFuture<'static, ()>> {
        let member = self.member_of(&session.id)?;
        let pending: Vec<_> = lock(&member.pending).drain(..).collect();
        if pending.is_empty() {
            return None;
        }
        Some(Box::pin(async move {
            for op in pending {
                if let Err(e) = op.await {
                    tracing::warn!("session store: {e}");
                }
            }
        }))
    }

    fn end<'a>(&'a self, session: &'a HttpSession) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let (b, id) = (&self.backends, &*session.id);
            let (deleted, removed, told) = futures_util::join!(
                b.sessions.delete(id),
                b.events.remove_session(id),
                self.publish(id, Body::Ended)
            );
            if let Err(e) = deleted.map(|_| ()).and(removed).and(told) {
                tracing::warn!("ending session {id}: {e}");
            }
        })
    }

    fn join(&self, server: &Server, stop: &CancellationToken) {
        let cluster = self.me.clone();
        let relay = Arc::new(move |change: Change| {
            if let Some(c) = cluster.upgrade() {
                c.notify_sessions(change.clone());
                c.send("", Body::Catalogue(change));
            }
        });
        let instance = Instance {
            keys: self.backends.keys.clone(),
            bus: self.backends.bus.clone(),
            switches: self.backends.switches.clone(),
            instance_id: self.backends.instance_id.clone(),
            relay,
        };
        cluster_instance::start(instance, server, stop);
    }

    fn load_keys<'a>(&'a self, server: &'a Server) -> BoxFuture<'a, ()> {
        Box::pin(async move { install_keys(server, self.backends.keys.load().await) })
    }

    fn ready(&self) -> BackendFuture<()> {
        let backends = self.backends.clone();
        Box::pin(async move { backends.ready().await })
    }
}

impl SharedLog for Cluster {
    fn stream_prefix(&self) -> String {
        format!("{}.", self.tag)
    }

    fn recorded(&self, session: &str, event: Recorded<'_>) {
        let body = Body::StreamEvent {
            stream: event.stream.to_owned(),
            position: event.position,
            data: String::from_utf8_lossy(event.data).into_owned(),
            is_reply: event.is_reply,
        };
        self.send(session, body);
    }

    fn standalone(&self, session: &str, frame: Bytes) {
        self.standalone_event(session, frame);
    }

    fn resume<'a>(
        &'a self,
        streams: &'a Arc<Mutex<StreamTable>>,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Option<Resumed>> {
        Box::pin(async move {
            let member = self.member(streams)?;
            cluster_streams::resume(&member.streams, last_event_id, self.prober()).await
        })
    }

    fn open_standalone<'a>(&'a self, streams: &'a Arc<Mutex<StreamTable>>) -> BoxFuture<'a, Option<Resumed>> {
        Box::pin(async move {
            let member = self.member(streams)?;
            cluster_streams::open_standalone(&member.streams, None).await
        })
    }

    fn left(&self, streams: &Arc<Mutex<StreamTable>>) {
        let id = lock(streams).session.clone();
        let mut members = lock(&self.members);
        let Some(member) = members
            .get(&id)
            .filter(|m| Arc::ptr_eq(&m.streams.table, streams))
            .cloned()
        else {
            return;
        };
        members.remove(&id);
        drop(members);
        member.stop.cancel();
        member.streams.clear();
    }
}
