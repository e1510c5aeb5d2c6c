//! The Tasks extension, client side (`io.modelcontextprotocol/tasks`, SEP-2663): call a tool so
//! that the server may answer with a task, poll it, answer its input requests, fetch its
//! result, cancel it. [`Client::call_tool`] uses it by itself when a tool runs only as a task.

use std::time::Duration;

use mcpkit_types::ext::tasks::{
    CancelTask, CreateTaskResult, GetTask, GetTaskResult, TaskParams, TaskStatusChanged, UpdateTask, UpdateTaskParams,
    ID, RESULT_TASK,
};
use mcpkit_types::method::{CallTool, Method, NotificationMethod};
use mcpkit_types::schema::{
    CallToolParams, CallToolResult, JsonObject, ProgressToken, RequestMeta, SubscriptionFilter, TaskStatus,
    META_CLIENT_CAPABILITIES,
};
use mcpkit_types::ErrorCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CallOptions, Client};
use crate::engine::RequestOptions;
use crate::error::{Error, Result};

/// The `_meta` key of `tasks/get` results where an mcpkit server puts the task's progress.
pub const META_TASK_PROGRESS: &str = "dev.mcpkit/progress";

/// What a `tools/call` made as a task may answer: the result at once, or a task handle.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The server answered with the result (it may always).
    Result(CallToolResult),
    /// The server made a task; poll it with [`Client::get_task`] or [`Client::wait_task`].
    Task(CreateTaskResult),
}

/// Progress a task reported (an mcpkit server keeps it on the task).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
pub struct TaskProgress {
    /// Progress so far.
    pub progress: f64,
    /// The total, when known.
    #[serde(default)]
    pub total: Option<f64>,
}

