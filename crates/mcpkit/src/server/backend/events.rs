//! The event store: the events of every SSE stream, so that a client resumes a stream with
//! `Last-Event-ID` on whichever instance its reconnection lands (spec: `basic/transports`
//! "Resumability and Redelivery").
//!
//! Event ids are `"{stream}-{position}"` ([`EventId`]): the stream's name (`0` is the session's
//! standalone GET stream, request streams are numbered from 1, prefixed with their instance's
//! tag when instances share the store) and the event's position in it (the priming event of a
//! request stream is position 0).
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use super::BackendFuture;

/// Where an event sits: its stream and its position in it. The wire form (the SSE `id`) is
/// `"{stream}-{position}"`; a stream name is `0` (the session's standalone GET stream) or
/// `{instance tag}.{n}` (a request's stream, named by the instance that opened it), so an id
/// resolves on any instance. [`EventId::parse`] refuses anything else: a forged id is ignored,
/// never looked up under a name the client made.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventId {
    /// The stream's name.
    pub stream: Arc<str>,
    /// The position: grows with every event of the stream; 0 is "before the first".
    pub position: u64,
}

impl EventId {
    /// The id of event `position` of `stream`.
    pub fn new(stream: impl Into<Arc<str>>, position: u64) -> EventId {
        EventId {
            stream: stream.into(),
            position,
        }
    }

    /// Read a `Last-Event-ID`: `None` unless it is an id of the form this module gives out.
    pub fn parse(id: &str) -> Option<EventId> {
        let (stream, position) = id.trim().rsplit_once('-')?;
        if !valid_stream_name(stream) || position.is_empty() || !position.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(EventId::new(stream, position.parse().ok()?))
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.stream, self.position)
    }
}

/// Whether `name` is a stream name this module gives out: digits, optionally `digits.digits`.
pub fn valid_stream_name(name: &str) -> bool {
    let digits = |s: &str| (1..=20).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit());
    match name.split_once('.') {
        None => digits(name),
        Some((tag, n)) => digits(tag) && digits(n),
    }
}

/// Storage for the events of every session's SSE streams.
///
/// - [`append`](EventStore::append) assigns the position: the events of a stream are numbered
///   1, 2, 3… in the order the appends take effect (several instances may append to one
///   stream, such as a session's standalone stream, and their events get one order). A stream
///   evicted and appended to again starts over at 1.
/// - Operations take effect in call order: the method queues (or does) the work before it
///   returns, so two appends to one stream made one after the other keep that order even if
///   their futures are polled in another order, or dropped unpolled (the work still happens;
///   the future only reports its outcome). A caller that knows it is the only writer of a
///   stream can therefore number its events itself and not wait.
/// - [`after`](EventStore::after) gives the kept events of a stream after a position, oldest
///   first, each exactly once.
/// - Bounded: a stream keeps at most a fixed number of events (the oldest go first) and a
///   session a fixed number of streams; a stream not appended to for the store's TTL is gone.
/// - Unknown sessions or streams are empty answers, never errors, and nothing is written for
///   them by `after` or the removals.
pub trait EventStore: std::fmt::Debug + Send + Sync + 'static {
    /// Keep `data` as the next event of `stream` in `session`: its position.
    fn append(&self, session: &str, stream: &str, data: Bytes) -> BackendFuture<u64>;
    /// The kept events of `stream` with a position above `after`, oldest first.
    fn after(&self, session: &str, stream: &str, after: u64) -> BackendFuture<Vec<(u64, Bytes)>>;
    /// The stream will not be resumed (its reply went out as plain JSON, or it is too old).
    fn remove_stream(&self, session: &str, stream: &str) -> BackendFuture<()>;
    /// The session ended.
    fn remove_session(&self, session: &str) -> BackendFuture<()>;
    /// Whether the store answers (`/readyz`).
    fn ready(&self) -> BackendFuture<()> {
        super::ready(Ok(()))
    }
    /// How many events the store keeps now, over every session: the
    /// `mcpkit.server.event_store.events` gauge, sampled every few seconds (never on a request
    /// path). `None` when the store does not count (the default).
    fn events_kept(&self) -> BackendFuture<Option<u64>> {
        super::ready(Ok(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_forgeries_are_refused() {
        let id = EventId::new("12.7", 3);
        assert_eq!(id.to_string(), "12.7-3");
        assert_eq!(EventId::parse("12.7-3"), Some(id));
        assert_eq!(EventId::parse(" 0-9 "), Some(EventId::new("0", 9)));
        for forged in [
            "",
            "-",
            "0-",
            "-1",
            "a-1",
            "0-x",
            "0--1",
            "1.2.3-4",
            "../x-1",
            "0-1 2",
            "1.-2",
            ".1-2",
            "0-+1",
            "0-99999999999999999999999",
        ] {
            assert_eq!(EventId::parse(forged), None, "{forged:?}");
        }
    }
}
