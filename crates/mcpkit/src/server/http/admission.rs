//! Who may open a session: the endpoint's session cap and each client's share of it, counted
//! in O(1) (an atomic total beside a map of per-client counts; no session is looked at), for
//! Streamable HTTP and legacy `/sse` sessions alike.

use crate::sync::lock;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::ConnectInfo;
use axum::http::HeaderMap;

use super::accept::UnixPeer;
use super::config::HttpConfig;
use super::forwarded::client_address;
use crate::transport::{Extensions, VerifiedCaller};

/// Who sent a request, as far as the endpoint can tell: the verified caller (authorization
/// on) and the client's address: the peer's (when served with `ConnectInfo`, as
/// [`super::HttpServer::serve`] does), or the one a trusted proxy names
/// ([`HttpConfig::trusted_proxies`]); on a Unix domain socket
/// ([`super::HttpServer::serve_unix`]) the peer's user id instead of an address.
#[derive(Debug, Clone, Default)]
pub(super) struct Client {
    pub(super) caller: Option<VerifiedCaller>,
    /// The peer's address, or the one a trusted proxy named.
    address: Option<IpAddr>,
    /// The peer's user id, on a Unix domain socket.
    uid: Option<u32>,
}

/// What a client's sessions are counted under: its verified identity when there is one, else
/// its address, or on a Unix domain socket its user id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ClientKey {
    Caller(String),
    Peer(IpAddr),
    /// A Unix domain socket peer's user id: the one identity the kernel vouches for there (a
    /// process id would let one user take a share per process it starts).
    Uid(u32),
}

impl Client {
    /// The client of a request: the [`VerifiedCaller`] an authorization layer attached (to the
    /// request or to its [`Extensions`]), and the peer address, or behind a trusted proxy the
    /// address it names in `headers`.
    pub(super) fn of(request: &axum::http::Extensions, headers: &HeaderMap, config: &HttpConfig) -> Client {
        let caller = request.get::<VerifiedCaller>().cloned().or_else(|| {
            request
                .get::<Extensions>()
                .and_then(|e| e.get::<VerifiedCaller>())
                .cloned()
        });
        let address = request.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| {
            client_address(addr.ip(), headers, &config.trusted_proxies, config.forwarded_header)
        });
        let uid = request.get::<UnixPeer>().map(|peer| peer.uid);
        Client { caller, address, uid }
    }

    /// Whether `owner` (the caller a session was opened by) is this request's caller: always
    /// when neither has one (no authorization), never when only one has.
    pub(super) fn owns(&self, owner: Option<&VerifiedCaller>) -> bool {
        self.caller.as_ref() == owner
    }

    /// The verified caller's principal ([`VerifiedCaller::principal`]: a user's clients share
    /// a quota), else the peer address; `None` when nothing identifies the client (no
    /// per-client limit).
    fn key(&self) -> Option<ClientKey> {
        match self.caller.as_ref().and_then(VerifiedCaller::principal) {
            Some(principal) => Some(ClientKey::Caller(principal)),
            None => self
                .address
                .map(ClientKey::Peer)
                .or_else(|| self.uid.map(ClientKey::Uid)),
        }
    }

    /// [`Client::key`] as the string a shared store counts the client's sessions and tasks
    /// under: the caller's principal (which starts with `user` or `client`),
    /// `peer:<ip address>`, or `uid:<user id>`.
    pub(super) fn shared_key(&self) -> Option<String> {
        Some(match self.key()? {
            ClientKey::Caller(binding) => binding,
            ClientKey::Peer(ip) => format!("peer:{ip}"),
            ClientKey::Uid(uid) => format!("uid:{uid}"),
        })
    }
}

/// Why a session was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// The endpoint has [`super::HttpConfig::max_sessions`] sessions.
    Full,
    /// This client has [`super::HttpConfig::max_sessions_per_client`] sessions.
    ClientFull,
}

impl Refused {
    /// The message of the 503 that answers it.
    pub(super) fn message(self) -> &'static str {
        match self {
            Refused::Full => "Too many sessions",
            Refused::ClientFull => "Too many sessions for this client",
        }
    }
}

/// The session counts of one endpoint (shared by its Streamable HTTP and legacy routes).
#[derive(Debug)]
pub(super) struct Admission {
    max_sessions: usize,
    max_per_client: usize,
    total: AtomicUsize,
    per_client: Mutex<HashMap<ClientKey, usize>>,
}

