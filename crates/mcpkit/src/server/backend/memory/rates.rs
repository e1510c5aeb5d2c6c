//! [`MemoryRateStore`]: the rate-limit buckets of one process.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use crate::server::backend::rates::{gcra, Bucket, RateStore, Taken};
use crate::server::backend::{ready, BackendFuture};

/// The buckets of one process: a map from bucket to the time its next token is due, behind
/// one lock. Bounded: at `capacity` buckets, the full ones (due in the past) are dropped; if
/// none is, a new bucket is refused until one fills (so a flood of new clients cannot grow the
/// map, and existing clients keep their limits).
#[derive(Debug)]
pub struct MemoryRateStore {
    capacity: usize,
    due: Mutex<HashMap<String, u64>>,
}

impl Default for MemoryRateStore {
    /// At most 100 000 buckets.
    fn default() -> Self {
        MemoryRateStore::new(100_000)
    }
}

impl MemoryRateStore {
    /// A store of at most `capacity` buckets (at least 1).
    pub fn new(capacity: usize) -> MemoryRateStore {
        MemoryRateStore {
            capacity: capacity.max(1),
            due: Mutex::new(HashMap::new()),
        }
    }

    /// Microseconds on this process's monotonic clock.
    fn now_us() -> u64 {
        static START: LazyLock<Instant> = LazyLock::new(Instant::now);
        u64::try_from(START.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    fn take_now(&self, buckets: &[Bucket], now: u64) -> Taken {
        let mut due = crate::sync::lock(&self.due);
        let mut next = Vec::with_capacity(buckets.len());
        for (i, b) in buckets.iter().enumerate() {
            match gcra(due.get(&b.key).copied(), now, b.rate) {
                Ok(t) => next.push(t),
                Err(retry_after) => return Taken::Refused { bucket: i, retry_after },
            }
        }
        let new = buckets.iter().filter(|b| !due.contains_key(&b.key)).count();
        if due.len() + new > self.capacity {
            due.retain(|_, t| *t > now);
            if due.len() + new > self.capacity {
                // The soonest bucket to fill makes room then.
                let soonest = due.values().min().map_or(0, |t| t - now);
                return Taken::Refused {
                    bucket: 0,
                    retry_after: Duration::from_micros(soonest.max(1)),
                };
            }
        }
        for (b, t) in buckets.iter().zip(next) {
            due.insert(b.key.clone(), t);
        }
        Taken::Granted
    }
}

impl RateStore for MemoryRateStore {
    fn take(&self, buckets: Vec<Bucket>) -> BackendFuture<Taken> {
        ready(Ok(self.take_now(&buckets, Self::now_us())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::backend::rates::Rate;

    fn bucket(key: &str, rate: Rate) -> Bucket {
        Bucket { key: key.into(), rate }
    }

    #[test]
    fn all_buckets_or_none() {
        let store = MemoryRateStore::default();
        let (wide, narrow) = (Rate::per_second(10), Rate::per_second(1));
        let both = || vec![bucket("client", wide), bucket("tool", narrow)];
        assert_eq!(store.take_now(&both(), 0), Taken::Granted);
        assert!(matches!(store.take_now(&both(), 0), Taken::Refused { bucket: 1, .. }));
        // The refused call took nothing from the client's bucket: 9 more fit.
        for _ in 0..9 {
            assert_eq!(store.take_now(&[bucket("client", wide)], 0), Taken::Granted);
        }
        assert!(matches!(
            store.take_now(&[bucket("client", wide)], 0),
            Taken::Refused { bucket: 0, .. }
        ));
    }

    #[test]
    fn a_full_store_drops_full_buckets_and_refuses_new_ones_while_none_is() {
        let store = MemoryRateStore::new(2);
        let rate = Rate::per_second(1);
        assert_eq!(store.take_now(&[bucket("a", rate)], 0), Taken::Granted);
        assert_eq!(store.take_now(&[bucket("b", rate)], 0), Taken::Granted);
        assert!(matches!(store.take_now(&[bucket("c", rate)], 0), Taken::Refused { .. }));
        // A second on, "a" and "b" are full again and make room.
        assert_eq!(store.take_now(&[bucket("c", rate)], 1_000_000), Taken::Granted);
        assert_eq!(crate::sync::lock(&store.due).len(), 1);
    }
}
