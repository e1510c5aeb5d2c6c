//! The one pub/sub connection of an instance (RESP3): it routes each message to the
//! subscriptions of its channel, and listens on the deployment's control channel, whose
//! messages invalidate what instances cache (the key ring).
//!
//! When the connection drops, subscriptions stay open and caches are distrusted; the
//! connection manager reconnects by itself, and a watchdog, as soon as Redis answers, subscribes
//! the control channel and every channel that has subscribers again. Messages published while
//! the connection was down are lost (delivery is at most once, as the bus trait says: what must
//! survive an outage goes to a store first).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, ProtocolVersion, PushInfo, PushKind, RedisResult, Value};
use tokio::sync::{mpsc, oneshot};

use crate::connection::manager_config;
use crate::sync::lock;

/// Messages a subscription holds before newer ones are lost (as the in-memory bus).
pub(crate) const QUEUE: usize = 1024;
/// How often the watchdog tries to listen again while the connection is down.
const WATCHDOG: Duration = Duration::from_millis(250);

type Route = Vec<(u64, mpsc::Sender<Bytes>)>;
/// What runs for each control message.
pub(crate) type ControlHook = Box<dyn Fn(&[u8]) + Send + Sync>;

enum Change {
    Subscribe(Vec<u8>, oneshot::Sender<RedisResult<()>>),
    Unsubscribe(Vec<u8>),
}

pub(crate) struct Inner {
    conn: ConnectionManager,
    routes: Mutex<HashMap<Vec<u8>, Route>>,
    next: AtomicU64,
    changes: mpsc::UnboundedSender<Change>,
    control: Vec<u8>,
    hooks: Mutex<Vec<ControlHook>>,
    listening: AtomicBool,
    generation: AtomicU64,
}

/// The instance's subscriber connection. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Subscriber {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("listening", &self.inner.listening.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Whether a cache entry stored at [`Subscriber::generation`] `gen` may still be trusted.
#[derive(Debug, Clone)]
pub(crate) struct Trust {
    inner: Weak<Inner>,
}

impl Trust {
    /// The generation now, while listening (invalidations arrive); `None` while not.
    pub(crate) fn generation(&self) -> Option<u64> {
        let inner = self.inner.upgrade()?;
        let generation = inner.generation.load(Ordering::Acquire);
        inner.listening.load(Ordering::Acquire).then_some(generation)
    }
}

impl Subscriber {
    /// Connect the subscriber of `client` (RESP3), listening on `control`.
    pub(crate) async fn connect(client: &Client, control: String) -> RedisResult<Subscriber> {
        let info = client.get_connection_info().clone();
        let settings = info.redis_settings().clone().set_protocol(ProtocolVersion::RESP3);
        let client = Client::open(info.set_redis_settings(settings))?;
        let (push_tx, push_rx) = mpsc::unbounded_channel::<PushInfo>();
        let config: ConnectionManagerConfig = manager_config().set_push_sender(push_tx);
        let conn = ConnectionManager::new_with_config(client, config).await?;
        let (changes, changes_rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            conn,
            routes: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            changes,
            control: control.into_bytes(),
            hooks: Mutex::new(Vec::new()),
            listening: AtomicBool::new(false),
            generation: AtomicU64::new(0),
        });
        let mut conn = inner.conn.clone();
        conn.subscribe(&inner.control).await?;
        inner.listening.store(true, Ordering::Release);
        tokio::spawn(read_pushes(Arc::downgrade(&inner), push_rx));
        tokio::spawn(apply_changes(Arc::downgrade(&inner), changes_rx));
        Ok(Subscriber { inner })
    }

    /// Run `hook` for every control message from now on.
    pub(crate) fn on_control(&self, hook: ControlHook) {
        lock(&self.inner.hooks).push(hook);
    }

    /// What caches consult before they trust an entry.
    pub(crate) fn trust(&self) -> Trust {
        Trust {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// The control channel's name (to publish invalidations to).
    pub(crate) fn control(&self) -> &[u8] {
        &self.inner.control
    }

    /// Whether the connection is up and listening.
    pub(crate) fn is_listening(&self) -> bool {
        self.inner.listening.load(Ordering::Acquire)
    }

    /// Receive the messages of `channel` from the moment this returns; dropping the receiver's
    /// guard (the closure returned) unsubscribes.
    pub(crate) async fn subscribe(
        &self,
        channel: Vec<u8>,
    ) -> RedisResult<(mpsc::Receiver<Bytes>, impl FnOnce() + Send + Sync + 'static)> {
        let (tx, rx) = mpsc::channel(QUEUE);
        let key = self.inner.next.fetch_add(1, Ordering::Relaxed);
        // Routed before the SUBSCRIBE goes out, so nothing after its acknowledgement is missed.
        lock(&self.inner.routes)
            .entry(channel.clone())
            .or_default()
            .push((key, tx));
        let (ack, acked) = oneshot::channel();
        let _ = self.inner.changes.send(Change::Subscribe(channel.clone(), ack));
        let result = match acked.await {
            Ok(r) => r,
            Err(_) => Err(crate::ordered::queue_closed()),
        };
        let weak = Arc::downgrade(&self.inner);
        let unsubscribe = move || {
            if let Some(inner) = weak.upgrade() {
                remove_route(&inner, &channel, key);
            }
        };
        match result {
            Ok(()) => Ok((rx, unsubscribe)),
            Err(e) => {
                unsubscribe();
                Err(e)
            }
        }
    }
}

fn remove_route(inner: &Inner, channel: &[u8], key: u64) {
    let mut routes = lock(&inner.routes);
    if let Some(route) = routes.get_mut(channel) {
        route.retain(|(k, _)| *k != key);
        if route.is_empty() {
            routes.remove(channel);
            let _ = inner.changes.send(Change::Unsubscribe(channel.to_vec()));
        }
    }
}

fn bytes_of(v: &Value) -> Option<&[u8]> {
    match v {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.as_bytes()),
        _ => None,
    }
}

