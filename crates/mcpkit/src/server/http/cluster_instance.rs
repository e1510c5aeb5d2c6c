//! What instances of one deployment tell each other (the wire of `cluster`), and what each
//! instance runs beside its endpoint: catalogue changes to and from the others, and the shared
//! `requestState` key ring.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::server::backend::{Address, BackendError, Bus, KeyRing, SealingKey, SessionUpdate, SwitchStore};
use crate::server::Change;
use crate::server::Server;

/// How often the shared `requestState` key ring is read again, so a rotation reaches every
/// running instance within this. Cheap: a backend that caches the ring (Redis drops its cache
/// when a rotation is announced) answers from memory.
const KEY_RELOAD: Duration = Duration::from_secs(1);

/// A message between instances.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Envelope {
    /// The instance that sent it (its own messages come back to it, and are skipped).
    pub(super) from: String,
    pub(super) body: Body,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) enum Body {
    /// A client message for whichever instance awaits it (`tag`: only that one).
    ClientFrame { frame: String, tag: Option<u64> },
    /// The record changed.
    Changed(SessionUpdate),
    /// The session ended (DELETE).
    Ended,
    /// An event of one of the session's SSE streams.
    StreamEvent {
        stream: String,
        position: u64,
        data: String,
        is_reply: bool,
    },
    /// A catalogue change (to all instances).
    Catalogue(Change),
    /// Does an instance still run the request of this stream? (asked by one that resumed it)
    StreamProbe { stream: String },
    /// Yes: the instance running it answers.
    StreamAlive { stream: String },
}

/// What an instance shares with the others beside its sessions.
pub(super) struct Instance {
    pub(super) keys: Arc<dyn KeyRing>,
    pub(super) bus: Arc<dyn Bus>,
    pub(super) switches: Arc<dyn SwitchStore>,
    /// Its name among the instances.
    pub(super) instance_id: Arc<str>,
    /// Tells the other instances (and the sessions of the deployment) of a catalogue change
    /// made here.
    pub(super) relay: Arc<dyn Fn(Change) + Send + Sync>,
}

/// Start what an instance of a deployment runs beside its endpoint: catalogue changes to and from
/// the other instances, and the shared key ring (loaded now when the ring answers at once,
/// then every [`KEY_RELOAD`]).
pub(super) fn start(instance: Instance, server: &Server, stop: &CancellationToken) {
    server.set_switch_store(Some(instance.switches.clone()));
    server.set_relay(Some(instance.relay.clone()));
    let (c, s, stop) = (instance, server.clone(), stop.clone());
    let mut first = Some(c.keys.load());
    if let Some(keys) = first.as_mut().and_then(futures_util::FutureExt::now_or_never) {
        install_keys(&s, keys);
        first = None;
    }
    tokio::spawn(async move {
        let all = c.bus.subscribe(&Address::All).await;
        let mut all = match all {
            Ok(sub) => Some(sub),
            Err(e) => {
                tracing::warn!("bus: {e}; catalogue changes of other instances will not reach this one");
                None
            }
        };
        if let Some(f) = first.take() {
            install_keys(&s, f.await);
        }
        // Switches made before this instance started.
        s.catch_up().await;
        let mut reload = tokio::time::interval_at(Instant::now() + KEY_RELOAD, KEY_RELOAD);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = reload.tick() => install_keys(&s, c.keys.load().await),
                m = async { match all.as_mut() { Some(sub) => sub.recv().await, None => std::future::pending().await } } => {
                    let Some(m) = m else { all = None; continue };
                    if let Ok(Envelope { from, body: Body::Catalogue(change) }) = serde_json::from_slice(&m) {
                        if *from != *c.instance_id {
                            if matches!(change, Change::Tools | Change::Prompts) {
                                s.catch_up().await;
                            }
                            s.take_relayed(change);
                        }
                    }
                }
            }
        }
    });
}

/// Load the shared keys into `server` (a failure keeps the keys it has).
pub(super) fn install_keys(server: &Server, keys: Result<Vec<SealingKey>, BackendError>) {
    match keys.map(|k| crate::server::RequestStateKeys::from_ring(&k)) {
        Ok(Some(ring)) => server.set_request_state_keys(ring),
        Ok(None) => tracing::warn!("key ring: empty ring"),
        Err(e) => tracing::warn!("key ring: {e}"),
    }
}
