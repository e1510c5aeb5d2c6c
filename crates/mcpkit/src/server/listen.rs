//! `subscriptions/listen` (spec: 2026-07-28 `basic/patterns/subscriptions`): one long request
//! that carries the catalogue changes its filter asks for.

use std::sync::{Arc, Mutex};

use mcpkit_types::method::{
    NotificationMethod, PromptListChanged, ResourceListChanged, ResourceUpdated, SubscriptionsAcknowledged,
    ToolListChanged,
};
use mcpkit_types::schema::JsonObject;
use mcpkit_types::schema::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams, META_SUBSCRIPTION_ID,
};
use mcpkit_types::{ErrorObject, RequestId};
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::engine::{HandlerResult, Peer};
use crate::server::Server;
use crate::wire::to_raw;

/// A change of the catalogue: what a `subscriptions/listen` stream and a session's
/// notifications carry, and what travels between instances sharing backends (as it is: the
/// one enum for every use).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Change {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(Arc<str>),
}

impl Change {
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Change::Tools => ToolListChanged::NAME,
            Change::Prompts => PromptListChanged::NAME,
            Change::Resources => ResourceListChanged::NAME,
            Change::ResourceUpdated(_) => ResourceUpdated::NAME,
        }
    }

    fn wanted_by(&self, f: &SubscriptionFilter) -> bool {
        match self {
            Change::Tools => f.tools_list_changed == Some(true),
            Change::Prompts => f.prompts_list_changed == Some(true),
            Change::Resources => f.resources_list_changed == Some(true),
            Change::ResourceUpdated(uri) => f
                .resource_subscriptions
                .as_ref()
                .is_some_and(|s| s.iter().any(|u| u.as_str() == &**uri)),
        }
    }
}

/// What an extension adds to one `subscriptions/listen` stream (the Tasks extension's
/// `notifications/tasks`): the filter members it honours, and the notifications to forward,
/// each tagged with the subscription id like the core ones. The stream carries them until the
/// sender is dropped or the subscription ends.
pub(crate) struct ListenFeed {
    /// The members of the acknowledged filter the extension honours (the others are unset).
    pub(crate) honoured: SubscriptionFilter,
    /// Notifications to forward: method and params.
    pub(crate) notes: mpsc::Receiver<(&'static str, JsonObject)>,
}

/// Where an extension wrapping `subscriptions/listen` leaves its [`ListenFeed`] (in the
/// request's extensions, for the core handler to take).
pub(crate) struct FeedSlot(pub(crate) Mutex<Option<ListenFeed>>);

/// The next note of `feed`; never, once there is none.
async fn next_note(feed: &mut Option<ListenFeed>) -> Option<(&'static str, JsonObject)> {
    match feed {
        Some(f) => f.notes.recv().await,
        None => std::future::pending().await,
    }
}

/// The part of `asked` this server honours: only kinds it can ever send.
fn honoured(server: &Server, asked: SubscriptionFilter) -> SubscriptionFilter {
    let snap = server.snapshot();
    let yes = |offered: bool, asked: Option<bool>| (offered && asked == Some(true)).then_some(true);
    SubscriptionFilter {
        tools_list_changed: yes(server.offers_tools(&snap), asked.tools_list_changed),
        prompts_list_changed: yes(snap.offers_prompts(), asked.prompts_list_changed),
        resources_list_changed: yes(snap.offers_resources(), asked.resources_list_changed),
        resource_subscriptions: asked.resource_subscriptions.filter(|_| snap.offers_resources()),
        // An extension that serves task notifications adds its own (see [`ListenFeed`]).
        task_ids: None,
    }
}

/// Spec: 2026-07-28 `basic/patterns/subscriptions`. Acknowledge, then forward the changes the
/// filter asks for, each tagged with the subscription id, until the client cancels (no reply) or
/// the server ends subscriptions (a graceful `complete` reply).
pub(crate) async fn listen(
    server: Server,
    peer: Peer,
    id: RequestId,
    p: SubscriptionsListenParams,
    cancel: tokio_util::sync::CancellationToken,
    mut feed: Option<ListenFeed>,
) -> HandlerResult {
    let mut filter = honoured(&server, p.notifications);
    if let Some(f) = &feed {
        filter.task_ids = f.honoured.task_ids.clone();
    }
    // Subscribe before acknowledging, so nothing after the acknowledgement is missed.
    let mut changes = server.inner.changes.subscribe();
    let tag = json!({ META_SUBSCRIPTION_ID: id });
    let ack = SubscriptionsAcknowledgedParams {
        notifications: filter.clone(),
        meta: tag.as_object().cloned(),
    };
    peer.notify_related(SubscriptionsAcknowledged::NAME, Some(&ack), &id)
        .map_err(|e| ErrorObject::internal(e.to_string()))?;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return Err(ErrorObject::internal("subscription cancelled")),
            _ = server.inner.ending.cancelled() => break,
            note = next_note(&mut feed) => match note {
                Some((method, mut params)) => {
                    let meta = params.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
                    if let Value::Object(meta) = meta {
                        meta.insert(META_SUBSCRIPTION_ID.to_owned(), json!(id));
                    }
                    if peer.notify_related(method, Some(&params), &id).is_err() {
                        break;
                    }
                }
                // The extension has nothing more to send; the core kinds go on.
                None => feed = None,
            },
            change = changes.recv() => match change {
                Ok(change) if change.wanted_by(&filter) => {
                    let params = match &change {
                        Change::ResourceUpdated(uri) => json!({ "uri": &**uri, "_meta": tag }),
                        _ => json!({ "_meta": tag }),
                    };
                    if peer.notify_related(change.method(), Some(&params), &id).is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::debug!("subscription {id} missed {n} changes");
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
        }
    }
    let result = json!({ "resultType": "complete", "_meta": tag });
    to_raw(&result)
}