/// One admitted session's place in the counts, given back when dropped.
#[derive(Debug)]
pub(super) struct Permit {
    admission: Arc<Admission>,
    key: Option<ClientKey>,
}

impl Admission {
    pub(super) fn new(max_sessions: usize, max_per_client: usize) -> Arc<Admission> {
        Arc::new(Admission {
            max_sessions,
            max_per_client,
            total: AtomicUsize::new(0),
            per_client: Mutex::new(HashMap::new()),
        })
    }

    /// A place for one more session of `client`, unless the endpoint or that client is at its
    /// cap. Constant time: two counters, no scan.
    pub(super) fn admit(self: &Arc<Self>, client: &Client) -> Result<Permit, Refused> {
        let key = client.key();
        if let Some(k) = &key {
            let mut counts = lock(&self.per_client);
            let count = counts.entry(k.clone()).or_insert(0);
            if *count >= self.max_per_client {
                if *count == 0 {
                    counts.remove(k);
                }
                return Err(Refused::ClientFull);
            }
            *count += 1;
        }
        let taken = self
            .total
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max_sessions).then_some(n + 1)
            })
            .is_ok();
        if !taken {
            // The client's count goes back; the total was never taken.
            self.release_client(key.as_ref());
            return Err(Refused::Full);
        }
        Ok(Permit {
            admission: self.clone(),
            key,
        })
    }

    fn release_client(&self, key: Option<&ClientKey>) {
        if let Some(k) = key {
            let mut counts = lock(&self.per_client);
            if let Some(n) = counts.get_mut(k) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    counts.remove(k);
                }
            }
        }
    }

    /// Sessions counted now (tests).
    #[cfg(test)]
    pub(super) fn count(&self) -> usize {
        self.total.load(Ordering::Acquire)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.admission.release_client(self.key.as_ref());
        self.admission.total.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(ip: [u8; 4]) -> Client {
        Client {
            caller: None,
            address: Some(IpAddr::from(ip)),
            uid: None,
        }
    }

    fn user(sub: &str) -> Client {
        Client {
            caller: Some(VerifiedCaller::new(None, Some(sub.to_owned()), Some("app".to_owned()))),
            address: Some(IpAddr::from([127, 0, 0, 1])),
            uid: None,
        }
    }

    #[test]
    fn counts_per_client_and_in_total() {
        let a = Admission::new(3, 2);
        let first = a.admit(&peer([10, 0, 0, 1])).unwrap();
        let _second = a.admit(&peer([10, 0, 0, 1])).unwrap();
        assert_eq!(a.admit(&peer([10, 0, 0, 1])).err(), Some(Refused::ClientFull));
        let _other = a.admit(&peer([10, 0, 0, 2])).unwrap();
        assert_eq!(a.admit(&peer([10, 0, 0, 3])).err(), Some(Refused::Full));
        assert_eq!(a.count(), 3);
        drop(first);
        assert_eq!(a.count(), 2);
        let _again = a.admit(&peer([10, 0, 0, 1])).unwrap();
        // A refusal at the total cap gave the client's count back.
        assert_eq!(a.admit(&peer([10, 0, 0, 3])).err(), Some(Refused::Full));
        assert!(!lock(&a.per_client).contains_key(&ClientKey::Peer(IpAddr::from([10, 0, 0, 3]))));
    }

    #[test]
    fn shared_keys_name_the_user_or_the_address() {
        assert_eq!(peer([10, 0, 0, 1]).shared_key().as_deref(), Some("peer:10.0.0.1"));
        let alice = user("alice").shared_key();
        assert!(alice.as_deref().is_some_and(|k| !k.starts_with("peer:")), "{alice:?}");
        assert_ne!(alice, user("bob").shared_key());
        assert_eq!(Client::default().shared_key(), None);
        let local = Client {
            uid: Some(1000),
            ..Client::default()
        };
        assert_eq!(local.shared_key().as_deref(), Some("uid:1000"));
    }

    #[test]
    fn users_behind_one_address_are_counted_apart() {
        let a = Admission::new(10, 1);
        let _alice = a.admit(&user("alice")).unwrap();
        assert_eq!(a.admit(&user("alice")).err(), Some(Refused::ClientFull));
        let _bob = a.admit(&user("bob")).unwrap();
        // Unidentified (no caller, no address): only the total applies.
        let _x = a.admit(&Client::default()).unwrap();
        let _y = a.admit(&Client::default()).unwrap();
    }
}
