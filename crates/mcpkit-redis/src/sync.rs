//! A poison-tolerant lock: a panic elsewhere never turns every later request into a panic.

use std::sync::{Mutex, MutexGuard};

/// Lock `m`, taking the data even if a holder panicked.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
