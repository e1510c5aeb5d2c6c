//! The event store: streams per session, positions, bounds, resumption from either instance.

use super::*;

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
