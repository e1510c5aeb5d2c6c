//! Subscriptions of the stateless era (spec: 2026-07-28 `basic/patterns/subscriptions`): one
//! long-lived `subscriptions/listen` request per [`Subscription`], acknowledged before it is
//! handed out.

use mcpkit_types::method::{Method, NotificationMethod, SubscriptionsAcknowledged, SubscriptionsListen};
use mcpkit_types::schema::{
    RequestMeta, SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListenParams,
};
use tokio::sync::broadcast;

use super::{Client, ServerNotification};
use crate::engine::RequestOptions;
use crate::error::{Error, Result};

/// An open `subscriptions/listen` stream; dropping it ends the subscription (the request is
/// cancelled: the stream is closed on HTTP, `notifications/cancelled` is sent on stdio).
#[derive(Debug)]
pub struct Subscription {
    acknowledged: SubscriptionFilter,
    request: tokio::task::AbortHandle,
}

impl Subscription {
    /// The notification kinds the server agreed to send.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.request.abort();
    }
}

impl Client {
    /// Open a `subscriptions/listen` stream (stateless era; spec: 2026-07-28
    /// `basic/patterns/subscriptions`). Returns once the server acknowledged it, with the part of
    /// `filter` it honours; the notifications then arrive on [`Client::notifications`], each
    /// tagged with the subscription id in `_meta`. Dropping the [`Subscription`] ends it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription> {
        self.listen_with(filter, None).await
    }

    /// [`Client::listen`], with `meta` as the request's `_meta` (the protocol fields are added
    /// where it has none: a request declaring an extension for itself).
    pub(super) async fn listen_with(
        &self,
        filter: SubscriptionFilter,
        meta: Option<RequestMeta>,
    ) -> Result<Subscription> {
        let Some(stateless) = &self.inner.stateless else {
            return Err(Error::Protocol(format!(
                "{} belongs to the stateless era; use subscribe() on this session",
                SubscriptionsListen::NAME
            )));
        };
        let _one_at_a_time = self.inner.listening.lock().await;
        let mut notes = self.notifications();
        let value = serde_json::to_value(SubscriptionsListenParams {
            notifications: filter,
            meta,
        })
        .map_err(|e| Error::Serialize(e.to_string()))?;
        let params = stateless.params(value)?;
        let peer = self.inner.peer.clone();
        let mut request = tokio::spawn(async move {
            peer.request_raw(SubscriptionsListen::NAME, Some(&params), RequestOptions::default())
                .await
        });
        let acknowledged = loop {
            tokio::select! {
                ended = &mut request => {
                    return Err(match ended {
                        Ok(Err(e)) => e,
                        _ => Error::Protocol("the subscription ended before it was acknowledged".into()),
                    });
                }
                note = notes.recv() => match note {
                    Ok(ServerNotification::Other { method, params })
                        if method == SubscriptionsAcknowledged::NAME =>
                    {
                        let ack: SubscriptionsAcknowledgedParams = params
                            .and_then(|p| serde_json::from_value(p).ok())
                            .ok_or_else(|| Error::InvalidResponse("malformed subscription acknowledgement".into()))?;
                        break ack.notifications;
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Err(Error::ConnectionClosed),
                },
            }
        };
        Ok(Subscription {
            acknowledged,
            request: request.abort_handle(),
        })
    }
}
