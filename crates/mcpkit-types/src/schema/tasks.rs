//! Tasks: durable, pollable requests (spec: `basic/utilities/tasks`, 2025-11-25).

use serde::{Deserialize, Serialize};

use super::common::{Cursor, JsonObject, Meta, RequestMeta};

/// The `_meta` key associating a message with a task (`RelatedTaskMetadata`).
pub const RELATED_TASK_META_KEY: &str = "io.modelcontextprotocol/related-task";

/// State of a task (spec: `TaskStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for input from the requestor.
    InputRequired,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl TaskStatus {
    /// Whether the status is terminal (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// Requests task augmentation of a request (spec: `TaskMetadata`, the `task` param).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    /// Requested retention in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// Associates a message with a task (spec: `RelatedTaskMetadata`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task id.
    pub task_id: String,
}

/// A task (spec: `basic/utilities/tasks`, `Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Task id.
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable state description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of last update.
    pub last_updated_at: String,
    /// Retention from creation in milliseconds; `null` (None) for unlimited. Always serialized.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
}

impl Task {
    /// A task with these fields and no message or poll interval.
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        created_at: impl Into<String>,
        last_updated_at: impl Into<String>,
        ttl: Option<u64>,
    ) -> Self {
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: created_at.into(),
            last_updated_at: last_updated_at.into(),
            ttl,
            poll_interval: None,
        }
    }
}

/// Result of a task-augmented request (spec: `CreateTaskResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The created task.
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params naming a task: `tasks/get`, `tasks/result`, `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// Task id.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl TaskIdParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams {
            task_id: task_id.into(),
            meta: None,
        }
    }
}

/// Params of `tasks/get`.
pub type GetTaskParams = TaskIdParams;
/// Params of `tasks/result`.
pub type GetTaskPayloadParams = TaskIdParams;
/// Params of `tasks/cancel`.
pub type CancelTaskParams = TaskIdParams;

/// A result that is a task plus `_meta`: `tasks/get` and `tasks/cancel` (spec: `GetTaskResult`,
/// `CancelTaskResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Result of `tasks/get`.
pub type GetTaskResult = TaskResult;
/// Result of `tasks/cancel`.
pub type CancelTaskResult = TaskResult;

/// Result of `tasks/result`: the original request's result, kept verbatim
/// (spec: `GetTaskPayloadResult`).
pub type GetTaskPayloadResult = JsonObject;

/// Result of `tasks/list` (spec: `ListTasksResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks.
    pub tasks: Vec<Task>,
    /// Cursor for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `notifications/tasks/status`: the task plus `_meta` (spec:
/// `TaskStatusNotificationParams`).
pub type TaskStatusParams = TaskResult;
