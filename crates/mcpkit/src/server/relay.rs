//! What instances sharing backends need from a [`Server`]: its catalogue changes told to the
//! other instances (and theirs taken in), and its `requestState` keys replaced by the shared
//! ring.

use std::sync::Arc;

use mcpkit_types::schema::ResourceUpdatedParams;

use super::listen::Change;
use super::{RequestStateKeys, Server};

impl Server {
    /// Hand every catalogue change made here to `relay` as well (`None`: stop).
    pub(crate) fn set_relay(&self, relay: Option<Arc<dyn Fn(Change) + Send + Sync>>) {
        let relay = relay.map(|r| Arc::new(move |c: &Change| r(c.clone())) as super::Relay);
        *crate::sync::write(&self.inner.relay) = relay;
    }

    /// A change made on another instance: tell this process's sessions and listeners (and
    /// not the relay again).
    pub(crate) fn take_relayed(&self, change: Change) {
        match change {
            Change::ResourceUpdated(uri) => {
                let params = serde_json::to_value(ResourceUpdatedParams {
                    uri: uri.to_string(),
                    meta: None,
                })
                .ok();
                let subscribed = uri.clone();
                self.fan_out(Change::ResourceUpdated(uri), params.as_ref(), |s| {
                    s.is_subscribed(&subscribed)
                });
            }
            change => self.fan_out(change, None, |_| true),
        }
    }

    /// Seal and open `requestState` with `keys` from now on (the shared ring).
    pub(crate) fn set_request_state_keys(&self, keys: RequestStateKeys) {
        *crate::sync::write(&self.inner.state_keys) = keys;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_travels_between_instances_as_it_always_did() {
        // Instances of two releases share a bus during a rolling update: the encoding is fixed.
        let cases = [
            (Change::Tools, r#""Tools""#),
            (Change::Prompts, r#""Prompts""#),
            (Change::Resources, r#""Resources""#),
            (
                Change::ResourceUpdated("file:///a".into()),
                r#"{"ResourceUpdated":"file:///a"}"#,
            ),
        ];
        for (change, wire) in cases {
            assert_eq!(serde_json::to_string(&change).unwrap(), wire);
            assert_eq!(serde_json::from_str::<Change>(wire).unwrap(), change);
        }
    }
}
