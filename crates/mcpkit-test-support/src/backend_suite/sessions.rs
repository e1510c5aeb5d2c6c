//! The session store: records, updates, expiry, the cap, and the per-client cap.

use super::*;

/// The caps of a `create`.
fn limits(max_sessions: usize, max_per_client: usize, ttl: Duration) -> SessionLimits {
    SessionLimits {
        max_sessions,
        max_per_client,
        ttl,
    }
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
