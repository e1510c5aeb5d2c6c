//! Where tasks live: the [`TaskStore`] trait, the record it keeps, and the one function that
//! says how a record may change ([`TaskRecord::apply`]), so that every store, in memory or in a
//! database, moves tasks through the same states.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::{SystemTime, UNIX_EPOCH};

use mcpkit_types::ext::tasks::{DetailedTask, Task};
use mcpkit_types::schema::{InputRequest, JsonObject, TaskStatus};
use mcpkit_types::ErrorObject;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a store operation returns, boxed so the trait stays object-safe and a store may do I/O.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// Why a store could not do what it was asked.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many live tasks as it may.
    #[error("too many tasks are running; try again later")]
    Full,
    /// The task's client holds as many live tasks, or as many bytes of them, as one client
    /// may ([`TaskLimits::per_client`], [`TaskLimits::per_client_bytes`]).
    #[error(
        "this client has as many tasks as it may keep (at most {tasks} tasks and {bytes} bytes of \
         them per client, each until its TTL ends)"
    )]
    ClientFull {
        /// The client's cap on live tasks.
        tasks: usize,
        /// The client's cap on the bytes of its live tasks' records.
        bytes: usize,
    },
    /// The store's backend failed (a database outage).
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// The bounds of a task store. Every store enforces them atomically; only expired tasks
/// are ever dropped to make room, so one client can never push out another's tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskLimits {
    /// Live tasks kept at once, all clients together. Default 10 000.
    pub capacity: usize,
    /// Live tasks one client ([`TaskRecord::client`]) may have kept at once. Default 100.
    pub per_client: usize,
    /// Bytes one client's live task records may take (as JSON, measured when each is made:
    /// the arguments and `_meta` it keeps for its whole lifetime). Default 16 MiB.
    pub per_client_bytes: usize,
}

impl Default for TaskLimits {
    fn default() -> Self {
        TaskLimits {
            capacity: 10_000,
            per_client: 100,
            per_client_bytes: 16 << 20,
        }
    }
}

impl TaskLimits {
    /// These limits, each at least 1.
    pub fn new(capacity: usize, per_client: usize, per_client_bytes: usize) -> TaskLimits {
        TaskLimits {
            capacity: capacity.max(1),
            per_client: per_client.max(1),
            per_client_bytes: per_client_bytes.max(1),
        }
    }

    /// [`TaskStoreError::ClientFull`] for these limits.
    pub fn client_full(&self) -> TaskStoreError {
        TaskStoreError::ClientFull {
            tasks: self.per_client,
            bytes: self.per_client_bytes,
        }
    }
}

/// Who may see a task: the caller that created it. Opaque; compared for equality only.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TaskOwner(pub String);

/// The latest progress a running task reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// Progress so far.
    pub progress: f64,
    /// The total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

/// How a task ended, when it did not end cancelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskOutcome {
    /// The request's result (a tool error is a result too, with `isError: true`).
    Completed(JsonObject),
    /// The JSON-RPC error the request failed with.
    Failed(ErrorObject),
}

/// The call a task runs, kept so that the task can be run again with the answers to its input
/// requests (on whichever instance receives them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRequest {
    /// The tool.
    pub tool: String,
    /// Its arguments, as the caller sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The request's `_meta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Everything a store keeps about one task. Times are milliseconds since the Unix epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The unguessable id.
    pub id: String,
    /// Who may read and cancel it.
    pub owner: TaskOwner,
    /// The client it counts against ([`TaskLimits::per_client`]): the verified caller's
    /// principal, else the client's address; `None` when nothing names the client (stdio:
    /// there is only one), and then only [`TaskLimits::capacity`] bounds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Where it is.
    pub status: TaskStatus,
    /// What is going on (the latest progress message, or why it ended).
    pub status_message: Option<String>,
    /// When it was created.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
    /// When it stops being kept (`created_ms` + TTL); `None` keeps it until evicted.
    pub expires_ms: Option<u64>,
    /// The poll interval to suggest.
    pub poll_interval_ms: u64,
    /// The latest progress.
    pub progress: Option<TaskProgress>,
    /// Input requests without an answer, by key.
    pub pending: BTreeMap<String, InputRequest>,
    /// Every answer received so far, by key.
    pub answers: JsonObject,
    /// State the handler keeps between its runs.
    pub handler_state: Option<Value>,
    /// How it ended, once it did (not set when cancelled).
    pub outcome: Option<TaskOutcome>,
    /// The call it runs.
    pub request: TaskRequest,
}

/// One change to a task, as [`TaskRecord::apply`] makes it.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskChange {
    /// New progress (and message) from the running handler.
    Progress(TaskProgress, Option<String>),
    /// The handler stopped for input: these requests wait for answers.
    InputRequired {
        /// The requests without an answer.
        pending: BTreeMap<String, InputRequest>,
        /// The handler's state for its next run.
        handler_state: Option<Value>,
    },
    /// Answers from `tasks/update`. Only keys that are pending count; once none is pending the
    /// task is `working` again (and its caller runs it again).
    Answer(JsonObject),
    /// The request ended.
    Finished(TaskOutcome),
    /// `tasks/cancel`.
    Cancel,
}

