//! The key ring: made once for every instance, rotated keeping the previous keys.

use super::*;

/// The key ring: made once for all instances (also when they start together), shared, and a
/// rotation reaches every instance (within 5 s) keeping the previous keys asked for.
pub async fn check_key_ring(a: &dyn KeyRing, b: &dyn KeyRing) {
    let (ka, kb) = within("two first loads", futures_util::future::join(a.load(), b.load())).await;
    let (ka, kb) = (ka.expect("load"), kb.expect("load"));
    assert_eq!(ka.len(), 1, "a new ring has one key");
    assert_eq!(ka, kb, "instances starting together share one key");
    assert!(ka[0].secret.len() >= 32, "keys are at least 256 bits");
    assert!(RequestStateKeys::from_ring(&ka).is_some());
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
