//! [`MemoryKeyRing`]: the `requestState` keys of the servers of one process.

use std::sync::Mutex;

use crate::server::backend::{ready, BackendError, BackendFuture, KeyRing, SealingKey};
use crate::sync::lock;

/// A key ring in memory: made on first [`KeyRing::load`], rotated by [`KeyRing::rotate`].
#[derive(Debug, Default)]
pub struct MemoryKeyRing {
    keys: Mutex<Vec<SealingKey>>,
}

impl MemoryKeyRing {
    /// A ring holding `keys` (current first), for servers that bring their own.
    pub fn with_keys(keys: Vec<SealingKey>) -> MemoryKeyRing {
        MemoryKeyRing { keys: Mutex::new(keys) }
    }
}

fn no_randomness() -> BackendError {
    BackendError::Unavailable("the OS random source failed: no requestState key could be made".into())
}

impl KeyRing for MemoryKeyRing {
    fn load(&self) -> BackendFuture<Vec<SealingKey>> {
        let mut keys = lock(&self.keys);
        if keys.is_empty() {
            match SealingKey::random() {
                Some(k) => keys.push(k),
                None => return ready(Err(no_randomness())),
            }
        }
        ready(Ok(keys.clone()))
    }

    fn rotate(&self, keep_previous: usize) -> BackendFuture<Vec<SealingKey>> {
        let Some(new) = SealingKey::random() else {
            return ready(Err(no_randomness()));
        };
        let mut keys = lock(&self.keys);
        keys.insert(0, new);
        keys.truncate(keep_previous.saturating_add(1));
        ready(Ok(keys.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn made_once_then_rotated_keeping_the_previous() {
        let ring = MemoryKeyRing::default();
        let first = ring.load().await.unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(ring.load().await.unwrap(), first, "made once");
        let rotated = ring.rotate(1).await.unwrap();
        assert_eq!(rotated.len(), 2);
        assert_eq!(rotated[1], first[0]);
        let again = ring.rotate(1).await.unwrap();
        assert_eq!(again.len(), 2);
        assert_eq!(again[1], rotated[0], "only one previous key kept");
    }
}
