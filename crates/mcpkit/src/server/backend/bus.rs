//! The bus: messages between the instances of one server (a response to the server→client
//! request an instance awaits, a cancellation for a request it runs, a notification for a
//! session whose GET stream is open elsewhere, a `subscriptions/listen` event).

use std::fmt;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::BackendFuture;

/// Who a message is for. Names are made by the HTTP layer (validated session ids, instance
/// ids), never taken from a client as they are.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Address {
    /// Every instance that serves this session (subscribed to it).
    Session(String),
    /// One instance, by its [`Backends::instance_id`](super::Backends::instance_id).
    Instance(String),
    /// Every instance.
    All,
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Session(s) => write!(f, "session:{s}"),
            Address::Instance(i) => write!(f, "instance:{i}"),
            Address::All => f.write_str("all"),
        }
    }
}

/// Publish/subscribe between instances. The payload is opaque bytes (the HTTP layer's own
/// envelope).
///
/// - Delivery is at most once, to the subscriptions open when the message is published (as
///   Redis pub/sub): nothing is kept for a subscriber that comes later. What must survive goes
///   to a store first.
/// - Messages of one publisher to one address arrive in the order published. The publisher's
///   own subscriptions receive its messages too.
/// - A subscription that falls behind (its queue full) loses messages rather than holding up
///   the publisher.
pub trait Bus: std::fmt::Debug + Send + Sync + 'static {
    /// Send `message` to `to`.
    fn publish(&self, to: &Address, message: Bytes) -> BackendFuture<()>;
    /// Receive what is published to `to` from now on, until the subscription is dropped.
    fn subscribe(&self, to: &Address) -> BackendFuture<Subscription>;
    /// Whether the bus answers (`/readyz`).
    fn ready(&self) -> BackendFuture<()> {
        super::ready(Ok(()))
    }
}

/// The messages of one [`Bus::subscribe`]; dropping it unsubscribes.
pub struct Subscription {
    messages: mpsc::Receiver<Bytes>,
    on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").finish_non_exhaustive()
    }
}

impl Subscription {
    /// A subscription fed through `messages` (an implementation's reader task holds the
    /// sender); `on_drop` runs once when the subscriber drops it (to unsubscribe).
    pub fn new(messages: mpsc::Receiver<Bytes>, on_drop: impl FnOnce() + Send + Sync + 'static) -> Subscription {
        Subscription {
            messages,
            on_drop: Some(Box::new(on_drop)),
        }
    }

    /// The next message; `None` once the bus dropped the subscription (it was closed, or its
    /// connection was lost: subscribe again).
    pub async fn recv(&mut self) -> Option<Bytes> {
        self.messages.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}