/// Route messages; on a disconnection end every subscription and distrust every cache.
async fn read_pushes(inner: Weak<Inner>, mut pushes: mpsc::UnboundedReceiver<PushInfo>) {
    while let Some(push) = pushes.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        match push.kind {
            PushKind::Message => {
                let n = push.data.len();
                let (Some(channel), Some(payload)) = (
                    push.data.get(n.wrapping_sub(2)).and_then(bytes_of),
                    push.data.get(n.wrapping_sub(1)).and_then(bytes_of),
                ) else {
                    continue;
                };
                if channel == inner.control.as_slice() {
                    for hook in lock(&inner.hooks).iter() {
                        hook(payload);
                    }
                    continue;
                }
                let mut routes = lock(&inner.routes);
                if let Some(route) = routes.get_mut(channel) {
                    let payload = Bytes::copy_from_slice(payload);
                    route.retain(|(_, tx)| match tx.try_send(payload.clone()) {
                        Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => true,
                        Err(mpsc::error::TrySendError::Closed(_)) => false,
                    });
                }
            }
            PushKind::Disconnection => {
                inner.listening.store(false, Ordering::Release);
                inner.generation.fetch_add(1, Ordering::AcqRel);
                tracing::warn!("the Redis subscriber connection dropped; reconnecting");
            }
            _ => {}
        }
    }
}

/// SUBSCRIBE/UNSUBSCRIBE in the order asked (an unsubscribe of a channel someone subscribed
/// again meanwhile is skipped), and the watchdog that listens again after a disconnection.
async fn apply_changes(inner: Weak<Inner>, mut changes: mpsc::UnboundedReceiver<Change>) {
    let mut tick = tokio::time::interval(WATCHDOG);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let change = tokio::select! {
            c = changes.recv() => match c { Some(c) => Some(c), None => return },
            _ = tick.tick() => None,
        };
        let Some(inner) = inner.upgrade() else { return };
        let mut conn = inner.conn.clone();
        match change {
            Some(Change::Subscribe(channel, ack)) => {
                let _ = ack.send(conn.subscribe(&channel).await);
            }
            Some(Change::Unsubscribe(channel)) => unsubscribe_if_unused(&inner, &channel).await,
            None => listen_again(&inner).await,
        }
    }
}

/// UNSUBSCRIBE `channel` unless someone subscribed to it again meanwhile.
async fn unsubscribe_if_unused(inner: &Inner, channel: &[u8]) {
    if lock(&inner.routes).contains_key(channel) {
        return;
    }
    let mut conn = inner.conn.clone();
    let _ = conn.unsubscribe(channel).await;
}

/// While the connection is down, try to subscribe the control channel and every channel with
/// subscribers again (which makes the connection manager reconnect).
async fn listen_again(inner: &Inner) {
    if inner.listening.load(Ordering::Acquire) {
        return;
    }
    let mut channels: Vec<Vec<u8>> = lock(&inner.routes).keys().cloned().collect();
    channels.push(inner.control.clone());
    let mut conn = inner.conn.clone();
    if conn.subscribe(&channels).await.is_ok() {
        inner.generation.fetch_add(1, Ordering::AcqRel);
        inner.listening.store(true, Ordering::Release);
        tracing::info!("the Redis subscriber connection is back");
    }
}
