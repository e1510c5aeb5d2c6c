//! The switch store: on/off states shared by every instance, with a version per change.

use super::*;

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
