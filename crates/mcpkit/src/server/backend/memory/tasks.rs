//! The in-memory [`TaskStore`]: bounded in total and per client, expiring, the default.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Mutex;

use crate::server::backend::tasks::{
    now_ms, Applied, Lookup, StoreFuture, TaskChange, TaskLimits, TaskOwner, TaskRecord, TaskStore, TaskStoreError,
};
use crate::sync::lock;

/// How many expired ids are remembered, to tell their owner "expired" rather than "unknown".
const TOMBSTONES: usize = 1024;

/// Tasks in memory, within [`TaskLimits`]: a store or a client at its bound refuses new tasks
/// until some expire (nothing live is ever dropped to make room); each task is dropped when its
/// TTL ends.
#[derive(Debug)]
pub struct MemoryTaskStore {
    limits: TaskLimits,
    inner: Mutex<Inner>,
}

/// Why a task is not there.
enum Gone {
    Missing,
    Expired,
}

/// A record and the bytes it is charged to its client.
#[derive(Debug)]
struct Kept {
    record: TaskRecord,
    bytes: usize,
}

/// What one client's live tasks take.
#[derive(Debug, Default)]
struct Usage {
    tasks: usize,
    bytes: usize,
}

#[derive(Debug, Default)]
struct Inner {
    tasks: HashMap<String, Kept>,
    /// The tasks with a TTL, by expiry: dropping the expired ones costs what they are.
    by_expiry: BTreeSet<(u64, String)>,
    /// Each named client's live tasks.
    clients: HashMap<String, Usage>,
    /// Ids of tasks whose TTL ended, with their owner, oldest first.
    expired: VecDeque<(String, TaskOwner)>,
}

impl MemoryTaskStore {
    /// A store within `limits`.
    pub fn new(limits: TaskLimits) -> Self {
        MemoryTaskStore {
            limits: TaskLimits::new(limits.capacity, limits.per_client, limits.per_client_bytes),
            inner: Mutex::new(Inner::default()),
        }
    }
}

impl Default for MemoryTaskStore {
    /// [`TaskLimits::default`].
    fn default() -> Self {
        MemoryTaskStore::new(TaskLimits::default())
    }
}

impl Inner {
    /// Drop every task whose TTL ended, remembering its id.
    fn sweep(&mut self, now: u64) {
        while let Some((expires, id)) = self.by_expiry.first().cloned() {
            if expires > now {
                break;
            }
            self.expire(&id);
        }
    }

    fn expire(&mut self, id: &str) {
        let Some(kept) = self.tasks.remove(id) else { return };
        let r = kept.record;
        if let Some(expires) = r.expires_ms {
            self.by_expiry.remove(&(expires, r.id.clone()));
        }
        if let Some(client) = &r.client {
            if let Some(usage) = self.clients.get_mut(client) {
                usage.tasks = usage.tasks.saturating_sub(1);
                usage.bytes = usage.bytes.saturating_sub(kept.bytes);
                if usage.tasks == 0 {
                    self.clients.remove(client);
                }
            }
        }
        if self.expired.len() >= TOMBSTONES {
            self.expired.pop_front();
        }
        self.expired.push_back((r.id, r.owner));
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
            Some(k) if owner.is_some_and(|o| *o != k.record.owner) => return Err(Gone::Missing),
            Some(k) => k.record.is_expired(now),
        };
        if expired {
            self.expire(id);
            return Err(Gone::Expired);
        }
        self.tasks.get_mut(id).map(|k| &mut k.record).ok_or(Gone::Missing)
    }

    /// Keep `record` if the store and its client have room.
    fn create(&mut self, record: TaskRecord, limits: &TaskLimits) -> Result<(), TaskStoreError> {
        // What the record keeps for its lifetime, as a database store would hold it.
        let bytes = serde_json::to_vec(&record).map_or(0, |json| json.len());
        let now = now_ms();
        let over = |inner: &Inner| {
            if inner.tasks.len() >= limits.capacity {
                return Some(TaskStoreError::Full);
            }
            let client = record.client.as_ref()?;
            let (tasks, held) = inner.clients.get(client).map_or((0, 0), |u| (u.tasks, u.bytes));
            (tasks >= limits.per_client || held.saturating_add(bytes) > limits.per_client_bytes)
                .then(|| limits.client_full())
        };
        if over(self).is_some() {
            self.sweep(now);
            if let Some(refused) = over(self) {
                return Err(refused);
            }
        }
        if let Some(client) = &record.client {
            let usage = self.clients.entry(client.clone()).or_default();
            usage.tasks += 1;
            usage.bytes = usage.bytes.saturating_add(bytes);
        }
        if let Some(expires) = record.expires_ms {
            self.by_expiry.insert((expires, record.id.clone()));
        }
        self.tasks.insert(record.id.clone(), Kept { record, bytes });
        Ok(())
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        let created = lock(&self.inner).create(record, &self.limits);
        Box::pin(std::future::ready(created))
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
