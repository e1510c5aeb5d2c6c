//! The behaviour every implementation of the backend traits (`mcpkit::server::backend`) must
//! have, as async functions a test calls with two instances of one fresh deployment: the
//! in-memory backends (two servers of one process sharing them) and the Redis backends (two
//! connections to one Redis) run the same checks. Each check panics, naming the broken rule,
//! on the first difference. The Tasks store has its own suite in mcpkit
//! (`check_task_store`), which [`check_backends`]' callers run beside it.
//!
//! Timing: the expiry checks wait for real TTLs of under a second; the whole suite takes a few
//! seconds.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use mcpkit::server::backend::{
    Address, Admitted, Backends, Bus, EventStore, KeyRing, SealingKey, SessionLimits, SessionRecord, SessionStore,
    SessionUpdate, Subscription, SwitchStore, Switched,
};
use mcpkit::types::schema::LoggingLevel;

use crate::within;

/// The caps of a `create`.
fn limits(max_sessions: usize, max_per_client: usize, ttl: Duration) -> SessionLimits {
    SessionLimits {
        max_sessions,
        max_per_client,
        ttl,
    }
}

/// The bounds the suite gives the event store under test.
#[derive(Debug, Clone, Copy)]
pub struct EventBounds {
    /// Events kept per stream.
    pub events_per_stream: usize,
    /// Streams kept per session.
    pub streams_per_session: usize,
    /// How long a stream is kept after its last event.
    pub ttl: Duration,
}

/// The bounds [`check_backends`] asks for: 3 events per stream, 2 streams per session, 600 ms.
pub const SUITE_BOUNDS: EventBounds = EventBounds {
    events_per_stream: 3,
    streams_per_session: 2,
    ttl: Duration::from_millis(600),
};

/// Run every check against two instances made by `make`: a fresh, empty deployment whose event
/// store has the given bounds, seen through two instances (`Backends` with instance ids `"a"`
/// and `"b"`). `make` is called once per check.
pub async fn check_backends<F>(make: F)
where
    F: AsyncFn(EventBounds) -> (Backends, Backends),
{
    let (a, b) = make(SUITE_BOUNDS).await;
    check_session_store(&*a.sessions, &*b.sessions).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_per_client_cap(&*a.sessions, &*b.sessions).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_event_store(&*a.events, &*b.events, SUITE_BOUNDS).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_bus(&*a.bus, &*b.bus, &b.instance_id).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_key_ring(&*a.keys, &*b.keys).await;
    let (a, b) = make(SUITE_BOUNDS).await;
    check_switch_store(&*a.switches, &*b.switches).await;
}

fn record(id: &str) -> SessionRecord {
    SessionRecord::new(id, None)
}

async fn get(store: &dyn SessionStore, id: &str) -> Option<SessionRecord> {
    within("a session lookup", store.get(id)).await.expect("get")
}

fn subscriptions(r: &Option<SessionRecord>) -> BTreeSet<String> {
    r.as_ref().map(|r| r.subscriptions.clone()).unwrap_or_default()
}