/// What a store did with a change.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// No task by that id for that caller (never made, not theirs, or evicted).
    Missing,
    /// The task's TTL ended; it is gone.
    Expired,
    /// The change did not apply (the task is terminal, or nothing it named is pending).
    Unchanged(Box<TaskRecord>),
    /// The task as it is after the change.
    Changed(Box<TaskRecord>),
}

/// What a lookup found.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The task.
    Found(Box<TaskRecord>),
    /// No task by that id for that caller.
    Missing,
    /// The caller's task existed, but its TTL ended.
    Expired,
}

/// Storage of tasks (the task store backend of the scale-out design). Every implementation
/// must pass [`check_task_store`](super::check_task_store): the same states, the same owner
/// checks, the same bounds and expiry.
///
/// A lookup or change by a caller passes its [`TaskOwner`]: a task of another owner is
/// [`Lookup::Missing`] / [`Applied::Missing`], exactly as an unknown one. Changes from the
/// task's own runner pass `None`. Changes must be atomic per task ([`TaskRecord::apply`] on the
/// current record): a database store applies it in a transaction.
pub trait TaskStore: std::fmt::Debug + Send + Sync + 'static {
    /// Keep a new task. Must be visible to [`TaskStore::get`] once this returns (the handle is
    /// sent to the client after it). [`TaskStoreError::Full`] when the store is at its
    /// capacity, [`TaskStoreError::ClientFull`] when the record's client is at its share
    /// ([`TaskLimits`]); only expired tasks are dropped to make room.
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()>;
    /// The task `id`, if `owner` may see it.
    fn get<'a>(&'a self, id: &'a str, owner: &'a TaskOwner) -> StoreFuture<'a, Lookup>;
    /// Apply `change` to task `id` (owner-checked when `owner` is given).
    fn update<'a>(&'a self, id: &'a str, owner: Option<&'a TaskOwner>, change: TaskChange) -> StoreFuture<'a, Applied>;
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl TaskRecord {
    /// Whether the TTL has ended at `now`.
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_ms.is_some_and(|e| now >= e)
    }

    /// Make `change`, if the task's state allows it; `true` when something changed. Terminal
    /// tasks never change again: a cancelled task stays cancelled whatever its handler returns.
    pub fn apply(&mut self, change: TaskChange, now: u64) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        match change {
            TaskChange::Progress(progress, message) => {
                self.progress = Some(progress);
                if message.is_some() {
                    self.status_message = message;
                }
            }
            TaskChange::InputRequired { pending, handler_state } => {
                // An answer that came in while the handler was still running counts.
                let mut pending = pending;
                pending.retain(|k, _| !self.answers.contains_key(k));
                self.handler_state = handler_state;
                if pending.is_empty() {
                    // Nothing left to ask: the caller runs it again at once.
                    self.status = TaskStatus::Working;
                } else {
                    self.pending = pending;
                    self.status = TaskStatus::InputRequired;
                }
            }
            TaskChange::Answer(responses) => {
                let mut any = false;
                for (key, value) in responses {
                    if self.pending.remove(&key).is_some() {
                        self.answers.insert(key, value);
                        any = true;
                    }
                }
                if !any {
                    return false;
                }
                if self.pending.is_empty() {
                    self.status = TaskStatus::Working;
                }
            }
            TaskChange::Finished(outcome) => {
                self.status = match &outcome {
                    TaskOutcome::Completed(_) => TaskStatus::Completed,
                    TaskOutcome::Failed(e) => {
                        self.status_message = Some(e.message.clone());
                        TaskStatus::Failed
                    }
                };
                self.pending.clear();
                self.outcome = Some(outcome);
            }
            TaskChange::Cancel => {
                self.status = TaskStatus::Cancelled;
                self.status_message = Some("Cancelled by the client".into());
                self.pending.clear();
            }
        }
        self.updated_ms = self.updated_ms.max(now);
        true
    }

    /// The task's metadata on the wire.
    pub fn task(&self) -> Task {
        Task {
            task_id: self.id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: iso8601(self.created_ms),
            last_updated_at: iso8601(self.updated_ms),
            ttl_ms: self.expires_ms.map(|e| e.saturating_sub(self.created_ms)),
            poll_interval_ms: Some(self.poll_interval_ms.max(1)),
        }
    }

    /// The task with what its status carries, as `tasks/get` answers it.
    pub fn detailed(&self) -> DetailedTask {
        let (result, error) = match (&self.status, &self.outcome) {
            (TaskStatus::Completed, Some(TaskOutcome::Completed(r))) => (Some(r.clone()), None),
            (TaskStatus::Failed, Some(TaskOutcome::Failed(e))) => (None, Some(e.clone())),
            _ => (None, None),
        };
        DetailedTask {
            task: self.task(),
            input_requests: (self.status == TaskStatus::InputRequired).then(|| self.pending.clone()),
            result,
            error,
        }
    }
}

/// `ms` since the epoch as an ISO 8601 UTC timestamp with milliseconds.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{:03}Z", ms % 1000)
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn timestamps_are_iso8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_764_590_400_123), "2025-12-01T12:00:00.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
