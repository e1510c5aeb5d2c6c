//! Following an upstream: its catalogue listed and published, its notifications and list
//! changes followed until its connection ends.

use std::sync::{Arc, Weak};

use mcpkit_types::schema::SubscriptionFilter;
use tokio::sync::broadcast;

use super::super::registrations::tool_name_rule;
use super::forward::{prompt_def, resource_def, template_def, tool_def};
use super::items::{prefixed, Items};
use super::upstream::{detach_if, publish, servers, Shared};
use crate::client::{Client, ServerNotification, Subscription};
use crate::error::Result;

/// Follow the upstream's notifications until its connection ends, then detach it.
pub(super) async fn follow(
    shared: Weak<Shared>,
    number: u64,
    client: Client,
    mut notifications: broadcast::Receiver<ServerNotification>,
) {
    let peer = client.peer().clone();
    // On the stateless wire the list changes come on a `subscriptions/listen` stream, kept
    // open while this follows the upstream.
    let _listening = match shared.upgrade() {
        Some(shared) if client.is_stateless() => listen(&shared, number, &client).await,
        _ => None,
    };
    loop {
        let next = tokio::select! {
            () = peer.closed() => None,
            n = notifications.recv() => Some(n),
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let relist = match next {
            None | Some(Err(broadcast::error::RecvError::Closed)) => {
                tracing::warn!("upstream {:?}: the connection ended", shared.name);
                detach_if(&shared, number);
                return;
            }
            Some(Err(broadcast::error::RecvError::Lagged(_))) => true,
            Some(Ok(ServerNotification::ToolListChanged))
            | Some(Ok(ServerNotification::PromptListChanged))
            | Some(Ok(ServerNotification::ResourceListChanged)) => true,
            Some(Ok(ServerNotification::ResourceUpdated(p))) => {
                for server in servers(&shared) {
                    server.notify_resource_updated(&p.uri);
                }
                false
            }
            Some(Ok(_)) => false,
        };
        if relist && is_current(&shared, number) {
            if let Err(e) = refresh(&shared, &client).await {
                tracing::warn!("upstream {:?}: listing its catalogue again failed: {e}", shared.name);
            }
        }
    }
}

/// How long a stateless-era upstream has to acknowledge the `subscriptions/listen` the
/// follower opens.
const LISTEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Open a `subscriptions/listen` to the list changes the stateless-era upstream declares, and
/// list its catalogue again once acknowledged (a change between the first listing and the
/// acknowledgement is not lost). `None` when it declares none or does not acknowledge.
async fn listen(shared: &Arc<Shared>, number: u64, client: &Client) -> Option<Subscription> {
    let caps = client.server_capabilities();
    let filter = SubscriptionFilter {
        tools_list_changed: caps.tools.as_ref().and_then(|t| t.list_changed).filter(|c| *c),
        prompts_list_changed: caps.prompts.as_ref().and_then(|p| p.list_changed).filter(|c| *c),
        resources_list_changed: caps.resources.as_ref().and_then(|r| r.list_changed).filter(|c| *c),
        ..Default::default()
    };
    if filter == SubscriptionFilter::default() {
        return None;
    }
    match tokio::time::timeout(LISTEN_TIMEOUT, client.listen(filter)).await {
        Ok(Ok(subscription)) => {
            if is_current(shared, number) {
                if let Err(e) = refresh(shared, client).await {
                    tracing::warn!("upstream {:?}: listing its catalogue again failed: {e}", shared.name);
                }
            }
            Some(subscription)
        }
        Ok(Err(e)) => {
            tracing::warn!("upstream {:?}: its list changes will not be followed: {e}", shared.name);
            None
        }
        Err(_) => {
            tracing::warn!(
                "upstream {:?}: its list changes will not be followed: subscriptions/listen not acknowledged in {LISTEN_TIMEOUT:?}",
                shared.name
            );
            None
        }
    }
}

fn is_current(shared: &Shared, number: u64) -> bool {
    crate::sync::read(&shared.link)
        .as_ref()
        .is_some_and(|(n, _)| *n == number)
}

/// List the upstream's catalogue through `client` and publish it.
pub(super) async fn refresh(shared: &Arc<Shared>, client: &Client) -> Result<()> {
    let caps = client.server_capabilities().clone();
    let mut tools = if caps.tools.is_some() {
        client.list_all_tools().await?
    } else {
        Vec::new()
    };
    if let Some(allow) = &shared.allow_tools {
        tools.retain(|t| allow.contains(&t.name));
    }
    // A server this one does not control may name a tool outside the rules: it is left out
    // rather than keeping every other upstream from starting.
    tools.retain(|t| {
        let listed = prefixed(&shared.name, &t.name);
        match tool_name_rule(&listed) {
            None => true,
            Some(rule) => {
                tracing::warn!(
                    "upstream {:?}: leaving out tool {listed:?}: the name {rule}",
                    shared.name
                );
                false
            }
        }
    });
    let prompts = if caps.prompts.is_some() {
        client.list_all_prompts().await?
    } else {
        Vec::new()
    };
    let (resources, templates) = if caps.resources.is_some() {
        (
            client.list_all_resources().await?,
            client.list_all_resource_templates().await?,
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let weak = Arc::downgrade(shared);
    let items = Items {
        tools: tools.into_iter().map(|t| tool_def(&weak, &shared.name, t)).collect(),
        prompts: prompts
            .into_iter()
            .map(|p| prompt_def(&weak, &shared.name, p))
            .collect(),
        resources: resources.into_iter().map(|r| resource_def(&weak, r)).collect(),
        templates: templates.into_iter().filter_map(|t| template_def(&weak, t)).collect(),
    };
    publish(shared, items.tagged(&shared.name).requiring(&shared.scopes));
    Ok(())
}