/// Session records: ids never issued, creation seen by every instance, duplicates, updates
/// from either instance (none lost when they race), the cap held across instances (also when
/// creates race), deletion, idle expiry and touch. `a` and `b` are two instances of one
/// deployment.
pub async fn check_session_store(a: &dyn SessionStore, b: &dyn SessionStore) {
    let ttl = Duration::from_millis(800);

    // An id never issued: nothing there, nothing changes.
    assert_eq!(get(a, "never-issued").await, None, "an unknown session is missing");
    assert!(
        !a.update("never-issued", SessionUpdate::Initialized)
            .await
            .expect("update"),
        "an unknown session cannot be updated"
    );
    assert!(
        !a.touch("never-issued", ttl).await.expect("touch"),
        "an unknown session cannot be touched"
    );
    assert!(
        !a.delete("never-issued").await.expect("delete"),
        "an unknown session cannot be deleted"
    );
    assert_eq!(a.count().await.expect("count"), 0, "nothing was created");

    // Created on one instance, valid on the other; a live id is never overwritten.
    assert_eq!(
        a.create(record("s1"), None, limits(2, usize::MAX, ttl))
            .await
            .expect("create"),
        Admitted::Yes
    );
    assert_eq!(
        get(b, "s1").await.map(|r| r.id),
        Some("s1".to_owned()),
        "visible on every instance"
    );
    let mut other = record("s1");
    other.caller = Some("mallory".into());
    assert_eq!(
        b.create(other, None, limits(2, usize::MAX, ttl)).await.expect("create"),
        Admitted::Duplicate,
        "a live id is a duplicate"
    );
    assert_eq!(
        get(a, "s1").await.and_then(|r| r.caller),
        None,
        "the duplicate wrote nothing"
    );

    // Updates on either instance are seen by the other, even after it read the record.
    assert!(a
        .update("s1", SessionUpdate::Subscribe("file:///x".into()))
        .await
        .expect("update"));
    assert!(
        subscriptions(&get(b, "s1").await).contains("file:///x"),
        "an update on one instance is seen on the other"
    );
    assert!(b
        .update("s1", SessionUpdate::LogLevel(LoggingLevel::Debug))
        .await
        .expect("update"));
    let s1 = get(a, "s1").await;
    assert_eq!(s1.as_ref().and_then(|r| r.log_level), Some(LoggingLevel::Debug));
    assert!(subscriptions(&s1).contains("file:///x"), "the earlier update is kept");

    // Racing updates from both instances: none is lost.
    let racing_a = futures_util::future::join_all(
        (0..8).map(|n| a.update("s1", SessionUpdate::Subscribe(format!("file:///a{n}")))),
    );
    let racing_b = futures_util::future::join_all(
        (0..8).map(|n| b.update("s1", SessionUpdate::Subscribe(format!("file:///b{n}")))),
    );
    let (ra, rb) = within("racing updates", futures_util::future::join(racing_a, racing_b)).await;
    assert!(
        ra.into_iter().chain(rb).all(|r| r.expect("update")),
        "every racing update applies"
    );
    assert_eq!(subscriptions(&get(b, "s1").await).len(), 17, "no racing update is lost");

    // The cap counts the sessions of every instance.
    assert_eq!(
        b.create(record("s2"), None, limits(2, usize::MAX, ttl))
            .await
            .expect("create"),
        Admitted::Yes
    );
    assert_eq!(
        a.create(record("s3"), None, limits(2, usize::MAX, ttl))
            .await
            .expect("create"),
        Admitted::Full,
        "the cap holds"
    );
    assert_eq!(
        b.create(record("s3"), None, limits(2, usize::MAX, ttl))
            .await
            .expect("create"),
        Admitted::Full,
        "on every instance"
    );
    assert_eq!(get(a, "s3").await, None, "a refused session is not kept");
    assert_eq!(a.count().await.expect("count"), 2);
    assert_eq!(b.count().await.expect("count"), 2);
    for store in [a, b] {
        let mut live: Vec<String> = store.live().await.expect("live").into_iter().map(|r| r.id).collect();
        live.sort();
        assert_eq!(live, ["s1", "s2"], "every instance lists the live sessions of all");
    }

    // Racing creates on both instances never exceed the cap.
    let racing = (0..6).map(|n| {
        let store = if n % 2 == 0 { a } else { b };
        store.create(record(&format!("r{n}")), None, limits(4, usize::MAX, ttl))
    });
    let admitted = within("racing creates", futures_util::future::join_all(racing)).await;
    let yes = admitted.into_iter().filter(|r| matches!(r, Ok(Admitted::Yes))).count();
    assert_eq!(yes, 2, "racing creates fill the cap exactly");
    for n in 0..6 {
        a.delete(&format!("r{n}")).await.expect("delete");
    }

    // Deleted on one instance, gone on both.
    assert!(b.delete("s2").await.expect("delete"));
    assert_eq!(get(a, "s2").await, None, "a deleted session is gone everywhere");
    assert!(!a.delete("s2").await.expect("delete"), "and cannot be deleted twice");
    assert_eq!(
        a.create(record("s3"), None, limits(2, usize::MAX, ttl))
            .await
            .expect("create"),
        Admitted::Yes,
        "it freed its place"
    );

    // Idle expiry: a touched session lives on, an untouched one expires.
    tokio::time::sleep(ttl * 6 / 10).await;
    assert!(b.touch("s1", ttl).await.expect("touch"), "a live session is touched");
    tokio::time::sleep(ttl * 6 / 10).await;
    assert!(get(a, "s1").await.is_some(), "a touched session lives on");
    assert_eq!(get(a, "s3").await, None, "an idle session expires");
    assert_eq!(get(b, "s3").await, None, "on every instance");
    assert_eq!(
        a.count().await.expect("count"),
        1,
        "an expired session leaves the count"
    );
    assert!(
        !b.touch("s3", ttl).await.expect("touch"),
        "an expired session cannot be touched"
    );
    tokio::time::sleep(ttl * 12 / 10).await;
    assert_eq!(get(b, "s1").await, None, "it expires too once idle");
    assert_eq!(b.count().await.expect("count"), 0);
    assert_eq!(
        a.create(record("s1"), None, limits(1, usize::MAX, ttl))
            .await
            .expect("create"),
        Admitted::Yes,
        "an expired id and place can be used again"
    );
}

