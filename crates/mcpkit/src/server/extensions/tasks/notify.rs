//! Task status notifications (SEP-2663 "Task Status Notifications"): `notifications/tasks`,
//! carrying the complete task as `tasks/get` would return it at that moment, sent when a
//! task's status or status message changes.
//!
//! - **Stateless era**: on a `subscriptions/listen` stream whose filter names the task
//!   (`notifications.taskIds`), only to the task's owner, only to a request that declared the
//!   extension (otherwise -32021). The acknowledgement lists the ids honoured; the first
//!   notification of each is its state at that moment (so nothing between the handle and the
//!   subscription is lost), then one per change, until the task ends. Changes made by another
//!   instance are seen by reading the store every poll interval.
//! - **Handshake era**: to the session the task runs for, when its client declared the
//!   extension at `initialize`, as a notification of the session (the GET stream on HTTP; never
//!   on a sessionless request, whose session ends with it).
//!
//! Clients may poll as well; a notification never replaces what `tasks/get` answers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcpkit_types::ext::tasks::{TaskStatusChanged, TaskStatusParams};
use mcpkit_types::method::{Method, NotificationMethod, SubscriptionsListen};
use mcpkit_types::schema::{JsonObject, SubscriptionFilter, SubscriptionsListenParams, TaskStatus};
use mcpkit_types::{Era, ErrorObject};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use super::{declares_tasks, owner_of, plausible_id, Runtime, META_PROGRESS};
use crate::engine::{BoxFuture, HandlerResult};
use crate::server::backend::tasks::{Lookup, TaskOwner, TaskRecord};
use crate::server::client_state::SessionlessRequest;
use crate::server::listen::{FeedSlot, ListenFeed};
use crate::server::middleware::{Middleware, Next};
use crate::server::Call;
use crate::wire::params;

/// How many changes a slow listener may fall behind before it re-reads the store.
const EVENTS: usize = 256;

/// The changes of this instance's tasks, for its listen streams.
#[derive(Debug)]
pub(crate) struct Events(broadcast::Sender<Arc<TaskRecord>>);

impl Default for Events {
    fn default() -> Self {
        Events(broadcast::channel(EVENTS).0)
    }
}

/// What a notification tells: its status and message (a change of anything else, progress
/// without a message, is for `tasks/get`).
fn seen(record: &TaskRecord) -> (TaskStatus, Option<String>) {
    (record.status, record.status_message.clone())
}

/// The params of `notifications/tasks` for `record`: what `tasks/get` answers, without its
/// `resultType`.
fn params_of(record: &TaskRecord) -> Option<JsonObject> {
    let meta = record.progress.as_ref().map(|progress| {
        let mut m = JsonObject::new();
        m.insert(META_PROGRESS.to_owned(), json!(progress));
        m
    });
    match serde_json::to_value(TaskStatusParams {
        task: record.detailed(),
        meta,
    }) {
        Ok(Value::Object(o)) => Some(o),
        _ => None,
    }
}

impl Runtime {
    /// Task `record` changed (its status or message): tell this instance's listen streams and
    /// the handshake-era session it runs for. Called before the task is forgotten here.
    pub(crate) fn changed(&self, record: &TaskRecord) {
        // No listener is not an error.
        let _ = self.events.0.send(Arc::new(record.clone()));
        let Some(parts) = self.running.parts(&record.id) else {
            return;
        };
        let session = &parts.session;
        let pushes = session.version().era() == Era::Handshake
            && !session.stateless_only
            && parts.extensions.get::<SessionlessRequest>().is_none()
            && session.initialized.load(std::sync::atomic::Ordering::Relaxed)
            && declares_tasks(&session.client_capabilities());
        if !pushes {
            return;
        }
        if let (Some(peer), Some(params)) = (session.peer.get(), params_of(record)) {
            if let Err(e) = peer.notify_raw(TaskStatusChanged::NAME, Some(&params)) {
                tracing::debug!(task = %record.id, "task notification not sent: {e}");
            }
        }
    }
}

/// The `notifications.taskIds` of a `subscriptions/listen`, read without building the rest.
#[derive(serde::Deserialize)]
struct TaskIdsOnly {
    #[serde(default)]
    notifications: SubscriptionFilter,
}

/// `subscriptions/listen` with the extension: the task ids a request names are honoured for
/// their owner and fed to the stream; a request naming tasks without declaring the extension is
/// refused (-32021, SEP-2663 "Task Status Notifications").
pub(crate) struct TaskListens(pub(crate) Arc<Runtime>);

impl Middleware for TaskListens {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        listen(call, next, &self.0)
    }
}

