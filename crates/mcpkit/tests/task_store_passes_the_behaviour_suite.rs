//! The in-memory task store passes the behaviour suite every task store must pass (the same
//! function a database store's tests call): states, owner checks, bounds, expiry.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use mcpkit::server::extensions::tasks::{check_task_store, MemoryTaskStore};

#[tokio::test]
async fn the_memory_store_behaves_as_every_task_store_must() {
    check_task_store(MemoryTaskStore::new).await;
}
