//! Test plumbing shared by the tests of the mcpkit crates (`publish = false`; a dev-dependency
//! only): a timeout wrapper so a hang fails a test instead of blocking it, the validator of the
//! MCP JSON schemas that checks whole wire transcripts, and (feature `auth-server`) the OAuth 2.1
//! authorization-server stand-in used by the OAuth tests of mcpkit and of the `mcpkit` binary,
//! a real `redis-server` per test (`redis`) for the Redis backends, and the scale-out harness:
//! `mcpkit serve` instances behind a real HAProxy ([`cluster`], [`haproxy`]).
#![forbid(unsafe_code)]
// Test plumbing: a panic here is a failing test, which is what a broken expectation should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

pub mod architecture;
#[cfg(feature = "auth-server")]
pub mod auth_server;
#[cfg(feature = "backend-suite")]
pub mod backend_suite;
pub mod cluster;
pub mod haproxy;
#[cfg(feature = "otlp-receiver")]
pub mod otlp_receiver;
pub mod process;
#[cfg(feature = "otlp-receiver")]
pub mod prometheus;
pub mod public_api;
pub mod redis;
pub mod schema;
pub mod sse;

/// How long any single await in a test may take before the test fails. Generous, because the
/// process tests spawn binaries on a machine that may be running many test binaries at once.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// Await `fut`, failing the test (with `what` in the message) if it takes longer than
/// [`STEP_TIMEOUT`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(STEP_TIMEOUT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {STEP_TIMEOUT:?} waiting for {what}"),
    }
}

/// Lock `m`, also when a panicking thread poisoned it (a failed test must still report).
pub(crate) fn sync_lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
