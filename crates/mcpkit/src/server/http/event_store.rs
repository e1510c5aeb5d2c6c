//! Where SSE events are kept so a client can resume a stream with `Last-Event-ID`
//! (spec: `basic/transports` "Resumability and Redelivery").
//!
//! Event ids are `"{stream}-{seq}"`: the stream number (0 is the standalone GET stream, request
//! streams count up from 1) and a sequence number that grows by one per event of that stream.
//! A store only keeps bytes; which stream is live is the session's business.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

/// Storage for the events of every session's streams. Implement it over a shared database to
/// let a client resume on another instance; [`MemoryEventStore`] is the default.
pub trait EventStore: std::fmt::Debug + Send + Sync + 'static {
    /// Keep event `seq` of `stream` in `session`.
    fn append(&self, session: &str, stream: u64, seq: u64, data: Bytes);
    /// The kept events of `stream` with a sequence number above `after`, oldest first.
    fn after(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, Bytes)>;
    /// The stream will not be resumed (its reply went out as plain JSON, or it is too old).
    fn remove_stream(&self, session: &str, stream: u64);
    /// The session ended.
    fn remove_session(&self, session: &str);
}

/// A bounded in-memory [`EventStore`]: at most `events_per_stream` events per stream and
/// `streams_per_session` streams per session (the oldest streams are dropped first).
#[derive(Debug)]
pub struct MemoryEventStore {
    events_per_stream: usize,
    streams_per_session: usize,
    sessions: Mutex<HashMap<Arc<str>, SessionEvents>>,
}

#[derive(Debug, Default)]
struct SessionEvents {
    streams: HashMap<u64, VecDeque<(u64, Bytes)>>,
    order: VecDeque<u64>,
}

impl MemoryEventStore {
    /// A store with the given bounds.
    pub fn new(events_per_stream: usize, streams_per_session: usize) -> Self {
        MemoryEventStore {
            events_per_stream: events_per_stream.max(1),
            streams_per_session: streams_per_session.max(1),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, SessionEvents>> {
        crate::sync::lock(&self.sessions)
    }
}

impl Default for MemoryEventStore {
    /// 256 events per stream, 64 streams per session.
    fn default() -> Self {
        MemoryEventStore::new(256, 64)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, data: Bytes) {
        let mut sessions = self.lock();
        let s = match sessions.get_mut(session) {
            Some(s) => s,
            None => sessions.entry(Arc::from(session)).or_default(),
        };
        if !s.streams.contains_key(&stream) {
            s.order.push_back(stream);
            while s.order.len() > self.streams_per_session {
                if let Some(old) = s.order.pop_front() {
                    s.streams.remove(&old);
                }
            }
        }
        let events = s.streams.entry(stream).or_default();
        events.push_back((seq, data));
        while events.len() > self.events_per_stream {
            events.pop_front();
        }
    }

    fn after(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, Bytes)> {
        self.lock()
            .get(session)
            .and_then(|s| s.streams.get(&stream))
            .map(|events| events.iter().filter(|(seq, _)| *seq > after).cloned().collect())
            .unwrap_or_default()
    }

    fn remove_stream(&self, session: &str, stream: u64) {
        let mut sessions = self.lock();
        if let Some(s) = sessions.get_mut(session) {
            if s.streams.remove(&stream).is_some() {
                s.order.retain(|x| *x != stream);
            }
            if s.streams.is_empty() {
                // Nothing left to replay: an idle session keeps no allocation here.
                sessions.remove(session);
            }
        }
    }

    fn remove_session(&self, session: &str) {
        self.lock().remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_per_stream_and_per_session() {
        let store = MemoryEventStore::new(3, 2);
        for seq in 1..=5 {
            store.append("s", 1, seq, Bytes::from(format!("e{seq}")));
        }
        let kept: Vec<u64> = store.after("s", 1, 0).into_iter().map(|(s, _)| s).collect();
        assert_eq!(kept, [3, 4, 5]);
        assert_eq!(store.after("s", 1, 4).len(), 1);
        store.append("s", 2, 1, Bytes::new());
        store.append("s", 3, 1, Bytes::new());
        assert!(store.after("s", 1, 0).is_empty(), "the oldest stream is dropped first");
        assert_eq!(store.after("s", 3, 0).len(), 1);
        assert!(store.after("other", 3, 0).is_empty());
        store.remove_stream("s", 3);
        assert!(store.after("s", 3, 0).is_empty());
        store.remove_session("s");
        assert!(store.after("s", 2, 0).is_empty());
    }
}
