//! The streams of a session that instances share (the stream half of `cluster`): a stream
//! written by another instance resumed here, and the GET stream delivered in the order of the
//! shared log, whichever instance wrote each event.
//!
//! Locks: a session's [`Following`] is always taken before its [`StreamTable`], never the other
//! way round (the table's own code never takes it).

use crate::sync::lock;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mcpkit_types::jsonrpc::MessageRef;

use super::streams::{Event, Resumed, Sink, StreamTable, STANDALONE};
use crate::server::backend::{BackendError, EventId};

/// How long an instance that resumed another's stream waits for the answer to "does an
/// instance still run its request?" before it ends the stream.
const OWNER_PROBE_WAIT: Duration = Duration::from_millis(1000);
/// How often it asks again while the stream goes on.
const OWNER_PROBE_EVERY: Duration = Duration::from_secs(2);

/// Asks the instances of a session (first argument) whether one still runs the request of a
/// stream (second argument); whoever does answers with [`alive`].
pub(super) type Probe = Arc<dyn Fn(&str, &str) -> BoxFuture<'static, Result<(), BackendError>> + Send + Sync>;

/// What this instance follows of one session's streams.
pub(super) struct SessionStreams {
    pub(super) table: Arc<Mutex<StreamTable>>,
    following: Mutex<Following>,
}

#[derive(Default)]
struct Following {
    /// Streams of other instances resumed here: the position delivered so far, and the sink.
    remote: HashMap<Arc<str>, (u64, Sink)>,
    /// The GET stream open here: the log position it delivered up to (`None` while it is
    /// being opened: what arrives waits in `ahead` until the log was read).
    cursor: Option<u64>,
    /// GET-stream events that arrived beyond the cursor, delivered in log order.
    ahead: BTreeMap<u64, Event>,
    /// A log read filling a gap before `ahead` is under way.
    filling: bool,
    /// Streams of other instances resumed here: how many times their instance answered that
    /// it still runs the request (see [`watch_owner`]).
    alive: HashMap<Arc<str>, u64>,
}

impl Following {
    /// A resumed stream of another instance ends here.
    fn remove_remote(&mut self, name: &str) {
        self.remote.remove(name);
        self.alive.remove(name);
    }
}

impl SessionStreams {
    pub(super) fn new(table: Arc<Mutex<StreamTable>>) -> SessionStreams {
        SessionStreams {
            table,
            following: Mutex::default(),
        }
    }

    /// The session left this instance: every stream followed here ends.
    pub(super) fn clear(&self) {
        let mut f = lock(&self.following);
        f.remote.clear();
        f.alive.clear();
        f.cursor = None;
        f.ahead.clear();
    }
}

/// Deliver what `ahead` holds right after the cursor, in order; `true` when a gap remains (an
/// event beyond it arrived before one the log has).
fn drain_ahead(f: &mut Following, r: &mut StreamTable) -> bool {
    let Some(mut cursor) = f.cursor else { return false };
    while let Some((&p, _)) = f.ahead.first_key_value() {
        if p <= cursor {
            f.ahead.pop_first();
            continue;
        }
        if p != cursor + 1 {
            break;
        }
        let Some((_, event)) = f.ahead.pop_first() else {
            break;
        };
        cursor = p;
        let sent = r.standalone.as_ref().is_some_and(|s| s.try_send(event).is_ok());
        if !sent {
            // The client went away or stopped reading: the stream ends, the log keeps it.
            r.standalone = None;
            f.cursor = None;
            f.ahead.clear();
            return false;
        }
    }
    f.cursor = Some(cursor);
    !f.ahead.is_empty()
}

/// An event another instance recorded on stream `name` at `position`: to the GET stream if it
/// is the standalone one and open here (once, in log order; a gap is filled from the log
/// first), or to the resumed stream of that name.
pub(super) fn arrived(s: &Arc<SessionStreams>, name: &str, position: u64, event: Event) {
    let mut f = lock(&s.following);
    if name == "0" {
        let mut r = lock(&s.table);
        if r.standalone.is_none() {
            // Not read here: the log keeps it for whichever GET resumes.
            return;
        }
        f.ahead.insert(position, event);
        let gap = drain_ahead(&mut f, &mut r);
        if gap && !f.filling && f.cursor.is_some() {
            f.filling = true;
            drop((r, f));
            fill_gap(s.clone());
        }
        return;
    }
    let Some((last, sink)) = f.remote.get_mut(name) else {
        return;
    };
    if position <= *last {
        return;
    }
    *last = position;
    let end = event.is_reply;
    if sink.try_send(event).is_err() || end {
        f.remote.remove(name);
    }
}

/// Read the GET-stream log after the cursor and deliver it, then whatever waited beyond.
/// Events the log no longer has (evicted) are skipped over.
fn fill_gap(s: Arc<SessionStreams>) {
    let (store, session, cursor) = {
        let f = lock(&s.following);
        let r = lock(&s.table);
        (r.settings.log.store.clone(), r.session.clone(), f.cursor)
    };
    let Some(cursor) = cursor else {
        lock(&s.following).filling = false;
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
        let mut f = lock(&s.following);
        let mut r = lock(&s.table);
        f.filling = false;
        if f.cursor.is_none() {
            return;
        }
        for (p, data) in kept.into_iter().filter(|(_, d)| !d.is_empty()) {
            f.ahead.entry(p).or_insert(Event {
                id: format!("0-{p}"),
                data,
                is_reply: false,
            });
        }
        if drain_ahead(&mut f, &mut r) {
            // Still a gap: what it lacks is gone from the log; go on after it.
            if let (Some(&first), Some(_)) = (f.ahead.keys().next(), f.cursor) {
                f.cursor = Some(first - 1);
                drain_ahead(&mut f, &mut r);
            }
        }
    });
}

