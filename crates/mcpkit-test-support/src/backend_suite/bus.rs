//! The bus: messages to a session, to an instance, and to every instance.

use super::*;

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
