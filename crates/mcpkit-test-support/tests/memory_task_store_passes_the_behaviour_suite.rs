//! The in-memory task store passes the behaviour suite every task store must pass (the same
//! function a database store's tests call): states, owner checks, bounds, expiry.
// Compiled by `cargo test --workspace` (mcpkit-redis turns the feature on) or with
// `--features backend-suite`.
#![cfg(feature = "backend-suite")]

use mcpkit::server::backend::memory::MemoryTaskStore;
use mcpkit_test_support::backend_suite::check_task_store;

#[tokio::test]
async fn the_memory_store_behaves_as_every_task_store_must() {
    check_task_store(MemoryTaskStore::new).await;
}
