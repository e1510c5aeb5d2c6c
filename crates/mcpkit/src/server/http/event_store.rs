//! Where SSE events are kept so a client can resume a stream with `Last-Event-ID`
//! (spec: `basic/transports` "Resumability and Redelivery"): the [`EventStore`] backend (see
//! [`crate::server::backend`]), re-exported here where the HTTP settings name it.
//!
//! Event ids are `"{stream}-{position}"` ([`EventId`]): the stream's name (`0` is the session's
//! standalone GET stream, request streams are numbered from 1, prefixed with their instance's
//! tag when instances share the store) and the event's position in it (the priming event of a
//! request stream is position 0).

pub use crate::server::backend::memory::MemoryEventStore;
pub use crate::server::backend::{EventId, EventStore};
