//! The Tasks extension, `io.modelcontextprotocol/tasks` (SEP-2663): a `tools/call` may be
//! answered with a task handle (`resultType: "task"`) that the client polls with `tasks/get`,
//! feeds input with `tasks/update` and stops with `tasks/cancel`.
//!
//! Not wire-compatible with the experimental tasks of 2025-11-25 ([`crate::schema::tasks`]):
//! the TTL and poll interval are `ttlMs` / `pollIntervalMs`, the handle is flat (no `task`
//! wrapper), the result is inlined on `tasks/get`, and there is no `tasks/result` or
//! `tasks/list` (both are not found on a server of this extension).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::method::{notification, request};
use crate::schema::{InputRequest, JsonObject, Meta, RequestMeta, TaskStatus};
use crate::ErrorObject;

/// The extension's identifier.
pub const ID: &str = "io.modelcontextprotocol/tasks";

/// `resultType` of a task handle.
pub const RESULT_TASK: &str = "task";

/// A task's metadata (SEP-2663 `Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The server-made, unguessable id.
    pub task_id: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// What is going on, for the user or the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// How long from creation the task is kept, in milliseconds; `null` for unlimited. Always
    /// serialized.
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often to poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
}

/// The answer to a `tools/call` that became a task (SEP-2663 `CreateTaskResult`): the task's
/// seed state, flat, with `resultType: "task"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// Always `"task"`.
    pub result_type: String,
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A task with what its status carries (SEP-2663 `DetailedTask`): the pending `inputRequests`
/// while `input_required`, the original request's `result` once `completed`, the JSON-RPC
/// `error` once `failed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// What the server needs from the client, by key (status `input_required`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "input_requests"
    )]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// The original request's result (status `completed`; a tool error is `isError: true` here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error the request failed with (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// Result of `tasks/get` (SEP-2663 `GetTaskResult`): the detailed task, `resultType: "complete"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// `"complete"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tasks/get` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskParams {
    /// The task.
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl TaskParams {
    /// Params naming `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskParams {
            task_id: task_id.into(),
            meta: None,
        }
    }
}

/// Params of `tasks/update`: answers to the task's `inputRequests`, by key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers by `inputRequests` key, kept verbatim.
    pub input_responses: JsonObject,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`: `resultType: "complete"` and
/// nothing else of the task (its new state is for the next `tasks/get`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAck {
    /// `"complete"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

request!(
    /// `tasks/get`: the task, with what its status carries.
    GetTask, "tasks/get", TaskParams, GetTaskResult
);
request!(
    /// `tasks/update`: answers to the task's `inputRequests`.
    UpdateTask, "tasks/update", UpdateTaskParams, TaskAck
);
request!(
    /// `tasks/cancel`: ask the task to stop.
    CancelTask, "tasks/cancel", TaskParams, TaskAck
);
notification!(
    /// `notifications/tasks`: a task changed (SEP-2663 "Task Status Notifications"; optional
    /// for a server to send). On the stateless wire it travels on a `subscriptions/listen`
    /// stream whose filter named the task (`taskIds`).
    TaskStatusChanged, "notifications/tasks", TaskStatusParams
);

/// Params of `notifications/tasks`: the complete task, as `tasks/get` would return it at that
/// moment (SEP-2663 `TaskStatusNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusParams {
    /// The task.
    #[serde(flatten)]
    pub task: DetailedTask,
    /// Notification metadata (the subscription id on a `subscriptions/listen` stream).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `inputRequests` inside a flattened task: read through text, as [`InputRequest`] keeps its
/// params raw and a flattened member cannot be borrowed raw.
fn input_requests<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<BTreeMap<String, InputRequest>>, D::Error> {
    use serde::de::Error as _;
    let map: Option<BTreeMap<String, serde_json::Value>> = Option::deserialize(d)?;
    map.map(|m| {
        m.into_iter()
            .map(|(k, v)| {
                serde_json::from_str(&v.to_string())
                    .map(|r| (k, r))
                    .map_err(D::Error::custom)
            })
            .collect()
    })
    .transpose()
}
