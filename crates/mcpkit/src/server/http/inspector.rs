//! [`HttpServer::inspect`](super::HttpServer::inspect): every JSON-RPC message the endpoint
//! reads from its clients and writes to them, shown to one callback, in both eras and on the
//! legacy HTTP+SSE endpoints (for wire tracing, such as `mcpkit serve --http --trace-wire`).
//! It sees the messages where the endpoint hands them to the engine and takes them back, once
//! each: a replayed SSE event is not shown again.

use std::sync::Arc;

use crate::transport::inspect::{Direction, Observed};

/// The callback of [`HttpServer::inspect`](super::HttpServer::inspect).
pub(super) type Observer = dyn Fn(Direction, Observed<'_>) + Send + Sync;

/// The endpoint's observer, when it has one (cloned into every session).
#[derive(Clone, Default)]
pub(super) struct Inspector(Option<Arc<Observer>>);

impl Inspector {
    pub(super) fn new(observe: impl Fn(Direction, Observed<'_>) + Send + Sync + 'static) -> Inspector {
        Inspector(Some(Arc::new(observe)))
    }

    /// A message a client sent (a POST body).
    pub(super) fn incoming(&self, frame: &[u8]) {
        if let Some(observe) = &self.0 {
            observe(Direction::Incoming, Observed::Message(frame));
        }
    }

    /// A message for a client. Empty frames (stream controls, not messages) are not shown.
    pub(super) fn outgoing(&self, frame: &[u8]) {
        if let (Some(observe), false) = (&self.0, frame.is_empty()) {
            observe(Direction::Outgoing, Observed::Message(frame));
        }
    }

    /// The observer itself (to wrap a transport with [`crate::transport::inspect`]).
    pub(super) fn observer(&self) -> Option<Arc<Observer>> {
        self.0.clone()
    }
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Inspector(on)"
        } else {
            "Inspector(off)"
        })
    }
}
