//! [`RateStore`]: the token buckets of the rate-limit layer, kept where every instance of a
//! deployment counts in the same buckets.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::BackendFuture;

/// A token bucket's rate: at most `burst` requests at once, refilled at `burst` per `per`
/// (`Rate::per_second(10)`: 10 at once, then one every 100 ms). Written `N/s`, `N/m` or `N/h`
/// on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    /// Requests allowed at once, and per `per`.
    pub burst: u32,
    /// The window `burst` requests are refilled over.
    pub per: Duration,
}

impl Rate {
    /// `burst` requests per `per` (a `burst` of 0 counts as 1, a zero `per` as a microsecond).
    pub fn new(burst: u32, per: Duration) -> Rate {
        Rate {
            burst: burst.max(1),
            per: per.max(Duration::from_micros(1)),
        }
    }

    /// `n` requests per second.
    pub fn per_second(n: u32) -> Rate {
        Rate::new(n, Duration::from_secs(1))
    }

    /// `n` requests per minute.
    pub fn per_minute(n: u32) -> Rate {
        Rate::new(n, Duration::from_secs(60))
    }

    /// The time one token takes to come back, in microseconds (at least 1).
    pub fn interval_us(&self) -> u64 {
        let per = u64::try_from(self.per.as_micros()).unwrap_or(u64::MAX);
        (per / u64::from(self.burst.max(1))).max(1)
    }

    /// The window in microseconds: how far ahead of now a bucket may be booked.
    pub fn window_us(&self) -> u64 {
        u64::try_from(self.per.as_micros()).unwrap_or(u64::MAX).max(1)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.per.as_secs() {
            1 if self.per.subsec_nanos() == 0 => write!(f, "{}/s", self.burst),
            60 if self.per.subsec_nanos() == 0 => write!(f, "{}/m", self.burst),
            3600 if self.per.subsec_nanos() == 0 => write!(f, "{}/h", self.burst),
            _ => write!(f, "{} per {:?}", self.burst, self.per),
        }
    }
}

impl FromStr for Rate {
    type Err = String;

    /// `N/s`, `N/m` or `N/h` (N ≥ 1).
    fn from_str(s: &str) -> Result<Rate, String> {
        let bad = || format!("{s:?} is not a rate: write N/s, N/m or N/h (for example 10/s)");
        let (n, unit) = s.trim().split_once('/').ok_or_else(bad)?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(bad());
        }
        let per = match unit.trim() {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            _ => return Err(bad()),
        };
        Ok(Rate::new(n, Duration::from_secs(per)))
    }
}

/// One bucket to take a token from: its key (built by the layer from the client, tool or
/// nothing; an implementation hashes it before naming anything with it) and its rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// The bucket's name.
    pub key: String,
    /// Its rate.
    pub rate: Rate,
}

/// What [`RateStore::take`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// A token was taken from every bucket.
    Granted,
    /// Bucket `bucket` (its index in the request) is empty; nothing was taken from any. It
    /// has a token again after `retry_after`.
    Refused {
        /// Which bucket refused.
        bucket: usize,
        /// When to try again.
        retry_after: Duration,
    },
}

/// The token buckets of the rate-limit layer (GCRA: each bucket is the time its next token
/// is due, so it is one number). The in-memory store (`memory::MemoryRateStore`) counts in
/// one process; `mcpkit-redis` counts across every instance sharing the Redis.
///
/// The contract: [`RateStore::take`] takes one token from every bucket named or from none
/// (atomically: two instances never both take the last token), in one operation (one round
/// trip for a store over the network); a bucket unused for its window costs nothing (it is
/// forgotten); the store is bounded.
pub trait RateStore: Send + Sync + fmt::Debug + 'static {
    /// Take a token from each of `buckets`, or from none.
    fn take(&self, buckets: Vec<Bucket>) -> BackendFuture<Taken>;
}

/// GCRA for one bucket at `now_us`, given the time its next token is due (`None`: full):
/// `Ok(new due time)` when a token can be taken, else `Err(wait)`.
pub fn gcra(due_us: Option<u64>, now_us: u64, rate: Rate) -> Result<u64, Duration> {
    let due = due_us.unwrap_or(now_us).max(now_us);
    let next = due.saturating_add(rate.interval_us());
    let ahead = next - now_us;
    if ahead <= rate.window_us() {
        Ok(next)
    } else {
        Err(Duration::from_micros(ahead - rate.window_us()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_as_written_on_the_command_line() {
        assert_eq!("10/s".parse::<Rate>(), Ok(Rate::per_second(10)));
        assert_eq!(" 3 / m ".parse::<Rate>(), Ok(Rate::per_minute(3)));
        assert_eq!("1/h".parse::<Rate>().map(|r| r.per), Ok(Duration::from_secs(3600)));
        for bad in ["0/s", "10", "x/s", "10/d", ""] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
        assert_eq!(Rate::per_second(10).to_string(), "10/s");
    }

    #[test]
    fn a_bucket_grants_its_burst_then_one_per_interval() {
        let rate = Rate::per_second(4); // a token every 250 ms
        let mut due = None;
        for _ in 0..4 {
            due = Some(gcra(due, 0, rate).unwrap());
        }
        assert_eq!(gcra(due, 0, rate), Err(Duration::from_millis(250)));
        assert_eq!(gcra(due, 100_000, rate), Err(Duration::from_millis(150)));
        assert!(gcra(due, 250_000, rate).is_ok());
        // Unused for its window, a bucket is full again.
        assert_eq!(gcra(due, 2_000_000, rate), Ok(2_250_000));
    }
}
