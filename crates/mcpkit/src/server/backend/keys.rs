//! The key ring: the keys that seal `requestState`, shared so that a state sealed by one
//! instance opens on every other.

use std::fmt;

use super::BackendFuture;

/// One sealing key: its id (in every sealed state) and its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct SealingKey {
    /// Short, printable, unique within the ring (`[A-Za-z0-9_-]`).
    pub id: String,
    /// At least 32 random bytes.
    pub secret: Vec<u8>,
}

impl fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("SealingKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl SealingKey {
    /// A fresh random 256-bit key with a random 8-character id; `None` when the OS random
    /// source fails (a guessable key would make every state forgeable).
    pub fn random() -> Option<SealingKey> {
        let mut secret = vec![0u8; 32];
        let mut id = [0u8; 6];
        getrandom::fill(&mut secret).ok()?;
        getrandom::fill(&mut id).ok()?;
        use base64::Engine as _;
        Some(SealingKey {
            id: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id),
            secret,
        })
    }
}

/// Storage of the `requestState` keys: the current key first, then the previous ones.
///
/// - [`load`](KeyRing::load) creates the ring when there is none, once for all instances (two
///   instances starting together get the same key), and never answers an empty ring.
/// - [`rotate`](KeyRing::rotate) puts a new key first; the old current key and at most
///   `keep_previous` earlier ones still open (states in flight stay valid).
/// - A clustered HTTP server loads it again every second, so an implementation should answer
///   from a cache while it knows the ring unchanged (the Redis one drops its cache when a
///   rotation is announced).
pub trait KeyRing: std::fmt::Debug + Send + Sync + 'static {
    /// The keys, current first (made on first use).
    fn load(&self) -> BackendFuture<Vec<SealingKey>>;
    /// Make a new current key, keep `keep_previous` older ones: the keys after rotation.
    fn rotate(&self, keep_previous: usize) -> BackendFuture<Vec<SealingKey>>;
    /// Whether the ring answers (`/readyz`).
    fn ready(&self) -> BackendFuture<()> {
        super::ready(Ok(()))
    }
}
