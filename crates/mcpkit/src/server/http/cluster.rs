//! One server out of many instances: what the endpoint does when it shares [`Backends`] with
//! other instances ([`super::HttpServer::backend`]).
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
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use mcpkit_types::jsonrpc::{self, MessageRef};
use mcpkit_types::method::{Cancelled, NotificationMethod};
use mcpkit_types::{ProtocolVersion, RequestId};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::admission::{Client, Refused};
use super::config::HttpConfig;
use super::routes::Event;
use super::session::HttpSession;
use super::state::HttpState;
use crate::server::backend::{Address, Admitted, BackendError, Backends, SealingKey, SessionRecord, SessionUpdate};
use crate::server::relay::RelayedChange;
use crate::server::Server;
use crate::transport::Extensions;

/// How often the shared `requestState` key ring is read again, so a rotation reaches every
/// running instance within this. Cheap: a backend that caches the ring (Redis drops its cache
/// when a rotation is announced) answers from memory.
const KEY_RELOAD: Duration = Duration::from_secs(1);

/// The shared backends of an endpoint, and this instance's tag.
pub(super) struct Cluster {
    pub(super) backends: Backends,
    /// 1 to 2^20 − 1, from the instance id: the high bits of this instance's request ids.
    pub(super) tag: u64,
}

/// A message between instances.
#[derive(Debug, Serialize, Deserialize)]
struct Envelope {
    /// The instance that sent it (its own messages come back to it, and are skipped).
    from: String,
    body: Body,
}

#[derive(Debug, Serialize, Deserialize)]
enum Body {
    /// A client message for whichever instance awaits it (`tag`: only that one).
    ClientFrame { frame: String, tag: Option<u64> },
    /// The record changed.
    Changed(SessionUpdate),
    /// The session ended (DELETE).
    Ended,
    /// An event of one of the session's SSE streams.
    StreamEvent {
        stream: String,
        position: u64,
        data: String,
        is_reply: bool,
    },
    /// A catalogue change (to all instances).
    Catalogue(RelayedChange),
    /// Does an instance still run the request of this stream? (asked by one that resumed it)
    StreamProbe { stream: String },
    /// Yes: the instance running it answers.
    StreamAlive { stream: String },
}

impl Cluster {
    pub(super) fn new(backends: Backends) -> Arc<Cluster> {
        // FNV-1a of the instance id, folded into 20 bits, never 0 (0 is "no tag").
        let hash = backends.instance_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let tag = (hash % ((1 << 20) - 1)) + 1;
        Arc::new(Cluster { backends, tag })
    }

