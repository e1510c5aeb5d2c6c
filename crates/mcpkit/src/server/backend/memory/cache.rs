//! [`MemoryCacheStore`]: the response cache of one process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::server::backend::cache::CacheStore;
use crate::server::backend::{ready, BackendFuture};

/// One process's cached results, behind one lock. Bounded in entries and bytes: an entry over
/// a quarter of the byte bound is not kept, and a full store first drops what expired, then
/// refuses new entries until some expire (nothing a client asks for pushes out the rest).
#[derive(Debug)]
pub struct MemoryCacheStore {
    max_entries: usize,
    max_bytes: usize,
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    map: HashMap<String, (Instant, Vec<u8>)>,
    bytes: usize,
}

impl Default for MemoryCacheStore {
    /// At most 10 000 entries and 64 MiB.
    fn default() -> Self {
        MemoryCacheStore::new(10_000, 64 * 1024 * 1024)
    }
}

impl MemoryCacheStore {
    /// A store of at most `max_entries` entries and `max_bytes` bytes of results.
    pub fn new(max_entries: usize, max_bytes: usize) -> MemoryCacheStore {
        MemoryCacheStore {
            max_entries: max_entries.max(1),
            max_bytes,
            entries: Mutex::default(),
        }
    }

    fn put_at(&self, key: &str, value: Vec<u8>, ttl: Duration, now: Instant) {
        if ttl.is_zero() || value.len() > self.max_bytes / 4 {
            return;
        }
        let mut e = crate::sync::lock(&self.entries);
        if let Some((_, old)) = e.map.remove(key) {
            e.bytes -= old.len();
        }
        if e.map.len() >= self.max_entries || e.bytes + value.len() > self.max_bytes {
            let Entries { map, bytes } = &mut *e;
            map.retain(|_, (expiry, v)| {
                let keep = *expiry > now;
                if !keep {
                    *bytes -= v.len();
                }
                keep
            });
            if e.map.len() >= self.max_entries || e.bytes + value.len() > self.max_bytes {
                return;
            }
        }
        e.bytes += value.len();
        e.map.insert(key.to_owned(), (now + ttl, value));
    }

    fn get_at(&self, key: &str, now: Instant) -> Option<Vec<u8>> {
        let e = crate::sync::lock(&self.entries);
        e.map
            .get(key)
            .filter(|(expiry, _)| *expiry > now)
            .map(|(_, v)| v.clone())
    }
}

impl CacheStore for MemoryCacheStore {
    fn get(&self, key: &str) -> BackendFuture<Option<Vec<u8>>> {
        ready(Ok(self.get_at(key, Instant::now())))
    }

    fn put(&self, key: &str, value: Vec<u8>, ttl: Duration) -> BackendFuture<()> {
        self.put_at(key, value, ttl, Instant::now());
        ready(Ok(()))
    }

    fn clear(&self) -> BackendFuture<()> {
        *crate::sync::lock(&self.entries) = Entries::default();
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_bounds_hold() {
        let store = MemoryCacheStore::new(2, 100);
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        store.put_at("a", vec![1; 10], s, t0);
        store.put_at("b", vec![2; 10], 2 * s, t0);
        assert_eq!(store.get_at("a", t0), Some(vec![1; 10]));
        // Full (two entries): a third waits until one expires.
        store.put_at("c", vec![3; 10], s, t0);
        assert_eq!(store.get_at("c", t0), None);
        assert_eq!(store.get_at("a", t0 + s), None, "expired");
        store.put_at("c", vec![3; 10], s, t0 + s);
        assert_eq!(store.get_at("c", t0 + s), Some(vec![3; 10]));
        // Over a quarter of the byte bound: not kept.
        store.put_at("big", vec![0; 26], s, t0 + s);
        assert_eq!(store.get_at("big", t0 + s), None);
    }
}
