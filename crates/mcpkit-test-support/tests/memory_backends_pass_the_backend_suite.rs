//! The in-memory backends pass the backend behaviour suite (the same checks the Redis backends
//! pass): two servers of one process sharing one `Backends` act as two instances.
// Compiled by `cargo test --workspace` (mcpkit-redis turns the feature on) or with
// `--features backend-suite`.
#![cfg(feature = "backend-suite")]

use std::sync::Arc;

use mcpkit::server::backend::memory::MemoryEventStore;
use mcpkit::server::backend::Backends;
use mcpkit_test_support::backend_suite::{check_backends, EventBounds};

#[tokio::test]
async fn memory_backends_behave_as_every_backend_must() {
    check_backends(async |bounds: EventBounds| {
        let a = Backends {
            events: Arc::new(
                MemoryEventStore::new(bounds.events_per_stream, bounds.streams_per_session).with_ttl(bounds.ttl),
            ),
            ..Backends::memory()
        }
        .with_instance_id("a");
        let b = a.clone().with_instance_id("b");
        (a, b)
    })
    .await;
}