    /// Keep the record of a new session of `client` for every instance, under the caps of
    /// `config`: the total and the client's share, both counted by the store, so both hold
    /// for the deployment rather than per instance. The refusal's 503 message, if any.
    pub(super) async fn create_session(
        &self,
        record: SessionRecord,
        client: &Client,
        config: &HttpConfig,
    ) -> Result<Option<&'static str>, BackendError> {
        let created = self.backends.sessions.create(
            record,
            client.shared_key(),
            config.max_sessions,
            config.max_sessions_per_client,
            config.session_idle_timeout,
        );
        Ok(match created.await? {
            Admitted::Yes => None,
            // The words of the in-memory path's refusals.
            Admitted::Full => Some(Refused::Full.message()),
            Admitted::ClientFull => Some(Refused::ClientFull.message()),
            Admitted::Duplicate => Some("Session id already in use"),
        })
    }

    /// The request-id base of this instance's sessions.
    pub(super) fn id_base(&self) -> i64 {
        i64::try_from(self.tag << 32).unwrap_or(0)
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

    /// Tell the other instances about an SSE event recorded here.
    pub(super) fn stream_event(&self, session: &str, stream: &str, position: u64, data: &Bytes, is_reply: bool) {
        let data = String::from_utf8_lossy(data).into_owned();
        let body = Body::StreamEvent {
            stream: stream.to_owned(),
            position,
            data,
            is_reply,
        };
        self.send(session, body);
    }

    /// A standalone frame of `session` (a catalogue change, a log message, a request to the
    /// client): appended to the session's GET-stream log, where the store gives it its
    /// position (one numbering whichever instances write), then told to whichever instance
    /// holds the GET stream, which delivers the log in order. Nothing waits for it.
    pub(super) fn standalone_event(self: &Arc<Self>, session: &str, data: Bytes) {
        let append = self.backends.events.append(session, "0", data.clone());
        let (cluster, session) = (self.clone(), session.to_owned());
        super::routes::settle(
            Box::pin(async move {
                let position = append.await?;
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
    fn notify_sessions(self: &Arc<Self>, change: RelayedChange) {
        let (method, uri) = match &change {
            RelayedChange::Tools => ("notifications/tools/list_changed", None),
            RelayedChange::Prompts => ("notifications/prompts/list_changed", None),
            RelayedChange::Resources => ("notifications/resources/list_changed", None),
            RelayedChange::ResourceUpdated(uri) => ("notifications/resources/updated", Some(uri.clone())),
        };
        let mut frame = serde_json::json!({"jsonrpc": "2.0", "method": method});
        if let Some(uri) = &uri {
            frame["params"] = serde_json::json!({ "uri": uri });
        }
        let frame = Bytes::from(serde_json::to_vec(&frame).unwrap_or_default());
        let (cluster, live) = (self.clone(), self.backends.sessions.live());
        super::routes::settle(
            Box::pin(async move {
                for record in live.await? {
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

    /// Ask the instances of `session` whether one still runs the request of `stream`.
    pub(super) fn probe(&self, session: &str, stream: &str) -> BoxFuture<'static, Result<(), BackendError>> {
        self.publish(
            session,
            Body::StreamProbe {
                stream: stream.to_owned(),
            },
        )
    }

    /// Publish without waiting (in call order; failures are logged).
    fn send(&self, session: &str, body: Body) {
        super::routes::settle(self.publish(session, body), ());
    }
}

/// A write or a message a request made, not yet confirmed.
type Pending = BoxFuture<'static, Result<(), BackendError>>;

/// What an HTTP session of a cluster keeps beside the single-instance one.
pub(super) struct Link {
    pub(super) cluster: Arc<Cluster>,
    last_touch: Mutex<Instant>,
    /// Record writes and bus messages a request made, awaited before its answer goes out (so
    /// the next request, wherever it lands, sees them).
    pending: Arc<Mutex<Vec<Pending>>>,
    /// Ends the session's bus subscription.
    pub(super) stop: CancellationToken,
}

impl Link {
    pub(super) fn new(cluster: Arc<Cluster>) -> Link {
        Link {
            cluster,
            last_touch: Mutex::new(Instant::now()),
            pending: Arc::default(),
            stop: CancellationToken::new(),
        }
    }

    /// The observer of the engine's session: each change goes to the record and to the other
    /// instances, and the request that made it waits for both.
    pub(super) fn observer(&self, session: Arc<str>) -> crate::server::session::Observer {
        let (cluster, pending) = (self.cluster.clone(), self.pending.clone());
        crate::server::session::Observer(Arc::new(move |change: SessionUpdate| {
            let write = cluster.backends.sessions.update(&session, change.clone());
            let tell = cluster.publish(&session, Body::Changed(change));
            lock(&pending).push(Box::pin(async move {
                write.await?;
                tell.await
            }));
        }))
    }

    /// Wait for what the request wrote.
    pub(super) async fn flush(&self) {
        let pending: Vec<_> = lock(&self.pending).drain(..).collect();
        for op in pending {
            if let Err(e) = op.await {
                tracing::warn!("session store: {e}");
            }
        }
    }

    /// The session was used: refresh its record's TTL if an eighth of it has passed.
    pub(super) fn touch(&self, id: &str, idle_timeout: Duration) {
        let now = Instant::now();
        {
            let mut last = lock(&self.last_touch);
            if now.duration_since(*last) < idle_timeout / 8 {
                return;
            }
            *last = now;
        }
        let op = self.cluster.backends.sessions.touch(id, idle_timeout);
        super::routes::settle(Box::pin(async move { op.await.map(|_| ()) }), ());
    }

    /// The session ended for everyone (DELETE): record, events, other instances.
    pub(super) async fn end(&self, session: &str) {
        let b = &self.cluster.backends;
        let (deleted, removed, told) = futures_util::join!(
            b.sessions.delete(session),
            b.events.remove_session(session),
            self.cluster.publish(session, Body::Ended)
        );
        if let Err(e) = deleted.map(|_| ()).and(removed).and(told) {
            tracing::warn!("ending session {session}: {e}");
        }
    }
}

/// Whether `id` could be a session id this server issued (32 lowercase hex digits): anything
/// else is unknown without asking the store.
pub(super) fn plausible_session_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The preset that rebuilds a negotiated session from its record.
pub(super) fn preset_of(record: &SessionRecord) -> Option<crate::server::Preset> {
    let version: ProtocolVersion = record.protocol_version.as_deref()?.parse().ok()?;
    Some(crate::server::Preset {
        version,
        capabilities: record.client_capabilities.clone(),
        client_info: record.client_info.clone().unwrap_or_default(),
    })
}

/// Forward a client message that another instance awaits; `true` when it went to the bus
/// (and is not for this instance's engine).
pub(super) fn forward_client_message(session: &HttpSession, frame: &[u8], message: &MessageRef<'_>) -> bool {
    let Some(link) = &session.link else { return false };
    let text = || String::from_utf8_lossy(frame).into_owned();
    match message {
        MessageRef::Response(r) => match Cluster::tag_of(&r.id) {
            Some(tag) if tag != link.cluster.tag => {
                link.cluster.send(
                    &session.id,
                    Body::ClientFrame {
                        frame: text(),
                        tag: Some(tag),
                    },
                );
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
                link.cluster.send(
                    &session.id,
                    Body::ClientFrame {
                        frame: text(),
                        tag: None,
                    },
                );
            }
            false
        }
        _ => false,
    }
}

/// Subscribe to `session`'s bus address and serve what arrives until the session leaves this
/// instance.
pub(super) async fn follow(state: Weak<HttpState>, session: &Arc<HttpSession>) -> Result<(), BackendError> {
    let Some(link) = &session.link else { return Ok(()) };
    let mut sub = link
        .cluster
        .backends
        .bus
        .subscribe(&Address::Session(session.id.to_string()))
        .await?;
    let weak = Arc::downgrade(session);
    let stop = link.stop.clone();
    let me = link.cluster.backends.instance_id.clone();
    let tag = link.cluster.tag;
    let cluster = link.cluster.clone();
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
            // This instance's own GET-stream events come back too: the GET stream may be here.
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
                    if let Some(state) = state.upgrade() {
                        state.sessions.remove(&session);
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
                    session.forward_event(&stream, position, event);
                }
                Body::StreamProbe { stream } => {
                    if session.runs_stream(&stream) {
                        cluster.send(&session.id, Body::StreamAlive { stream });
                    }
                }
                Body::StreamAlive { stream } => session.stream_alive(&stream),
                Body::Catalogue(_) => {}
            }
        }
    });
    Ok(())
}

/// Start what an instance of a cluster runs beside its endpoint: catalogue changes to and from
/// the other instances, and the shared key ring (loaded now when the ring answers at once,
/// then every [`KEY_RELOAD`]).
pub(super) fn start_instance(cluster: &Arc<Cluster>, server: &Server, stop: &CancellationToken) {
    server.set_switch_store(Some(cluster.backends.switches.clone()));
    let publisher = cluster.clone();
    server.set_relay(Some(Arc::new(move |change| {
        publisher.notify_sessions(change.clone());
        publisher.send("", Body::Catalogue(change));
    })));
    let (c, s, stop) = (cluster.clone(), server.clone(), stop.clone());
    let mut first = Some(c.backends.keys.load());
    if let Some(keys) = first.as_mut().and_then(futures_util::FutureExt::now_or_never) {
        install_keys(&s, keys);
        first = None;
    }
    tokio::spawn(async move {
        let all = c.backends.bus.subscribe(&Address::All).await;
        let mut all = match all {
            Ok(sub) => Some(sub),
            Err(e) => {
                tracing::warn!("bus: {e}; catalogue changes of other instances will not reach this one");
                None
            }
        };
        if let Some(f) = first.take() {
            install_keys(&s, f.await);
        }
        // Switches made before this instance started.
        s.catch_up().await;
        let mut reload = tokio::time::interval_at(Instant::now() + KEY_RELOAD, KEY_RELOAD);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = reload.tick() => install_keys(&s, c.backends.keys.load().await),
                m = async { match all.as_mut() { Some(sub) => sub.recv().await, None => std::future::pending().await } } => {
                    let Some(m) = m else { all = None; continue };
                    if let Ok(Envelope { from, body: Body::Catalogue(change) }) = serde_json::from_slice(&m) {
                        if *from != *c.backends.instance_id {
                            if matches!(change, RelayedChange::Tools | RelayedChange::Prompts) {
                                s.catch_up().await;
                            }
                            s.take_relayed(change);
                        }
                    }
                }
            }
        }
    });
}

/// Load the shared keys into `server` (a failure keeps the keys it has).
pub(super) fn install_keys(server: &Server, keys: Result<Vec<SealingKey>, BackendError>) {
    match keys.map(|k| crate::server::RequestStateKeys::from_ring(&k)) {
        Ok(Some(ring)) => server.set_request_state_keys(ring),
        Ok(None) => tracing::warn!("key ring: empty ring"),
        Err(e) => tracing::warn!("key ring: {e}"),
    }
}
