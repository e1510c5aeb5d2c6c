//! `subscriptions/listen` (spec: 2026-07-28 `basic/patterns/subscriptions`): one long request
//! that carries the catalogue changes its filter asks for.

use std::sync::Arc;

use mcpkit_types::method::{
    NotificationMethod, PromptListChanged, ResourceListChanged, ResourceUpdated, SubscriptionsAcknowledged,
    ToolListChanged,
};
use mcpkit_types::schema::{
    SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams, META_SUBSCRIPTION_ID,
};
use mcpkit_types::{ErrorObject, RequestId};
use serde_json::json;
use tokio::sync::broadcast;

use crate::engine::{HandlerResult, Peer};
use crate::server::Server;
use crate::wire::to_raw;

/// A change a `subscriptions/listen` stream may carry.
#[derive(Debug, Clone)]
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

/// The part of `asked` this server honours: only kinds it can ever send.
fn honoured(server: &Server, asked: SubscriptionFilter) -> SubscriptionFilter {
    let snap = server.snapshot();
    let yes = |offered: bool, asked: Option<bool>| (offered && asked == Some(true)).then_some(true);
    SubscriptionFilter {
        tools_list_changed: yes(server.offers_tools(&snap), asked.tools_list_changed),
        prompts_list_changed: yes(snap.offers_prompts(), asked.prompts_list_changed),
        resources_list_changed: yes(snap.offers_resources(), asked.resources_list_changed),
        resource_subscriptions: asked.resource_subscriptions.filter(|_| snap.offers_resources()),
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
) -> HandlerResult {
    let filter = honoured(&server, p.notifications);
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
