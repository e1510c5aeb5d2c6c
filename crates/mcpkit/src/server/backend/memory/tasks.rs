//! The in-memory [`TaskStore`]: bounded, expiring, the default.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::server::backend::tasks::{
    now_ms, Applied, Lookup, StoreFuture, TaskChange, TaskOwner, TaskRecord, TaskStore, TaskStoreError,
};
use crate::sync::lock;

/// How many expired ids are remembered, to tell their owner "expired" rather than "unknown".
const TOMBSTONES: usize = 1024;

/// Tasks in memory: at most `capacity` at once (expired ones are dropped first, then the oldest
/// finished one; a store full of running tasks refuses new ones), each dropped when its TTL ends.
#[derive(Debug)]
pub struct MemoryTaskStore {
    capacity: usize,
    inner: Mutex<Inner>,
}

/// Why a task is not there.
enum Gone {
    Missing,
    Expired,
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<String, TaskRecord>,
    /// Ids of tasks whose TTL ended, with their owner, oldest first.
    expired: VecDeque<(String, TaskOwner)>,
}

impl MemoryTaskStore {
    /// A store holding at most `capacity` tasks.
    pub fn new(capacity: usize) -> Self {
        MemoryTaskStore {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }
}

impl Default for MemoryTaskStore {
    /// 10 000 tasks.
    fn default() -> Self {
        MemoryTaskStore::new(10_000)
    }
}

impl Inner {
    /// Drop every task whose TTL ended, remembering its id.
    fn sweep(&mut self, now: u64) {
        let gone: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, r)| r.is_expired(now))
            .map(|(id, _)| id.clone())
            .collect();
        for id in gone {
            self.expire(&id);
        }
    }

    fn expire(&mut self, id: &str) {
        if let Some(r) = self.tasks.remove(id) {
            if self.expired.len() >= TOMBSTONES {
                self.expired.pop_front();
            }
            self.expired.push_back((r.id, r.owner));
        }
    }

    fn was_expired(&self, id: &str, owner: Option<&TaskOwner>) -> bool {
        self.expired
            .iter()
            .any(|(i, o)| i == id && owner.is_none_or(|owner| owner == o))
    }

    /// The live task `id` of `owner` (any owner when `None`), dropping it if its TTL ended.
    fn live(&mut self, id: &str, owner: Option<&TaskOwner>, now: u64) -> Result<&mut TaskRecord, Gone> {
        let expired = match self.tasks.get(id) {
            None => {
                return Err(if self.was_expired(id, owner) {
                    Gone::Expired
                } else {
                    Gone::Missing
                })
            }
            Some(r) if owner.is_some_and(|o| *o != r.owner) => return Err(Gone::Missing),
            Some(r) => r.is_expired(now),
        };
        if expired {
            self.expire(id);
            return Err(Gone::Expired);
        }
        self.tasks.get_mut(id).ok_or(Gone::Missing)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        let mut inner = lock(&self.inner);
        let now = now_ms();
        if inner.tasks.len() >= self.capacity {
            inner.sweep(now);
        }
        if inner.tasks.len() >= self.capacity {
            // Make room by forgetting the finished task that changed longest ago.
            let oldest = inner
                .tasks
                .values()
                .filter(|r| r.status.is_terminal())
                .min_by_key(|r| r.updated_ms)
                .map(|r| r.id.clone());
            match oldest {
                Some(id) => {
                    inner.tasks.remove(&id);
                }
                None => return Box::pin(std::future::ready(Err(TaskStoreError::Full))),
            }
        }
        inner.tasks.insert(record.id.clone(), record);
        Box::pin(std::future::ready(Ok(())))
    }

    fn get<'a>(&'a self, id: &'a str, owner: &'a TaskOwner) -> StoreFuture<'a, Lookup> {
        let mut inner = lock(&self.inner);
        let found = match inner.live(id, Some(owner), now_ms()) {
            Ok(r) => Lookup::Found(Box::new(r.clone())),
            Err(Gone::Expired) => Lookup::Expired,
            Err(Gone::Missing) => Lookup::Missing,
        };
        Box::pin(std::future::ready(Ok(found)))
    }

    fn update<'a>(&'a self, id: &'a str, owner: Option<&'a TaskOwner>, change: TaskChange) -> StoreFuture<'a, Applied> {
        let mut inner = lock(&self.inner);
        let now = now_ms();
        let applied = match inner.live(id, owner, now) {
            Err(Gone::Expired) => Applied::Expired,
            Err(Gone::Missing) => Applied::Missing,
            Ok(r) => {
                if r.apply(change, now) {
                    Applied::Changed(Box::new(r.clone()))
                } else {
                    Applied::Unchanged(Box::new(r.clone()))
                }
            }
        };
        Box::pin(std::future::ready(Ok(applied)))
    }
}
