//! [`MemoryBus`]: publish/subscribe between the servers of one process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::server::backend::{ready, Address, BackendFuture, Bus, Subscription};
use crate::sync::lock;

/// Messages a subscription holds before it loses newer ones.
const QUEUE: usize = 1024;

type Subscribers = HashMap<Address, Vec<(u64, mpsc::Sender<Bytes>)>>;

/// A bus inside one process: each subscription is a bounded queue; a full one loses the
/// message (as a slow Redis pub/sub client would).
#[derive(Debug, Default)]
pub struct MemoryBus {
    inner: Arc<Mutex<(u64, Subscribers)>>,
}

impl Bus for MemoryBus {
    fn publish(&self, to: &Address, message: Bytes) -> BackendFuture<()> {
        let mut inner = lock(&self.inner);
        if let Some(subs) = inner.1.get_mut(to) {
            subs.retain(|(_, tx)| match tx.try_send(message.clone()) {
                Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => true,
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            });
            if subs.is_empty() {
                inner.1.remove(to);
            }
        }
        ready(Ok(()))
    }

    fn subscribe(&self, to: &Address) -> BackendFuture<Subscription> {
        let (tx, rx) = mpsc::channel(QUEUE);
        let mut inner = lock(&self.inner);
        inner.0 += 1;
        let key = inner.0;
        inner.1.entry(to.clone()).or_default().push((key, tx));
        let weak = Arc::downgrade(&self.inner);
        let address = to.clone();
        let unsubscribe = move || {
            if let Some(inner) = weak.upgrade() {
                let mut inner = lock(&inner);
                if let Some(subs) = inner.1.get_mut(&address) {
                    subs.retain(|(k, _)| *k != key);
                    if subs.is_empty() {
                        inner.1.remove(&address);
                    }
                }
            }
        };
        ready(Ok(Subscription::new(rx, unsubscribe)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_reach_the_subscribers_of_their_address_only() {
        let bus = MemoryBus::default();
        let s = Address::Session("abc".into());
        let mut a = bus.subscribe(&s).await.unwrap();
        let mut b = bus.subscribe(&s).await.unwrap();
        let mut all = bus.subscribe(&Address::All).await.unwrap();
        bus.publish(&s, Bytes::from_static(b"1")).await.unwrap();
        bus.publish(&Address::Instance("i".into()), Bytes::from_static(b"x"))
            .await
            .unwrap();
        bus.publish(&Address::All, Bytes::from_static(b"2")).await.unwrap();
        assert_eq!(a.recv().await.as_deref(), Some(&b"1"[..]));
        assert_eq!(b.recv().await.as_deref(), Some(&b"1"[..]));
        assert_eq!(all.recv().await.as_deref(), Some(&b"2"[..]));
        drop(b);
        bus.publish(&s, Bytes::from_static(b"3")).await.unwrap();
        assert_eq!(a.recv().await.as_deref(), Some(&b"3"[..]));
        assert_eq!(
            lock(&bus.inner).1.get(&s).map(Vec::len),
            Some(1),
            "the dropped one unsubscribed"
        );
        drop(a);
        assert!(!lock(&bus.inner).1.contains_key(&s));
    }
}
