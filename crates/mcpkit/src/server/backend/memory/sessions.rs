//! [`MemorySessionStore`]: session records in a map, expiring by the runtime's clock.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::server::backend::sessions::now_ms;
use crate::server::backend::{
    ready, Admitted, BackendFuture, SessionLimits, SessionRecord, SessionStore, SessionUpdate,
};
use crate::sync::lock;

/// Session records in memory. Expiry is lazy: an expired record is dropped when it is next
/// looked at, all of them when a `create` finds the store at its cap, and a client's when a
/// `create` finds that client at its cap.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    records: Mutex<Records>,
}

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> MemorySessionStore {
        MemorySessionStore::default()
    }
}

/// The records with their expiry, and the ids of each client's (the per-client cap's count).
#[derive(Debug, Default)]
struct Records {
    by_id: HashMap<String, (SessionRecord, Instant)>,
    /// Every record with a `client` is in its client's set, live or not yet dropped.
    by_client: HashMap<String, HashSet<String>>,
}

impl Records {
    fn remove(&mut self, id: &str) -> Option<(SessionRecord, Instant)> {
        let removed = self.by_id.remove(id)?;
        if let Some(client) = &removed.0.client {
            if let Some(ids) = self.by_client.get_mut(client) {
                ids.remove(id);
                if ids.is_empty() {
                    self.by_client.remove(client);
                }
            }
        }
        Some(removed)
    }

    /// The live record `id` (an expired one is dropped).
    fn live(&mut self, id: &str) -> Option<&mut (SessionRecord, Instant)> {
        let expired = self.by_id.get(id).is_some_and(|(_, until)| *until <= Instant::now());
        if expired {
            self.remove(id);
            return None;
        }
        self.by_id.get_mut(id)
    }

    /// Drop every expired record.
    fn sweep(&mut self) {
        let now = Instant::now();
        let expired: Vec<String> = self
            .by_id
            .iter()
            .filter(|(_, (_, until))| *until <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.remove(&id);
        }
    }

    /// How many of `client`'s records are counted: all of its set, its expired ones dropped
    /// first when the set is at `cap` (so the work is bounded by the cap, not the store).
    fn client_count(&mut self, client: &str, cap: usize) -> usize {
        let Some(ids) = self.by_client.get(client) else {
            return 0;
        };
        if ids.len() < cap {
            return ids.len();
        }
        let now = Instant::now();
        let expired: Vec<String> = ids
            .iter()
            .filter(|id| self.by_id.get(*id).is_none_or(|(_, until)| *until <= now))
            .cloned()
            .collect();
        for id in expired {
            self.remove(&id);
        }
        self.by_client.get(client).map_or(0, HashSet::len)
    }
}

impl SessionStore for MemorySessionStore {
    fn create(
        &self,
        mut record: SessionRecord,
        client: Option<String>,
        limits: SessionLimits,
    ) -> BackendFuture<Admitted> {
        let SessionLimits {
            max_sessions,
            max_per_client,
            ttl,
        } = limits;
        let mut records = lock(&self.records);
        if records.live(&record.id).is_some() {
            return ready(Ok(Admitted::Duplicate));
        }
        if let Some(c) = &client {
            if records.client_count(c, max_per_client) >= max_per_client {
                return ready(Ok(Admitted::ClientFull));
            }
        }
        if records.by_id.len() >= max_sessions {
            records.sweep();
            if records.by_id.len() >= max_sessions {
                return ready(Ok(Admitted::Full));
            }
        }
        let now = Instant::now();
        if let Some(c) = &client {
            records
                .by_client
                .entry(c.clone())
                .or_default()
                .insert(record.id.clone());
        }
        record.client = client;
        records.by_id.insert(record.id.clone(), (record, now + ttl));
        ready(Ok(Admitted::Yes))
    }

    fn get(&self, id: &str) -> BackendFuture<Option<SessionRecord>> {
        let mut records = lock(&self.records);
        ready(Ok(records.live(id).map(|(r, _)| r.clone())))
    }

    fn update(&self, id: &str, change: SessionUpdate) -> BackendFuture<bool> {
        let mut records = lock(&self.records);
        let found = records.live(id).map(|(r, _)| r.apply(&change)).is_some();
        ready(Ok(found))
    }

    fn touch(&self, id: &str, ttl: Duration) -> BackendFuture<bool> {
        let mut records = lock(&self.records);
        let found = records
            .live(id)
            .map(|(r, until)| {
                r.last_seen_ms = now_ms();
                *until = Instant::now() + ttl;
            })
            .is_some();
        ready(Ok(found))
    }

    fn delete(&self, id: &str) -> BackendFuture<bool> {
        let mut records = lock(&self.records);
        let found = records.live(id).is_some();
        records.remove(id);
        ready(Ok(found))
    }

    fn count(&self) -> BackendFuture<usize> {
        let mut records = lock(&self.records);
        records.sweep();
        ready(Ok(records.by_id.len()))
    }

    fn live(&self) -> BackendFuture<Vec<SessionRecord>> {
        let mut records = lock(&self.records);
        records.sweep();
        ready(Ok(records.by_id.values().map(|(r, _)| r.clone()).collect()))
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
        let two = SessionLimits {
            max_sessions: 2,
            max_per_client: usize::MAX,
            ttl,
        };
        assert_eq!(
            now(store.create(SessionRecord::new("a", None), None, two)),
            Admitted::Yes
        );
        assert_eq!(
            now(store.create(SessionRecord::new("a", None), None, two)),
            Admitted::Duplicate
        );
        assert_eq!(
            now(store.create(SessionRecord::new("b", None), None, two)),
            Admitted::Yes
        );
        assert_eq!(
            now(store.create(SessionRecord::new("c", None), None, two)),
            Admitted::Full
        );
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
        assert_eq!(
            now(store.create(SessionRecord::new("c", None), None, two)),
            Admitted::Yes
        );
        assert!(now(store.delete("a")));
        assert!(!now(store.delete("a")));
        assert!(!now(store.touch("a", ttl)));
        assert_eq!(now(store.count()), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_at_its_cap_gets_a_place_back_on_delete_and_expiry() {
        let store = MemorySessionStore::new();
        let ttl = Duration::from_secs(10);
        let of = |id: &str, client: &str| {
            store.create(
                SessionRecord::new(id, None),
                Some(client.to_owned()),
                SessionLimits {
                    max_sessions: 10,
                    max_per_client: 2,
                    ttl,
                },
            )
        };
        assert_eq!(now(of("a1", "alice")), Admitted::Yes);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(now(of("a2", "alice")), Admitted::Yes);
        assert_eq!(now(of("a3", "alice")), Admitted::ClientFull);
        assert_eq!(now(of("b1", "bob")), Admitted::Yes);
        assert_eq!(now(store.get("a2")).and_then(|r| r.client), Some("alice".to_owned()));
        assert!(now(store.delete("a2")));
        assert_eq!(now(of("a3", "alice")), Admitted::Yes, "a delete gives the place back");
        assert_eq!(now(of("a4", "alice")), Admitted::ClientFull);
        tokio::time::advance(Duration::from_secs(6)).await;
        assert_eq!(now(of("a4", "alice")), Admitted::Yes, "a1 expired: its place is free");
        assert_eq!(now(of("a5", "alice")), Admitted::ClientFull);
        assert_eq!(now(store.count()), 3);
    }
}