fn listen(mut call: Call, plain: Next, tasks: &Arc<Runtime>) -> BoxFuture<HandlerResult> {
    {
        let asked = params::<TaskIdsOnly>(call.params.as_deref())
            .ok()
            .and_then(|p| p.notifications.task_ids)
            .filter(|ids| !ids.is_empty());
        let Some(asked) = asked else {
            return plain.run(call);
        };
        let meta = params::<SubscriptionsListenParams>(call.params.as_deref())
            .ok()
            .and_then(|p| p.meta);
        if !super::negotiated_in(&call, meta.as_ref()) {
            let what = format!("{} with taskIds", SubscriptionsListen::NAME);
            return Box::pin(std::future::ready(Err(super::methods::not_negotiated(&what))));
        }
        let tasks = tasks.clone();
        Box::pin(async move {
            let owner = owner_of(&call);
            // Subscribe before reading the tasks, so that no change after the read is missed.
            let events = tasks.events.0.subscribe();
            let first = watchable(&tasks, &owner, asked).await?;
            let (tx, notes) = mpsc::channel(64);
            let ids: Vec<String> = first.iter().map(|r| r.id.clone()).collect();
            let honoured = SubscriptionFilter {
                task_ids: (!ids.is_empty()).then_some(ids),
                ..Default::default()
            };
            call.extensions
                .insert(FeedSlot(Mutex::new(Some(ListenFeed { honoured, notes }))));
            if !first.is_empty() {
                tokio::spawn(feed(tasks, owner, first, events, tx));
            }
            plain.run(call).await
        })
    }
}

/// The tasks of `asked` that `owner` may watch (each once), with their state now.
async fn watchable(tasks: &Runtime, owner: &TaskOwner, asked: Vec<String>) -> Result<Vec<TaskRecord>, ErrorObject> {
    let mut found: Vec<TaskRecord> = Vec::new();
    for id in asked {
        if !plausible_id(&id) || found.iter().any(|r| r.id == id) {
            continue;
        }
        match tasks.config.store.get(&id, owner).await {
            Ok(Lookup::Found(r)) => found.push(*r),
            Ok(_) => {}
            Err(e) => return Err(ErrorObject::internal(e.to_string())),
        }
    }
    Ok(found)
}

/// Send each watched task's state now, then every change of it, until all have ended or the
/// stream is gone. Changes of this instance arrive as events; the store is read every poll
/// interval for those made elsewhere.
async fn feed(
    tasks: Arc<Runtime>,
    owner: TaskOwner,
    first: Vec<TaskRecord>,
    mut events: broadcast::Receiver<Arc<TaskRecord>>,
    tx: mpsc::Sender<(&'static str, JsonObject)>,
) {
    let mut last: HashMap<String, (TaskStatus, Option<String>)> = HashMap::new();
    let send = |record: &TaskRecord, last: &mut HashMap<String, (TaskStatus, Option<String>)>| {
        let now = seen(record);
        if last.get(&record.id) == Some(&now) {
            return None;
        }
        last.insert(record.id.clone(), now);
        params_of(record)
    };
    let mut watching: Vec<String> = Vec::new();
    for record in &first {
        if let Some(p) = send(record, &mut last) {
            if tx.send((TaskStatusChanged::NAME, p)).await.is_err() {
                return;
            }
        }
        if !record.status.is_terminal() {
            watching.push(record.id.clone());
        }
    }
    let mut every = tokio::time::interval(tasks.config.poll_interval.max(std::time::Duration::from_millis(10)));
    every.tick().await;
    while !watching.is_empty() {
        let changed: Vec<TaskRecord> = tokio::select! {
            () = tx.closed() => return,
            event = events.recv() => match event {
                Ok(r) if r.owner == owner && watching.contains(&r.id) => vec![(*r).clone()],
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(_)) => reread(&tasks, &owner, &watching).await,
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = every.tick() => reread(&tasks, &owner, &watching).await,
        };
        for record in changed {
            if let Some(p) = send(&record, &mut last) {
                if tx.send((TaskStatusChanged::NAME, p)).await.is_err() {
                    return;
                }
            }
            if record.status.is_terminal() {
                watching.retain(|id| *id != record.id);
            }
        }
    }
}

/// The watched tasks as the store has them now (one that is gone is left out).
async fn reread(tasks: &Runtime, owner: &TaskOwner, watching: &[String]) -> Vec<TaskRecord> {
    let mut out = Vec::new();
    for id in watching {
        if let Ok(Lookup::Found(r)) = tasks.config.store.get(id, owner).await {
            out.push(*r);
        }
    }
    out
}
