//! What instances sharing backends need from a [`Server`]: its catalogue changes told to the
//! other instances (and theirs taken in), and its `requestState` keys replaced by the shared
//! ring.

use std::sync::Arc;

use mcpkit_types::schema::ResourceUpdatedParams;
use serde::{Deserialize, Serialize};

use super::listen::Change;
use super::{RequestStateKeys, Server};

/// A catalogue change as it travels between instances.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum RelayedChange {
    Tools,
    Prompts,
    Resources,
    ResourceUpdated(String),
}

impl From<&Change> for RelayedChange {
    fn from(c: &Change) -> Self {
        match c {
            Change::Tools => RelayedChange::Tools,
            Change::Prompts => RelayedChange::Prompts,
            Change::Resources => RelayedChange::Resources,
            Change::ResourceUpdated(uri) => RelayedChange::ResourceUpdated(uri.to_string()),
        }
    }
}

impl Server {
    /// Hand every catalogue change made here to `relay` as well (`None`: stop).
    pub(crate) fn set_relay(&self, relay: Option<Arc<dyn Fn(RelayedChange) + Send + Sync>>) {
        let relay = relay.map(|r| Arc::new(move |c: &Change| r(RelayedChange::from(c))) as super::Relay);
        *crate::sync::write(&self.inner.relay) = relay;
    }

    /// A change made on another instance: tell this process's sessions and listeners (and
    /// not the relay again).
    pub(crate) fn take_relayed(&self, change: RelayedChange) {
        match change {
            RelayedChange::Tools => self.fan_out(Change::Tools, None, |_| true),
            RelayedChange::Prompts => self.fan_out(Change::Prompts, None, |_| true),
            RelayedChange::Resources => self.fan_out(Change::Resources, None, |_| true),
            RelayedChange::ResourceUpdated(uri) => {
                let params = serde_json::to_value(ResourceUpdatedParams {
                    uri: uri.clone(),
                    meta: None,
                })
                .ok();
                let change = Change::ResourceUpdated(uri.as_str().into());
                self.fan_out(change, params.as_ref(), |s| s.is_subscribed(&uri));
            }
        }
    }

    /// Seal and open `requestState` with `keys` from now on (the shared ring).
    pub(crate) fn set_request_state_keys(&self, keys: RequestStateKeys) {
        *crate::sync::write(&self.inner.state_keys) = keys;
    }
}
