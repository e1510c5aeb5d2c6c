//! The live sessions of an endpoint, by id: created by `initialize`, found by
//! `Mcp-Session-Id` (by their own caller only), ended by DELETE, idle expiry or shutdown.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::admission::{Admission, Client, Permit, Refused};
use super::session::HttpSession;

/// A live session with its place in the endpoint's session counts (given back on removal):
/// none for a session another instance opened (it counts there, and in the shared store).
type Entry = (Arc<HttpSession>, Option<Permit>);

pub(super) struct SessionTable {
    sessions: Mutex<HashMap<Arc<str>, Entry>>,
    idle_timeout: Duration,
    admission: Arc<Admission>,
}

impl SessionTable {
    pub(super) fn new(idle_timeout: Duration, admission: Arc<Admission>) -> SessionTable {
        SessionTable {
            sessions: Mutex::new(HashMap::new()),
            idle_timeout,
            admission,
        }
    }

    /// How often the reaper looks for idle sessions.
    pub(super) fn reap_period(&self) -> Duration {
        (self.idle_timeout / 4)
            .max(Duration::from_millis(50))
            .min(Duration::from_secs(30))
    }

    /// Add the session `start` makes for `client`, unless the endpoint or the client is at its
    /// session cap. The check counts; it never looks at the sessions (idle ones are ended by
    /// the reaper), so a full table costs every `initialize` nothing.
    pub(super) fn insert_with(
        &self,
        client: &Client,
        start: impl FnOnce() -> Arc<HttpSession>,
    ) -> Result<Arc<HttpSession>, Refused> {
        let permit = self.admission.admit(client)?;
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
        let all: Vec<Arc<HttpSession>> = lock(&self.sessions).values().map(|(s, _)| s.clone()).collect();
        for s in all.into_iter().filter(|s| s.idle() > limit) {
            tracing::debug!("session {} expired", s.id);
            self.remove(&s);
        }
    }
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

    /// At the cap, `initialize` is refused from the counts alone: the sessions are not looked
    /// at (not even to expire the idle ones, the reaper's job), so a full table costs nothing.
    #[tokio::test]
    async fn the_cap_check_looks_at_no_session() {
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
        let table = &SessionTable::new(Duration::from_secs(60), Admission::new(2, 2));
        let client = Client::default();
        let start = |n: &str| {
            let (id, launcher): (Arc<str>, _) = (n.into(), &launcher);
            move || launcher.start(id, None, None)
        };
        assert!(table.insert_with(&client, start("a")).is_ok());
        assert!(table.insert_with(&client, start("b")).is_ok());
        // Both are now idle past the timeout; only looking at them would find that out.
        clock.1.store(120, Ordering::SeqCst);
        assert!(matches!(table.insert_with(&client, start("c")), Err(Refused::Full)));
        assert_eq!(lock(&table.sessions).len(), 2, "the refused check expired nothing");
        table.expire_idle();
        assert_eq!(lock(&table.sessions).len(), 0);
        assert_eq!(table.admission.count(), 0, "expiry gave the places back");
        assert!(table.insert_with(&client, start("c")).is_ok());
    }
}
