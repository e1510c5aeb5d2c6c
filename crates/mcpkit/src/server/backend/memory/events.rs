//! [`MemoryEventStore`]: every stream's events in a bounded queue.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use crate::server::backend::{ready, BackendFuture, EventStore};
use crate::sync::lock;

/// A bounded in-memory [`EventStore`]: at most `events_per_stream` events per stream and
/// `streams_per_session` streams per session (the oldest streams are dropped first), and a
/// stream not appended to for the TTL (default one hour) is dropped.
#[derive(Debug)]
pub struct MemoryEventStore {
    events_per_stream: usize,
    streams_per_session: usize,
    ttl: Duration,
    sessions: Mutex<HashMap<Arc<str>, SessionEvents>>,
}

#[derive(Debug, Default)]
struct SessionEvents {
    streams: HashMap<Arc<str>, StreamEvents>,
    order: VecDeque<Arc<str>>,
}

#[derive(Debug)]
struct StreamEvents {
    last_position: u64,
    events: VecDeque<(u64, Bytes)>,
    last_append: Instant,
}

impl MemoryEventStore {
    /// A store with the given bounds.
    pub fn new(events_per_stream: usize, streams_per_session: usize) -> Self {
        MemoryEventStore {
            events_per_stream: events_per_stream.max(1),
            streams_per_session: streams_per_session.max(1),
            ttl: Duration::from_secs(3600),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Drop a stream not appended to for `ttl`.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, SessionEvents>> {
        lock(&self.sessions)
    }

    /// Append now (the work of [`EventStore::append`], without the future).
    fn append_now(&self, session: &str, stream: &str, data: Bytes) -> u64 {
        let mut sessions = self.lock();
        let s = match sessions.get_mut(session) {
            Some(s) => s,
            None => sessions.entry(Arc::from(session)).or_default(),
        };
        let now = Instant::now();
        if s.streams
            .get(stream)
            .is_some_and(|e| now.duration_since(e.last_append) >= self.ttl)
        {
            s.streams.remove(stream);
            s.order.retain(|x| &**x != stream);
        }
        if !s.streams.contains_key(stream) {
            let name: Arc<str> = Arc::from(stream);
            s.order.push_back(name.clone());
            while s.order.len() > self.streams_per_session {
                if let Some(old) = s.order.pop_front() {
                    s.streams.remove(&old);
                }
            }
            s.streams.insert(
                name,
                StreamEvents {
                    last_position: 0,
                    events: VecDeque::new(),
                    last_append: now,
                },
            );
        }
        let Some(events) = s.streams.get_mut(stream) else {
            return 0;
        };
        events.last_position += 1;
        events.last_append = now;
        events.events.push_back((events.last_position, data));
        while events.events.len() > self.events_per_stream {
            events.events.pop_front();
        }
        events.last_position
    }
}

impl Default for MemoryEventStore {
    /// 256 events per stream, 64 streams per session.
    fn default() -> Self {
        MemoryEventStore::new(256, 64)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: &str, data: Bytes) -> BackendFuture<u64> {
        ready(Ok(self.append_now(session, stream, data)))
    }

    fn after(&self, session: &str, stream: &str, after: u64) -> BackendFuture<Vec<(u64, Bytes)>> {
        let now = Instant::now();
        let events = self
            .lock()
            .get(session)
            .and_then(|s| s.streams.get(stream))
            .filter(|e| now.duration_since(e.last_append) < self.ttl)
            .map(|e| e.events.iter().filter(|(p, _)| *p > after).cloned().collect())
            .unwrap_or_default();
        ready(Ok(events))
    }

    fn remove_stream(&self, session: &str, stream: &str) -> BackendFuture<()> {
        let mut sessions = self.lock();
        if let Some(s) = sessions.get_mut(session) {
            if s.streams.remove(stream).is_some() {
                s.order.retain(|x| &**x != stream);
            }
            if s.streams.is_empty() {
                // Nothing left to replay: an idle session keeps no allocation here.
                sessions.remove(session);
            }
        }
        ready(Ok(()))
    }

    fn remove_session(&self, session: &str) -> BackendFuture<()> {
        self.lock().remove(session);
        ready(Ok(()))
    }

    fn events_kept(&self) -> BackendFuture<Option<u64>> {
        let now = Instant::now();
        let kept: usize = self
            .lock()
            .values()
            .flat_map(|s| s.streams.values())
            .filter(|e| now.duration_since(e.last_append) < self.ttl)
            .map(|e| e.events.len())
            .sum();
        ready(Ok(Some(kept as u64)))
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

    fn positions(store: &MemoryEventStore, session: &str, stream: &str, after: u64) -> Vec<u64> {
        now(store.after(session, stream, after))
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    }

    #[test]
    fn bounded_per_stream_and_per_session() {
        let store = MemoryEventStore::new(3, 2);
        for n in 1..=5 {
            assert_eq!(now(store.append("s", "1.1", Bytes::from(format!("e{n}")))), n);
        }
        assert_eq!(positions(&store, "s", "1.1", 0), [3, 4, 5]);
        assert_eq!(positions(&store, "s", "1.1", 4), [5]);
        now(store.append("s", "1.2", Bytes::new()));
        now(store.append("s", "0", Bytes::new()));
        assert!(
            positions(&store, "s", "1.1", 0).is_empty(),
            "the oldest stream is dropped first"
        );
        assert_eq!(positions(&store, "s", "0", 0), [1]);
        assert!(positions(&store, "other", "0", 0).is_empty());
        now(store.remove_stream("s", "0"));
        assert!(positions(&store, "s", "0", 0).is_empty());
        now(store.remove_session("s"));
        assert!(positions(&store, "s", "1.2", 0).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_left_alone_for_its_ttl_is_gone() {
        let store = MemoryEventStore::new(8, 8).with_ttl(Duration::from_secs(60));
        now(store.append("s", "0", Bytes::from_static(b"a")));
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(positions(&store, "s", "0", 0), [1]);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(positions(&store, "s", "0", 0).is_empty());
        assert_eq!(
            now(store.append("s", "0", Bytes::from_static(b"b"))),
            1,
            "it starts over"
        );
    }
}
