//! The server's live sessions, for broadcasts: a slab of weak references whose slots a session
//! frees itself when it is dropped, so starting and ending a session are O(1) and the table
//! never holds more slots than were live at once.

use std::sync::{Arc, Mutex, Weak};

use super::client_state::ClientState;
use crate::sync::lock;

/// Every live session of one server.
#[derive(Debug, Default)]
pub(crate) struct LiveSessions {
    slab: Mutex<Slab>,
}

#[derive(Debug, Default)]
struct Slab {
    slots: Vec<Option<Weak<ClientState>>>,
    /// Indices of empty slots, reused before the table grows.
    free: Vec<usize>,
    live: usize,
}

/// A session's slot: freed when the session (which owns this) is dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    table: Arc<LiveSessions>,
    index: usize,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut slab = lock(&self.table.slab);
        if let Some(slot) = slab.slots.get_mut(self.index) {
            if slot.take().is_some() {
                slab.live -= 1;
                slab.free.push(self.index);
            }
        }
    }
}

impl LiveSessions {
    /// Register `session` until it is dropped.
    pub(crate) fn register(self: &Arc<Self>, session: &Arc<ClientState>) {
        let weak = Arc::downgrade(session);
        let index = {
            let mut slab = lock(&self.slab);
            slab.live += 1;
            match slab.free.pop() {
                Some(i) => {
                    slab.slots[i] = Some(weak);
                    i
                }
                None => {
                    slab.slots.push(Some(weak));
                    slab.slots.len() - 1
                }
            }
        };
        let slot = Slot {
            table: self.clone(),
            index,
        };
        // A session is registered once; a second registration frees its slot again at once.
        let _ = session.slot.set(slot);
    }

    /// The sessions still alive.
    pub(crate) fn snapshot(&self) -> Vec<Arc<ClientState>> {
        let slab = lock(&self.slab);
        slab.slots.iter().flatten().filter_map(Weak::upgrade).collect()
    }

    /// How many sessions hold a slot, and how many slots the table has.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let slab = lock(&self.slab);
        (slab.live, slab.slots.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ending_sessions_frees_their_slots() {
        let table = Arc::new(LiveSessions::default());
        let sessions: Vec<Arc<ClientState>> = (0..100).map(|_| Arc::new(ClientState::default())).collect();
        for s in &sessions {
            table.register(s);
        }
        assert_eq!(table.counts(), (100, 100));
        assert_eq!(table.snapshot().len(), 100);
        drop(sessions);
        assert_eq!(table.counts(), (0, 100), "every ended session gives its slot back");
        assert!(table.snapshot().is_empty());
    }

    #[test]
    fn slots_are_reused_so_the_table_stays_as_big_as_the_most_live_at_once() {
        let table = Arc::new(LiveSessions::default());
        for _ in 0..1_000 {
            let wave: Vec<Arc<ClientState>> = (0..10).map(|_| Arc::new(ClientState::default())).collect();
            for s in &wave {
                table.register(s);
            }
        }
        assert_eq!(table.counts(), (0, 10));
        let kept = Arc::new(ClientState::default());
        table.register(&kept);
        let again = Arc::new(ClientState::default());
        table.register(&again);
        drop(again);
        assert_eq!(table.counts(), (1, 10));
        assert!(Arc::ptr_eq(&table.snapshot()[0], &kept));
    }

    #[test]
    fn a_session_registered_twice_holds_one_slot() {
        let table = Arc::new(LiveSessions::default());
        let s = Arc::new(ClientState::default());
        table.register(&s);
        table.register(&s);
        assert_eq!(table.counts().0, 1);
        drop(s);
        assert_eq!(table.counts().0, 0);
    }
}
