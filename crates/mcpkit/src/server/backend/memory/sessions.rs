//! [`MemorySessionStore`]: session records in a map, expiring by the runtime's clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::server::backend::sessions::now_ms;
use crate::server::backend::{ready, Admitted, BackendFuture, SessionRecord, SessionStore, SessionUpdate};
use crate::sync::lock;

/// Session records in memory. Expiry is lazy: an expired record is dropped when it is next
/// looked at, and all of them when a `create` finds the store at its cap.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    records: Mutex<HashMap<String, (SessionRecord, Instant)>>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> MemorySessionStore {
        MemorySessionStore::default()
    }
}

fn live<'a>(
    records: &'a mut HashMap<String, (SessionRecord, Instant)>,
    id: &str,
) -> Option<&'a mut (SessionRecord, Instant)> {
    let expired = records.get(id).is_some_and(|(_, until)| *until <= Instant::now());
    if expired {
        records.remove(id);
        return None;
    }
    records.get_mut(id)
}

impl SessionStore for MemorySessionStore {
    fn create(&self, record: SessionRecord, max_sessions: usize, ttl: Duration) -> BackendFuture<Admitted> {
        let mut records = lock(&self.records);
        if live(&mut records, &record.id).is_some() {
            return ready(Ok(Admitted::Duplicate));
        }
        let now = Instant::now();
        if records.len() >= max_sessions {
            records.retain(|_, (_, until)| *until > now);
            if records.len() >= max_sessions {
                return ready(Ok(Admitted::Full));
            }
        }
        records.insert(record.id.clone(), (record, now + ttl));
        ready(Ok(Admitted::Yes))
    }

    fn get(&self, id: &str) -> BackendFuture<Option<SessionRecord>> {
        let mut records = lock(&self.records);
        ready(Ok(live(&mut records, id).map(|(r, _)| r.clone())))
    }

    fn update(&self, id: &str, change: SessionUpdate) -> BackendFuture<bool> {
        let mut records = lock(&self.records);
        let found = live(&mut records, id).map(|(r, _)| r.apply(&change)).is_some();
        ready(Ok(found))
    }

    fn touch(&self, id: &str, ttl: Duration) -> BackendFuture<bool> {
        let mut records = lock(&self.records);
        let found = live(&mut records, id)
            .map(|(r, until)| {
                r.last_seen_ms = now_ms();
                *until = Instant::now() + ttl;
            })
            .is_some();
        ready(Ok(found))
    }

    fn delete(&self, id: &str) -> BackendFuture<bool> {
        let mut records = lock(&self.records);
        let found = live(&mut records, id).is_some();
        records.remove(id);
        ready(Ok(found))
    }

    fn count(&self) -> BackendFuture<usize> {
        let mut records = lock(&self.records);
        let now = Instant::now();
        records.retain(|_, (_, until)| *until > now);
        ready(Ok(records.len()))
    }

    fn live(&self) -> BackendFuture<Vec<SessionRecord>> {
        let mut records = lock(&self.records);
        let now = Instant::now();
        records.retain(|_, (_, until)| *until > now);
        ready(Ok(records.values().map(|(r, _)| r.clone()).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    fn now<T>(f: BackendFuture<T>) -> T {
        match f.now_or_never() {
            Some(Ok(v)) => v,
            _ => panic!("a memory store answers at once"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn records_expire_and_the_cap_counts_live_ones() {
        let store = MemorySessionStore::new();
        let ttl = Duration::from_secs(10);
        assert_eq!(now(store.create(SessionRecord::new("a", None), 2, ttl)), Admitted::Yes);
        assert_eq!(
            now(store.create(SessionRecord::new("a", None), 2, ttl)),
            Admitted::Duplicate
        );
        assert_eq!(now(store.create(SessionRecord::new("b", None), 2, ttl)), Admitted::Yes);
        assert_eq!(now(store.create(SessionRecord::new("c", None), 2, ttl)), Admitted::Full);
        assert!(now(store.update("a", SessionUpdate::Subscribe("file:///x".into()))));
        assert!(!now(store.update("nope", SessionUpdate::Initialized)));
        assert_eq!(now(store.get("nope")), None);
        tokio::time::advance(Duration::from_secs(6)).await;
        assert!(now(store.touch("a", ttl)));
        tokio::time::advance(Duration::from_secs(6)).await;
        assert_eq!(now(store.get("b")), None, "b expired");
        let a = now(store.get("a")).map(|r| r.subscriptions.into_iter().collect::<Vec<_>>());
        assert_eq!(a, Some(vec!["file:///x".to_owned()]), "a was touched");
        assert_eq!(now(store.count()), 1);
        assert_eq!(now(store.create(SessionRecord::new("c", None), 2, ttl)), Admitted::Yes);
        assert!(now(store.delete("a")));
        assert!(!now(store.delete("a")));
        assert!(!now(store.touch("a", ttl)));
        assert_eq!(now(store.count()), 1);
    }
}
