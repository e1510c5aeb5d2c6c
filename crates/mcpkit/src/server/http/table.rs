//! The live sessions of an endpoint, by id: created by `initialize`, found by
//! `Mcp-Session-Id` (by their own caller only), ended by DELETE, idle expiry or shutdown.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::admission::{Admission, Client, Permit, Refused};
use super::config::Clock;
use super::session::HttpSession;

/// A live session with its place in the endpoint's session counts (given back on removal):
/// none for a session another instance opened (it counts there, and in the shared store).
type Entry = (Arc<HttpSession>, Option<Permit>);

pub(super) struct SessionTable {
    sessions: Mutex<HashMap<Arc<str>, Entry>>,
    idle_timeout: Duration,
    admission: Arc<Admission>,
    /// What session idleness is measured with.
    clock: Arc<dyn Clock>,
    /// No session can be idle past the timeout before this instant (a lower bound of the
    /// earliest expiry: activity only moves a session's expiry later). A refused `initialize`
    /// sweeps the table only once it has passed.
    no_expiry_before: Mutex<Instant>,
}

impl SessionTable {
    pub(super) fn new(idle_timeout: Duration, admission: Arc<Admission>, clock: Arc<dyn Clock>) -> SessionTable {
        // Every session is made after this, so none expires before now + the timeout.
        let first = later(clock.now(), idle_timeout);
        SessionTable {
            sessions: Mutex::new(HashMap::new()),
            idle_timeout,
            admission,
            clock,
            no_expiry_before: Mutex::new(first),
        }
    }

    /// How often the reaper looks for idle sessions.
    pub(super) fn reap_period(&self) -> Duration {
        (self.idle_timeout / 4)
            .max(Duration::from_millis(50))
            .min(Duration::from_secs(30))
    }

    /// Add the session `start` makes for `client`, unless the endpoint or the client is at its
    /// session cap. A session idle past the timeout never counts, whether or not the reaper has
    /// come by: at a cap, if one may have expired since the last sweep, the expired ones are
    /// ended and the check is made again. Otherwise the check only counts (no session is looked
    /// at), so a full table of live sessions costs a refused `initialize` nothing, and the
    /// sweeps a cap can cause are bounded by the sessions that expire or are used meanwhile.
    pub(super) fn insert_with(
        &self,
        client: &Client,
        start: impl FnOnce() -> Arc<HttpSession>,
    ) -> Result<Arc<HttpSession>, Refused> {
        let permit = match self.admission.admit(client) {
            Ok(permit) => permit,
            Err(_) if self.clock.now() > *lock(&self.no_expiry_before) => {
                self.expire_idle();
                self.admission.admit(client)?
            }
            Err(refused) => return Err(refused),
        };
        let session = start();
        lock(&self.sessions).insert(session.id.clone(), (session.clone(), Some(permit)));
        Ok(session)
    }

    /// Keep `session`, rebuilt from the shared store, unless a concurrent request rebuilt it
    /// first: the session kept, and whether it is this one.
    pub(super) fn adopt(&self, session: Arc<HttpSession>) -> (Arc<HttpSession>, bool) {
        let mut sessions = lock(&self.sessions);
        if let Some((kept, _)) = sessions.get(&session.id) {
            let kept = kept.clone();
            drop(sessions);
            session.close();
            return (kept, false);
        }
        sessions.insert(session.id.clone(), (session.clone(), None));
        (session, true)
    }

    /// The live session `id` of `client`, marked active: `None` as well when another caller
    /// opened it (to that client it does not exist). A session idle past the timeout is ended
    /// here rather than served, whether or not the reaper has come by yet.
    pub(super) fn get(&self, id: &str, client: &Client) -> Option<Arc<HttpSession>> {
        let session = lock(&self.sessions).get(id).map(|(s, _)| s.clone())?;
        if !client.owns(session.owner.as_deref()) {
            tracing::debug!("session {} named by another caller", session.id);
            return None;
        }
        if session.idle() > self.idle_timeout {
            self.remove(&session);
            tracing::debug!("session {} expired", session.id);
            return None;
        }
        session.touch();
        Some(session)
    }

    /// End `session` and forget it (once: a session already removed is left alone).
    pub(super) fn remove(&self, session: &HttpSession) {
        let removed = lock(&self.sessions).remove(&session.id);
        if removed.is_some() {
            session.close();
        }
        // Its permit goes back here, after the session has ended.
        drop(removed);
    }