/// Open the GET stream: fresh (`from` `None`: a priming event naming the log's latest
/// position) or resumed after `from` (what the log kept after it). From then on every event of
/// the log is delivered once, in log order, whichever instance appended it. `None` while a GET
/// stream is open here.
pub(super) async fn open_standalone(s: &Arc<SessionStreams>, from: Option<u64>) -> Option<Resumed> {
    let (store, session, rx) = {
        let mut f = lock(&s.following);
        let mut r = lock(&s.table);
        if r.standalone_open() {
            return None;
        }
        let (tx, rx) = r.channel();
        r.standalone = Some(tx);
        f.cursor = None;
        f.ahead.clear();
        f.filling = false;
        (r.settings.log.store.clone(), r.session.clone(), rx)
    };
    // What arrives from the bus meanwhile waits in `ahead`, cut to what the read lacks.
    let kept = store.after(&session, "0", from.unwrap_or(0)).await.unwrap_or_else(|e| {
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
            data: bytes::Bytes::new(),
            is_reply: false,
        }],
    };
    let gap = {
        let mut f = lock(&s.following);
        let mut r = lock(&s.table);
        f.cursor = Some(latest);
        let gap = drain_ahead(&mut f, &mut r);
        if gap && !f.filling {
            f.filling = true;
            true
        } else {
            false
        }
    };
    if gap {
        fill_gap(s.clone());
    }
    Some(Resumed { missed, live: Some(rx) })
}

/// Resume after `last_event_id` a stream that may be this instance's or another's, from a log
/// that may answer later. The live sink is in place before the log is read, and what it got
/// meanwhile is cut to what the replay lacks. While another instance's stream goes on here,
/// `probe` asks whether its request still runs.
pub(super) async fn resume(s: &Arc<SessionStreams>, last_event_id: &str, probe: Probe) -> Option<Resumed> {
    let EventId { stream: name, position } = EventId::parse(last_event_id)?;
    if &*name == "0" {
        return open_standalone(s, Some(position)).await;
    }
    let (store, session, local, mut rx) = {
        let mut f = lock(&s.following);
        let mut r = lock(&s.table);
        let (tx, rx) = r.channel();
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
                f.remote.insert(name.clone(), (position, tx));
            }
        }
        (r.settings.log.store.clone(), r.session.clone(), local, rx)
    };
    // Another instance's stream must show it exists: the event the client names (its marker
    // at least) is still in the log.
    let from = if local.is_none() {
        position.saturating_sub(1)
    } else {
        position
    };
    let kept = store.after(&session, &name, from).await.unwrap_or_default();
    if local.is_none() && kept.first().is_none_or(|(p, _)| *p != position) {
        lock(&s.following).remove_remote(&name);
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
        let mut f = lock(&s.following);
        match f.remote.get_mut(&name) {
            Some(entry) if !finished => {
                entry.0 = entry.0.max(seen);
                drop(f);
                watch_owner(s.clone(), session, name.clone(), probe);
            }
            _ => f.remove_remote(&name),
        }
    }
    let live = (!finished).then_some(rx);
    Some(Resumed { missed, live })
}

/// Whether the request of stream `name` runs here (its stream is not finished).
pub(super) fn runs(table: &Mutex<StreamTable>, name: &str) -> bool {
    let r = lock(table);
    r.stream_named(name)
        .filter(|n| *n != STANDALONE)
        .and_then(|n| r.logs.get(&n))
        .is_some_and(|l| !l.finished)
}

/// The instance running the request of stream `name` (resumed here) answered a probe.
pub(super) fn alive(s: &SessionStreams, name: &str) {
    if let Some(n) = lock(&s.following).alive.get_mut(name) {
        *n += 1;
    }
}

/// Stream `name` of another instance was resumed here and goes on live: while it does, ask
/// every [`OWNER_PROBE_EVERY`] whether an instance still runs its request. When none answers
/// within [`OWNER_PROBE_WAIT`] (its instance died, and the request with it), the stream ends
/// after what it delivered: its result cannot come any more.
fn watch_owner(s: Arc<SessionStreams>, session: Arc<str>, name: Arc<str>, probe: Probe) {
    lock(&s.following).alive.insert(name.clone(), 0);
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move {
        loop {
            let before = {
                let f = lock(&s.following);
                match (f.remote.contains_key(&name), f.alive.get(&name)) {
                    (true, Some(n)) => *n,
                    _ => return,
                }
            };
            if let Err(e) = probe(&session, &name).await {
                tracing::debug!("probing stream {name}: {e}");
            }
            tokio::time::sleep(OWNER_PROBE_WAIT).await;
            {
                let mut f = lock(&s.following);
                if !f.remote.contains_key(&name) {
                    f.alive.remove(&name);
                    return;
                }
                if f.alive.get(&name).copied().unwrap_or(0) == before {
                    tracing::debug!("stream {name}: no instance runs its request; it ends");
                    f.remove_remote(&name);
                    return;
                }
            }
            tokio::time::sleep(OWNER_PROBE_EVERY).await;
        }
    });
}
