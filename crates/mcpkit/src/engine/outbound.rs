//! Requests to the other side: an id, a waiter in the pending map, progress routed by token to
//! the caller, an optional timeout (restarted by progress when asked), and
//! `notifications/cancelled` when the caller gives up.

use std::pin::{pin, Pin};
use std::sync::atomic::Ordering;

use mcpkit_types::jsonrpc::OutgoingRequest;
use mcpkit_types::method::{Cancelled, Method};
use mcpkit_types::schema::{CancelledParams, ProgressParams, ProgressToken};
use mcpkit_types::{ErrorObject, RequestId};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, Sleep};

use super::{Peer, RequestOptions};
use crate::error::{Error, Result};
use crate::sync::lock;
use crate::telemetry::{Ending, Outbound};
use crate::transport::Route;

impl Peer {
    /// Send a typed request and wait for its typed result.
    pub async fn request<M: Method>(&self, params: &M::Params) -> Result<M::Result> {
        self.request_with::<M>(params, RequestOptions::default()).await
    }

    /// Send a typed request with per-call options.
    pub async fn request_with<M: Method>(&self, params: &M::Params, options: RequestOptions) -> Result<M::Result> {
        let raw = self.request_raw(M::NAME, Some(params), options).await?;
        decode(&raw)
    }

    /// Send a request with any serializable params; the raw result comes back.
    ///
    /// Dropping the returned future before it completes sends `notifications/cancelled`.
    pub async fn request_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>> {
        if self.shared.detached {
            return Err(Error::Protocol(format!(
                "{method}: this connection carries no requests to the other side (a stateless request)"
            )));
        }
        let id = RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed));
        let mut bytes = serde_json::to_vec(&OutgoingRequest::new(&id, method, params))
            .map_err(|e| Error::Serialize(e.to_string()))?;
        let Some(span) = Outbound::start(&self.shared.scope, method, Some(&id), &bytes) else {
            return self.send_and_wait(id, bytes, options).await;
        };
        bytes = span.inject(bytes);
        let outcome = self.send_and_wait(id, bytes, options).await;
        match &outcome {
            Ok(raw) => span.finish(&Ending::Result(raw)),
            Err(Error::Rpc(e)) => span.finish(&Ending::Error(e)),
            Err(Error::Timeout(_)) => span.finish(&Ending::Failed("timeout")),
            Err(Error::ConnectionClosed) => span.finish(&Ending::Failed("connection_closed")),
            Err(_) => span.finish(&Ending::Failed("_OTHER")),
        }
        outcome
    }

    /// Send one serialized request and wait for its answer (progress, timeout, cancellation).
    async fn send_and_wait(&self, id: RequestId, bytes: Vec<u8>, options: RequestOptions) -> Result<Box<RawValue>> {
        let (tx, mut rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id.clone(), tx);
        let mut guard = OutboundGuard {
            peer: self,
            id: Some(id.clone()),
            progress: None,
        };
        let mut progress_rx = None;
        if let Some((token, sink)) = options.progress {
            let (ptx, prx) = mpsc::unbounded_channel();
            lock(&self.shared.progress).insert(token.clone(), ptx);
            guard.progress = Some(token);
            progress_rx = Some((prx, sink));
        }
        let route = options.related.clone().map_or(Route::Standalone, Route::Related);
        if self.is_closed() || self.send_out(super::Outgoing::Frame(bytes, route)).is_err() {
            guard.id = None;
            return Err(Error::ConnectionClosed);
        }
        let timeout = options.timeout.or(self.shared.options.request_timeout);
        // A timer only when there is a timeout to keep.
        let mut expiry = pin!(timeout.map(tokio::time::sleep));
        loop {
            tokio::select! {
                r = &mut rx => {
                    guard.id = None; // answered: nothing to cancel
                    // Progress read before the response is already queued: deliver it first.
                    if let Some((prx, sink)) = progress_rx.as_mut() {
                        while let Ok(p) = prx.try_recv() {
                            let _ = sink.send(p);
                        }
                    }
                    return r.unwrap_or_else(|_| Err(self.close_error()));
                }
                p = async { match progress_rx.as_mut() { Some((prx, _)) => prx.recv().await, None => std::future::pending().await } } => {
                    if let (Some(p), Some((_, sink))) = (p, progress_rx.as_ref()) {
                        let _ = sink.send(p);
                        if options.reset_timeout_on_progress {
                            if let (Some(sleep), Some(t)) = (expiry.as_mut().as_pin_mut(), timeout) {
                                sleep.reset(Instant::now() + t);
                            }
                        }
                    }
                }
                () = expired(expiry.as_mut().as_pin_mut()) => {
                    // The timer is armed only with a timeout, so this is the timeout.
                    let t = timeout.unwrap_or_default();
                    guard.cancel_with(&format!("timed out after {t:?}"));
                    return Err(Error::Timeout(t));
                }
            }
        }
    }

    /// Deliver an answer to the request waiting for it.
    pub(super) fn on_response(&self, id: RequestId, outcome: std::result::Result<&RawValue, ErrorObject>) {
        let waiter = lock(&self.shared.pending).remove(&id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(outcome.map(ToOwned::to_owned).map_err(Error::Rpc));
            }
            None => tracing::debug!("ignoring a response to unknown request {id}"),
        }
    }

    /// Route `notifications/progress` to the request that asked for it, by token.
    pub(super) fn on_progress(&self, params: Option<&RawValue>) {
        let Some(p) = params.and_then(|p| serde_json::from_str::<ProgressParams>(p.get()).ok()) else {
            return;
        };
        let tx = lock(&self.shared.progress).get(&p.progress_token).cloned();
        if let Some(tx) = tx {
            let _ = tx.send(p);
        }
    }
}

/// Resolves when the request's timer fires; never, when it has none.
async fn expired(timer: Option<Pin<&mut Sleep>>) {
    match timer {
        Some(sleep) => sleep.await,
        None => std::future::pending().await,
    }
}

/// Decode a raw result into a method's result type.
fn decode<T: DeserializeOwned>(raw: &RawValue) -> Result<T> {
    serde_json::from_str(raw.get()).map_err(|e| Error::InvalidResponse(e.to_string()))
}

/// Sends `notifications/cancelled` if the request future is dropped before its answer.
struct OutboundGuard<'a> {
    peer: &'a Peer,
    id: Option<RequestId>,
    progress: Option<ProgressToken>,
}

impl OutboundGuard<'_> {
    fn cancel_with(&mut self, reason: &str) {
        if let Some(id) = self.id.take() {
            lock(&self.peer.shared.pending).remove(&id);
            let params = CancelledParams {
                request_id: Some(id),
                reason: Some(reason.to_owned()),
                ..Default::default()
            };
            let _ = self.peer.notify::<Cancelled>(&params);
        }
    }
}

impl Drop for OutboundGuard<'_> {
    fn drop(&mut self) {
        if let Some(token) = self.progress.take() {
            lock(&self.peer.shared.progress).remove(&token);
        }
        if self.id.is_some() && !self.peer.is_closed() {
            self.cancel_with("the caller dropped the request");
        } else if let Some(id) = self.id.take() {
            lock(&self.peer.shared.pending).remove(&id);
        }
    }
}