/// The progress in a `tasks/get` result, if the server put it there.
pub fn task_progress(task: &GetTaskResult) -> Option<TaskProgress> {
    let v = task.meta.as_ref()?.get(META_TASK_PROGRESS)?;
    serde_json::from_value(v.clone()).ok()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultKind {
    #[serde(default)]
    result_type: Option<String>,
}

impl Client {
    /// Call a tool declaring the Tasks extension for this request (whether or not the client
    /// declared it at connection), so that the server may answer with a task handle.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<ToolOutcome> {
        let params = self.tool_params(name, arguments, options.progress.is_some(), true)?;
        let raw = self
            .call_raw(CallTool::NAME, &params, self.request_options(&params, options))
            .await?;
        let kind: ResultKind = serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))?;
        if kind.result_type.as_deref() == Some(RESULT_TASK) {
            let handle: CreateTaskResult =
                serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))?;
            return Ok(ToolOutcome::Task(handle));
        }
        let result: CallToolResult =
            serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))?;
        self.check_output(name, &result)?;
        Ok(ToolOutcome::Result(result))
    }

    /// `tasks/get`: the task now, with its result once it has one.
    pub async fn get_task(&self, task_id: &str) -> Result<GetTaskResult> {
        self.call::<GetTask>(&self.task_params(task_id), RequestOptions::default())
            .await
    }

    /// `tasks/update`: answers to the task's `inputRequests`, by key.
    pub async fn update_task(&self, task_id: &str, input_responses: JsonObject) -> Result<()> {
        let params = UpdateTaskParams {
            task_id: task_id.to_owned(),
            input_responses,
            meta: self.task_params(task_id).meta,
        };
        self.call::<UpdateTask>(&params, RequestOptions::default())
            .await
            .map(|_| ())
    }

    /// `tasks/cancel`: ask the task to stop (it may still end otherwise; see the next
    /// [`Client::get_task`]).
    pub async fn cancel_task(&self, task_id: &str) -> Result<()> {
        self.call::<CancelTask>(&self.task_params(task_id), RequestOptions::default())
            .await
            .map(|_| ())
    }

    /// Wait for task `task_id` to end, answering its input requests with this client's
    /// handlers (sampling, elicitation, roots), and return its result. `on_update` sees every
    /// state the task is seen in (status, message, progress). A task that failed is its
    /// JSON-RPC error; one that was cancelled is [`Error::Protocol`].
    ///
    /// Where the server pushes status notifications (SEP-2663 `notifications/tasks`), they
    /// settle the wait without polling: on the stateless wire through a `subscriptions/listen`
    /// naming the task, on a session that declared the extension ([`ClientBuilder::extension`]
    /// and the server both) as they come. `tasks/get` is still asked once at the start and
    /// then every poll interval the server suggests, so a notification that never comes only
    /// costs time.
    ///
    /// [`ClientBuilder::extension`]: super::ClientBuilder::extension
    pub async fn wait_task(
        &self,
        task_id: &str,
        mut on_update: impl FnMut(&GetTaskResult) + Send,
    ) -> Result<CallToolResult> {
        let mut notes = self.notifications();
        let (pushed, _subscription) = self.task_notifications(task_id).await;
        let mut answered: std::collections::HashSet<String> = Default::default();
        let mut next: Option<GetTaskResult> = None;
        loop {
            let task = match next.take() {
                Some(t) => t,
                None => self.get_task(task_id).await?,
            };
            on_update(&task);
            let every = task.task.task.poll_interval_ms.unwrap_or(1000).clamp(10, 60_000);
            match task.task.task.status {
                TaskStatus::Completed => {
                    let result = task
                        .task
                        .result
                        .ok_or_else(|| Error::InvalidResponse("a completed task without its result".into()))?;
                    return serde_json::from_value(Value::Object(result))
                        .map_err(|e| Error::InvalidResponse(format!("the task's result: {e}")));
                }
                TaskStatus::Failed => {
                    let error = task
                        .task
                        .error
                        .ok_or_else(|| Error::InvalidResponse("a failed task without its error".into()))?;
                    return Err(Error::Rpc(error));
                }
                TaskStatus::Cancelled => {
                    return Err(Error::Protocol(format!("task {task_id} was cancelled")));
                }
                TaskStatus::InputRequired => {
                    // Each key is asked once over a task's life: answer the new ones only.
                    let requests: std::collections::BTreeMap<_, _> = task
                        .task
                        .input_requests
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|(k, _)| !answered.contains(k))
                        .collect();
                    if !requests.is_empty() {
                        answered.extend(requests.keys().cloned());
                        let answers = self.inner.handlers.answer(requests).await?;
                        self.update_task(task_id, answers).await?;
                        continue;
                    }
                }
                TaskStatus::Working => {}
            }
            let poll = tokio::time::sleep(Duration::from_millis(every));
            if pushed {
                tokio::select! {
                    pushed = next_status(&mut notes, task_id) => next = pushed,
                    () = poll => {}
                }
            } else {
                poll.await;
            }
        }
    }

    /// Whether the server will push status notifications of task `task_id` to this client,
    /// and the subscription that carries them (stateless era).
    async fn task_notifications(&self, task_id: &str) -> (bool, Option<super::Subscription>) {
        if self.inner.stateless.is_none() {
            return (self.uses_extension(ID), None);
        }
        if self.server_extension(ID).is_none() {
            return (false, None);
        }
        let filter = SubscriptionFilter {
            task_ids: Some(vec![task_id.to_owned()]),
            ..Default::default()
        };
        match self.listen_with(filter, self.task_params(task_id).meta).await {
            Ok(sub) => {
                let honoured = sub
                    .acknowledged()
                    .task_ids
                    .as_ref()
                    .is_some_and(|ids| ids.iter().any(|i| i == task_id));
                (honoured, Some(sub))
            }
            Err(e) => {
                tracing::debug!("no status notifications for task {task_id}: {e}");
                (false, None)
            }
        }
    }

    /// Call a tool as a task and wait for its result ([`Client::call_tool_as_task`], then
    /// [`Client::wait_task`] when the server made a task).
    pub async fn call_tool_in_task(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
        on_update: impl FnMut(&GetTaskResult) + Send,
    ) -> Result<CallToolResult> {
        match self.call_tool_as_task(name, arguments, options).await? {
            ToolOutcome::Result(r) => Ok(r),
            ToolOutcome::Task(handle) => {
                let result = self.wait_task(&handle.task.task_id, on_update).await?;
                self.check_output(name, &result)?;
                Ok(result)
            }
        }
    }

    /// The params of a `tools/call`, with a progress token when asked and, for a task, the
    /// extension declared in this request's client capabilities.
    fn tool_params(
        &self,
        name: &str,
        arguments: impl Serialize,
        progress: bool,
        as_task: bool,
    ) -> Result<CallToolParams> {
        let mut params = CallToolParams::new(name);
        let args = serde_json::to_value(&arguments).map_err(|e| Error::Serialize(e.to_string()))?;
        if !args.is_null() {
            params = params
                .with_arguments(&args)
                .map_err(|e| Error::Serialize(e.to_string()))?;
        }
        let mut meta = RequestMeta::default();
        if progress {
            let n = self
                .inner
                .next_progress
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            meta.progress_token = Some(ProgressToken::Number(n));
        }
        if as_task {
            let caps = self.inner.capabilities.clone().with_extension(ID, JsonObject::new());
            let caps = serde_json::to_value(caps).map_err(|e| Error::Serialize(e.to_string()))?;
            meta.extra.insert(META_CLIENT_CAPABILITIES.to_owned(), caps);
        }
        if meta.progress_token.is_some() || !meta.extra.is_empty() {
            params = params.with_meta(meta);
        }
        Ok(params)
    }

    /// The request options of a tool call made with `params`.
    fn request_options(&self, params: &CallToolParams, options: CallOptions) -> RequestOptions {
        let token = params.meta.as_ref().and_then(|m| m.progress_token.clone());
        RequestOptions {
            timeout: options.timeout,
            reset_timeout_on_progress: options.reset_timeout_on_progress,
            progress: token.zip(options.progress),
            related: None,
        }
    }

    /// Params naming a task, declaring the extension for this request.
    fn task_params(&self, task_id: &str) -> TaskParams {
        let mut params = TaskParams::new(task_id);
        let caps = self.inner.capabilities.clone().with_extension(ID, JsonObject::new());
        if let Ok(caps) = serde_json::to_value(caps) {
            let mut meta = RequestMeta::default();
            meta.extra.insert(META_CLIENT_CAPABILITIES.to_owned(), caps);
            params.meta = Some(meta);
        }
        params
    }
}

/// The next `notifications/tasks` about `task_id`, as `tasks/get` would have answered; `None`
/// once no more can arrive (the connection ended) or one was lost (the caller polls).
async fn next_status(
    notes: &mut tokio::sync::broadcast::Receiver<super::ServerNotification>,
    task_id: &str,
) -> Option<GetTaskResult> {
    loop {
        match notes.recv().await {
            Ok(super::ServerNotification::Other { method, params }) if method == TaskStatusChanged::NAME => {
                let Some(task) = params.and_then(|p| serde_json::from_value::<GetTaskResult>(p).ok()) else {
                    continue;
                };
                if task.task.task.task_id == task_id {
                    return Some(task);
                }
            }
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return None,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

/// Whether `e` is the server saying a tool runs only as a task (-32021 naming the extension).
pub(super) fn needs_task(e: &Error) -> bool {
    e.rpc().is_some_and(|e| {
        e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            && e.data
                .as_ref()
                .and_then(|d| d.pointer("/requiredCapabilities/extensions"))
                .and_then(Value::as_object)
                .is_some_and(|x| x.contains_key(ID))
    })
}