/// The per-client cap [`check_per_client_cap`] gives.
const PER_CLIENT: usize = 2;

/// `create` of the session `id` of `client` on `store`, at most [`PER_CLIENT`] per client.
async fn open(
    store: &dyn SessionStore,
    id: &str,
    client: Option<&str>,
    max_sessions: usize,
    ttl: Duration,
) -> Admitted {
    let created = store.create(
        record(id),
        client.map(str::to_owned),
        limits(max_sessions, PER_CLIENT, ttl),
    );
    within("a session create", created).await.expect("create")
}

/// The per-client cap of `create`: held across instances (also when one client's creates race
/// on both), other clients and sessions of no client unaffected, the total cap still held (a
/// client at its own cap hearing [`Admitted::ClientFull`] first), the place given back by a
/// delete (on an instance that never read the session) and by idle expiry, and kept by a
/// touch. The clients' keys contain `:` and `=` (as the HTTP layer's do). `a` and `b` are two
/// instances of one fresh deployment.
pub async fn check_per_client_cap(a: &dyn SessionStore, b: &dyn SessionStore) {
    const ALICE: Option<&str> = Some("peer:10.0.0.1");
    const BOB: Option<&str> = Some("=3:bob-");
    let ttl = Duration::from_millis(800);

    // Two sessions of one client, one per instance: the third is refused on both.
    assert_eq!(open(a, "c1", ALICE, 100, ttl).await, Admitted::Yes);
    assert_eq!(open(b, "c2", ALICE, 100, ttl).await, Admitted::Yes);
    assert_eq!(
        open(a, "c3", ALICE, 100, ttl).await,
        Admitted::ClientFull,
        "the per-client cap counts the client's sessions of every instance"
    );
    assert_eq!(
        open(b, "c3", ALICE, 100, ttl).await,
        Admitted::ClientFull,
        "on every instance"
    );
    assert_eq!(get(a, "c3").await, None, "a refused session is not kept");
    assert_eq!(a.count().await.expect("count"), 2, "a refusal takes no place");
    assert_eq!(
        get(a, "c2").await.and_then(|r| r.client).as_deref(),
        ALICE,
        "the record names its client"
    );

    // Other clients, and sessions no client is known for, are not held to alice's share.
    assert_eq!(open(b, "o1", BOB, 100, ttl).await, Admitted::Yes);
    assert_eq!(
        open(a, "o2", BOB, 100, ttl).await,
        Admitted::Yes,
        "another client has a share of its own"
    );
    for id in ["n1", "n2", "n3"] {
        assert_eq!(
            open(a, id, None, 100, ttl).await,
            Admitted::Yes,
            "a session of no known client counts only in the total"
        );
    }
    assert_eq!(b.count().await.expect("count"), 7);
    assert_eq!(
        open(b, "d1", Some("carol"), 7, ttl).await,
        Admitted::Full,
        "the total cap still holds"
    );
    assert_eq!(
        open(b, "c3", ALICE, 7, ttl).await,
        Admitted::ClientFull,
        "a client at its own cap hears that first"
    );

    // A delete, on the instance that never read the session, gives the place back.
    assert!(b.delete("c1").await.expect("delete"));
    assert!(!a.delete("c1").await.expect("delete"), "once");
    assert_eq!(
        open(a, "c3", ALICE, 100, ttl).await,
        Admitted::Yes,
        "a deleted session gives its client its place back"
    );
    assert_eq!(
        open(b, "c4", ALICE, 100, ttl).await,
        Admitted::ClientFull,
        "and only one"
    );

    // Idle expiry gives the place back; a touch keeps it.
    tokio::time::sleep(ttl * 6 / 10).await;
    assert!(b.touch("c3", ttl).await.expect("touch"), "a live session is touched");
    tokio::time::sleep(ttl * 6 / 10).await;
    assert_eq!(get(a, "c2").await, None, "an idle session expires");
    assert_eq!(
        open(a, "c4", ALICE, 100, ttl).await,
        Admitted::Yes,
        "an expired session gives its client its place back"
    );
    assert_eq!(
        open(b, "c5", ALICE, 100, ttl).await,
        Admitted::ClientFull,
        "a touched session keeps its place"
    );

    // One client's creates racing on both instances never exceed its share.
    let racing = (0..6).map(|n| {
        let store = if n % 2 == 0 { a } else { b };
        store.create(
            record(&format!("r{n}")),
            Some("dave".to_owned()),
            limits(100, PER_CLIENT, ttl),
        )
    });
    let answers = within("racing creates", futures_util::future::join_all(racing)).await;
    let answers: Vec<Admitted> = answers.into_iter().map(|r| r.expect("create")).collect();
    let yes = answers.iter().filter(|r| **r == Admitted::Yes).count();
    assert_eq!(
        yes, PER_CLIENT,
        "racing creates of one client fill its share exactly: {answers:?}"
    );
    assert!(
        answers
            .iter()
            .all(|r| matches!(r, Admitted::Yes | Admitted::ClientFull)),
        "{answers:?}"
    );
}