    /// End every session idle longer than the timeout. Each session is looked at outside the
    /// table's lock, so requests are not held up meanwhile.
    pub(super) fn expire_idle(&self) {
        let limit = self.idle_timeout;
        // Taken before the sessions: a session added after it expires no sooner than it plus
        // the timeout.
        let now = self.clock.now();
        let all: Vec<Arc<HttpSession>> = lock(&self.sessions).values().map(|(s, _)| s.clone()).collect();
        let mut earliest = later(now, limit);
        for s in all {
            let idle = s.idle();
            if idle > limit {
                tracing::debug!("session {} expired", s.id);
                self.remove(&s);
            } else {
                earliest = earliest.min(later(now, limit - idle));
            }
        }
        *lock(&self.no_expiry_before) = earliest;
    }
}

/// `at` + `by`, or `at` itself when that cannot be represented (a lower bound either way).
fn later(at: Instant, by: Duration) -> Instant {
    at.checked_add(by).unwrap_or(at)
}

/// 128 bits from the OS's CSPRNG, as 32 hex digits (visible ASCII, as the spec requires).
pub(super) fn new_session_id() -> Option<Arc<str>> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>().into())
}

/// Whether `id` could be a session id [`new_session_id`] made (32 lowercase hex digits): anything
/// else is unknown without asking the store.
pub(super) fn plausible_session_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::http::config::Clock;
    use crate::server::http::session::{Launcher, SessionSource};
    use crate::server::http::streams::{StreamLog, StreamSettings};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    #[derive(Debug)]
    struct HandClock(Instant, AtomicU64);

    impl Clock for HandClock {
        fn now(&self) -> Instant {
            self.0 + Duration::from_secs(self.1.load(Ordering::SeqCst))
        }
    }

    /// At the cap, `initialize` is refused from the counts alone while no session can have
    /// expired (the table is not looked at); once one may have, the expired ones are ended
    /// first, and their places taken.
    #[tokio::test]
    async fn the_cap_check_looks_at_the_sessions_only_once_one_may_have_expired() {
        let clock = Arc::new(HandClock(Instant::now(), AtomicU64::new(0)));
        let streams = Arc::new(StreamSettings {
            log: StreamLog::local(Arc::new(crate::server::backend::memory::MemoryEventStore::default())),
            clock: clock.clone(),
            buffer: 16,
            streams_kept: 4,
            stream_prefix: Arc::from(""),
        });
        let launcher = Launcher {
            source: SessionSource::Server(crate::Server::builder().build()),
            sessionless_streams: streams.clone(),
            streams,
            inspector: Default::default(),
        };
        let table = &SessionTable::new(Duration::from_secs(60), Admission::new(2, 2), clock.clone());
        let client = Client::default();
        let start = |n: &str| {
            let (id, launcher): (Arc<str>, _) = (n.into(), &launcher);
            move || launcher.start(id, None, None)
        };
        assert!(table.insert_with(&client, start("a")).is_ok());
        clock.1.store(30, Ordering::SeqCst);
        assert!(table.insert_with(&client, start("b")).is_ok());
        // Not yet past the first one's expiry: refused without a sweep.
        clock.1.store(60, Ordering::SeqCst);
        assert!(matches!(table.insert_with(&client, start("c")), Err(Refused::Full)));
        // "a" is idle past the timeout, "b" not: only "a" goes, and "c" takes its place.
        clock.1.store(61, Ordering::SeqCst);
        assert!(table.insert_with(&client, start("c")).is_ok());
        assert!(lock(&table.sessions).contains_key("b"));
        assert!(!lock(&table.sessions).contains_key("a"));
        assert_eq!(table.admission.count(), 2);
        // The sweep learnt that nothing expires before "b" does (at 90 s).
        assert_eq!(*lock(&table.no_expiry_before), clock.0 + Duration::from_secs(90));
        assert!(matches!(table.insert_with(&client, start("d")), Err(Refused::Full)));
        clock.1.store(200, Ordering::SeqCst);
        table.expire_idle();
        assert_eq!(lock(&table.sessions).len(), 0);
        assert_eq!(table.admission.count(), 0, "expiry gave the places back");
    }
}