async fn positions(store: &dyn EventStore, session: &str, stream: &str, after: u64) -> Vec<u64> {
    within("a replay", store.after(session, stream, after))
        .await
        .expect("after")
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

/// SSE events: one numbering per stream across instances (in call order, even unawaited),
/// replay after an id exactly once from either instance, the bounds per stream and per session,
/// unknown and forged streams empty, removals, and the TTL. `bounds` are the store's.
pub async fn check_event_store(a: &dyn EventStore, b: &dyn EventStore, bounds: EventBounds) {
    assert_eq!(
        (bounds.events_per_stream, bounds.streams_per_session),
        (3, 2),
        "the suite is written for 3 events per stream and 2 streams per session"
    );
    // Positions follow call order, even when the futures are awaited in another order.
    let appends: Vec<_> = (1..=5)
        .map(|n| a.append("s", "1.1", Bytes::from(format!("e{n}"))))
        .collect();
    let mut got = Vec::new();
    for f in appends.into_iter().rev() {
        got.push(within("an append", f).await.expect("append"));
    }
    got.reverse();
    assert_eq!(got, [1, 2, 3, 4, 5], "positions follow call order");

    // Replay on the other instance: the kept events after the id, once each, in order.
    let replay = within("a replay", b.after("s", "1.1", 0)).await.expect("after");
    assert_eq!(
        replay,
        [(3, Bytes::from("e3")), (4, Bytes::from("e4")), (5, Bytes::from("e5"))],
        "a stream keeps its newest events, and replays them on any instance"
    );
    assert_eq!(positions(b, "s", "1.1", 4).await, [5], "replay starts after the id");
    assert!(positions(b, "s", "1.1", 5).await.is_empty(), "nothing after the last");
    assert!(
        positions(b, "s", "1.1", u64::MAX).await.is_empty(),
        "an id past the end is nothing"
    );

    // Both instances append to one stream: one numbering.
    assert_eq!(b.append("s", "1.1", Bytes::from("e6")).await.expect("append"), 6);
    assert_eq!(a.append("s", "1.1", Bytes::from("e7")).await.expect("append"), 7);
    assert_eq!(
        positions(a, "s", "1.1", 5).await,
        [6, 7],
        "one numbering across instances"
    );

    // Unknown sessions and streams (a forged id names one) are empty.
    assert!(
        positions(a, "s", "9.9", 0).await.is_empty(),
        "an unknown stream is empty"
    );
    assert!(
        positions(a, "other", "1.1", 0).await.is_empty(),
        "another session's stream is not found"
    );

    // At most `streams_per_session` streams: the oldest goes first.
    a.append("s", "1.2", Bytes::from("x")).await.expect("append");
    b.append("s", "0", Bytes::from("y")).await.expect("append");
    assert!(
        positions(a, "s", "1.1", 0).await.is_empty(),
        "the oldest stream is dropped first"
    );
    assert_eq!(positions(a, "s", "1.2", 0).await, [1]);
    assert_eq!(positions(b, "s", "0", 0).await, [1]);

    // Removals, known or not.
    b.remove_stream("s", "0").await.expect("remove_stream");
    assert!(positions(a, "s", "0", 0).await.is_empty(), "a removed stream is gone");
    a.remove_stream("s", "4.4")
        .await
        .expect("removing an unknown stream is no error");
    a.remove_session("s").await.expect("remove_session");
    assert!(
        positions(b, "s", "1.2", 0).await.is_empty(),
        "a removed session's streams are gone"
    );
    a.remove_session("never")
        .await
        .expect("removing an unknown session is no error");

    // A stream not appended to for the TTL is gone, and starts over.
    a.append("t", "0", Bytes::from("a")).await.expect("append");
    tokio::time::sleep(bounds.ttl / 2).await;
    assert_eq!(positions(b, "t", "0", 0).await, [1], "kept within its TTL");
    tokio::time::sleep(bounds.ttl).await;
    assert!(positions(b, "t", "0", 0).await.is_empty(), "gone after its TTL");
    assert_eq!(
        b.append("t", "0", Bytes::from("b")).await.expect("append"),
        1,
        "an expired stream starts over"
    );
}

async fn next(sub: &mut Subscription, what: &str) -> Bytes {
    within(what, sub.recv())
        .await
        .unwrap_or_else(|| panic!("{what}: the subscription ended"))
}

async fn subscribe(bus: &dyn Bus, to: &Address) -> Subscription {
    within("a subscription", bus.subscribe(to)).await.expect("subscribe")
}

/// The bus: delivery to the subscribers of an address on every instance (the publisher's
/// own too) and to no one else, order per publisher, nothing for a subscriber that came later,
/// and a dropped subscription gets nothing more. `b_id` is instance `b`'s id.
pub async fn check_bus(a: &dyn Bus, b: &dyn Bus, b_id: &str) {
    let s1 = Address::Session("s1".into());
    let mut on_a = subscribe(a, &s1).await;
    let mut on_b = subscribe(b, &s1).await;
    let mut all_a = subscribe(a, &Address::All).await;
    let mut all_b = subscribe(b, &Address::All).await;
    let mut inst_b = subscribe(b, &Address::Instance(b_id.to_owned())).await;

    a.publish(&s1, Bytes::from("1")).await.expect("publish");
    assert_eq!(next(&mut on_b, "a session message on the other instance").await, "1");
    assert_eq!(
        next(&mut on_a, "a session message on the publisher's instance").await,
        "1"
    );

    a.publish(&Address::Instance(b_id.to_owned()), Bytes::from("for b"))
        .await
        .expect("publish");
    assert_eq!(next(&mut inst_b, "an instance message").await, "for b");
    b.publish(&Address::All, Bytes::from("2")).await.expect("publish");
    assert_eq!(next(&mut all_a, "a broadcast").await, "2");
    assert_eq!(next(&mut all_b, "a broadcast").await, "2");

    // Another session's messages do not arrive; order holds even unawaited.
    a.publish(&Address::Session("s2".into()), Bytes::from("not for s1"))
        .await
        .expect("publish");
    let burst: Vec<_> = (0..50).map(|n| a.publish(&s1, Bytes::from(format!("m{n}")))).collect();
    for f in burst.into_iter().rev() {
        within("a publish", f).await.expect("publish");
    }
    for n in 0..50 {
        assert_eq!(
            next(&mut on_b, "a burst").await,
            format!("m{n}"),
            "one publisher's messages arrive in order, and only the session's"
        );
    }
    for n in 0..50 {
        assert_eq!(next(&mut on_a, "a burst").await, format!("m{n}"));
    }

    // Nothing is kept for a subscriber that comes later.
    let s3 = Address::Session("s3".into());
    b.publish(&s3, Bytes::from("early")).await.expect("publish");
    let mut late = subscribe(a, &s3).await;
    b.publish(&s3, Bytes::from("late")).await.expect("publish");
    assert_eq!(next(&mut late, "a message after subscribing").await, "late");

    // A dropped subscription: the others of its address still receive.
    drop(on_a);
    b.publish(&s1, Bytes::from("after drop")).await.expect("publish");
    assert_eq!(
        next(&mut on_b, "a message after another subscriber left").await,
        "after drop"
    );
    // No stray messages reached the instance or broadcast subscriptions.
    a.publish(&Address::All, Bytes::from("end")).await.expect("publish");
    assert_eq!(next(&mut all_b, "the end marker").await, "end");
    assert_eq!(next(&mut all_a, "the end marker").await, "end");
}

/// The key ring: made once for all instances (also when they start together), shared, and a
/// rotation reaches every instance (within 5 s) keeping the previous keys asked for.
pub async fn check_key_ring(a: &dyn KeyRing, b: &dyn KeyRing) {
    let (ka, kb) = within("two first loads", futures_util::future::join(a.load(), b.load())).await;
    let (ka, kb) = (ka.expect("load"), kb.expect("load"));
    assert_eq!(ka.len(), 1, "a new ring has one key");
    assert_eq!(ka, kb, "instances starting together share one key");
    assert!(ka[0].secret.len() >= 32, "keys are at least 256 bits");
    assert!(SealingKey::ring(&ka).is_some());
    assert_eq!(a.load().await.expect("load"), ka, "made once");

    let rotated = within("a rotation", a.rotate(1)).await.expect("rotate");
    assert_eq!(rotated.len(), 2, "the new key and one previous");
    assert_eq!(rotated[1], ka[0], "the previous key still opens");
    assert_ne!(rotated[0], ka[0], "a new key seals");
    reaches(b, &rotated, "a rotation reaches the other instance").await;
    assert_eq!(a.load().await.expect("load"), rotated, "and the rotating one");

    let again = within("a rotation", b.rotate(1)).await.expect("rotate");
    assert_eq!(again.len(), 2, "only one previous key is kept");
    assert_eq!(again[1], rotated[0]);
    assert!(!again.contains(&ka[0]), "the oldest key is dropped");
    reaches(a, &again, "a rotation on the other instance reaches this one").await;
}

async fn reaches(ring: &dyn KeyRing, want: &[SealingKey], what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let got = ring.load().await.expect("load");
        if got == want {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: still {got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The switch store: empty at version 0; a set seen at once by every instance, the version
/// bumped by exactly one per change and not at all for a set that changes nothing; the state
/// before reported; concurrent sets from two instances each counted once (none lost).
pub async fn check_switch_store(a: &dyn SwitchStore, b: &dyn SwitchStore) {
    let fresh = within("a load", a.load()).await.expect("load");
    assert_eq!(fresh.version, 0, "a fresh store is at version 0");
    assert!(fresh.states.is_empty(), "a fresh store holds no state");
    assert_eq!(within("a version read", b.version()).await.expect("version"), 0);

    let on = within("a set", a.set("tool:t", true)).await.expect("set");
    assert_eq!(
        on,
        Switched {
            version: 1,
            previous: None
        },
        "the first set bumps to 1"
    );
    assert_eq!(
        b.version().await.expect("version"),
        1,
        "the other instance sees the version at once"
    );
    let seen = b.load().await.expect("load");
    assert_eq!(seen.version, 1);
    assert_eq!(seen.states.get("tool:t"), Some(&true), "and the state");

    let same = within("a set", b.set("tool:t", true)).await.expect("set");
    assert_eq!(
        same,
        Switched {
            version: 1,
            previous: Some(true)
        },
        "a set that changes nothing keeps the version"
    );
    let off = within("a set", b.set("tool:t", false)).await.expect("set");
    assert_eq!(
        off,
        Switched {
            version: 2,
            previous: Some(true)
        },
        "a change bumps by one"
    );
    assert_eq!(a.load().await.expect("load").states.get("tool:t"), Some(&false));

    // Concurrent sets from both instances: every change gets a version of its own (none lost,
    // none counted twice), and the sets that change nothing move nothing.
    let plan: Vec<(&dyn SwitchStore, &str, bool)> = (0..12)
        .map(|i| {
            (
                if i % 2 == 0 { a } else { b },
                if i % 3 == 0 { "prompt:p" } else { "tool:u" },
                i % 4 < 2,
            )
        })
        .collect();
    let results = within(
        "concurrent sets",
        futures_util::future::join_all(plan.iter().map(|(store, item, on)| store.set(item, *on))),
    )
    .await;
    let mut versions = Vec::new();
    for ((_, _, on), result) in plan.iter().zip(results) {
        let set = result.expect("set");
        if set.previous != Some(*on) {
            versions.push(set.version);
        }
    }
    versions.sort_unstable();
    let want: Vec<u64> = (3..3 + versions.len() as u64).collect();
    assert_eq!(versions, want, "each change has its own version, one after another");
    let last = a.load().await.expect("load");
    assert_eq!(last.version, 2 + want.len() as u64, "the version counts the changes");
    assert_eq!(last.states.len(), 3, "one state per item");
    assert_eq!(
        last,
        b.load().await.expect("load"),
        "both instances read the same states"
    );
    assert_eq!(b.version().await.expect("version"), last.version);
}
