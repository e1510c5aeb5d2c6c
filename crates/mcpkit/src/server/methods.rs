//! The server's method tables: one per era, built once with the server, each entry registered
//! by its method descriptor (`router.request::<CallTool>(…)`) and decoding its own params
//! straight into the descriptor's params type (stage 2 of parsing). A method a table does not
//! hold is answered in one place ([`Methods::handle`]). Extensions register into these tables;
//! telemetry wraps their entries ([`Methods::wrap`]).

use std::collections::HashMap;
use std::future::{ready, Future};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use mcpkit_types::method::{Method, NotificationMethod};
use mcpkit_types::{Era, ErrorObject};
use serde_json::value::RawValue;

use super::call::Call;
use super::client_state::{ClientState, QuotaKey};
use super::extension::ExtensionSet;
use super::stack::Stack;
use super::stateless;
use super::{core_methods, handshake, Server};
use crate::engine::{BoxFuture, HandlerResult, IncomingRequest, Peer, Role};

/// One table entry for a request: decodes the params, runs the handler, returns the serialized
/// result. The future it returns is the only allocation per request, as the engine polls it
/// once inline before it spawns anything.
pub(crate) type RequestEntry = Box<dyn Fn(Call) -> BoxFuture<HandlerResult> + Send + Sync>;
/// One table entry for a notification.
pub(crate) type NotificationEntry = Box<dyn Fn(Call) -> BoxFuture<()> + Send + Sync>;

/// FNV-1a over the method name. A table is fixed when the server is built, so client input can
/// only look names up, never add colliding ones: SipHash's flood protection buys nothing here,
/// and this is several times faster on names this short.
struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

type Table<E> = HashMap<&'static str, E, BuildHasherDefault<NameHasher>>;

/// One era's method table.
#[derive(Default)]
pub(crate) struct Methods {
    requests: Table<RequestEntry>,
    notifications: Table<NotificationEntry>,
}

impl Methods {
    /// Serve request `M` with `handler`, once the era admits it (a handshake-era session must
    /// be initialized first), with its params decoded into `M::Params`.
    pub(crate) fn request<M, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Call, M::Params) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        self.request_if::<M, F, Fut>(|_| true, handler)
    }

    /// [`Methods::request`] for a method of a capability: while `offered` says the server does
    /// not declare it, the method is not found (before its params are read).
    pub(crate) fn request_if<M, F, Fut>(&mut self, offered: fn(&Call) -> bool, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Call, M::Params) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        let entry = move |mut call: Call| -> BoxFuture<HandlerResult> {
            // Handlers are fn items or small closures: cloning one copies nothing.
            let handler = handler.clone();
            Box::pin(async move {
                handshake::admit(&call.session, M::NAME)?;
                if !offered(&call) {
                    return Err(ErrorObject::method_not_found(M::NAME));
                }
                let p = call.decode::<M::Params>()?;
                handler(call, p).await
            })
        };
        self.add(M::NAME, Box::new(entry))
    }

    /// Serve request `M` at once, in arrival order, before the next message is read (what
    /// `initialize` needs so that a request sent right behind it sees the session initialized).
    pub(crate) fn request_now<M, F>(&mut self, handler: F) -> &mut Self
    where
        M: Method,
        F: Fn(Call, M::Params) -> HandlerResult + Send + Sync + 'static,
    {
        let entry = move |mut call: Call| -> BoxFuture<HandlerResult> {
            let result = handshake::admit(&call.session, M::NAME)
                .and_then(|()| call.decode::<M::Params>())
                .and_then(|p| handler(call, p));
            Box::pin(ready(result))
        };
        self.add(M::NAME, Box::new(entry))
    }

    /// Handle notification `N` with `handler`. Notifications keep their arrival order; one
    /// whose params do not decode is dropped (it cannot be answered).
    pub(crate) fn notification<N, F, Fut>(&mut self, handler: F) -> &mut Self
    where
        N: NotificationMethod,
        F: Fn(Call, N::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let entry = move |mut call: Call| -> BoxFuture<()> {
            match call.decode::<N::Params>() {
                Ok(p) => Box::pin(handler(call, p)),
                Err(e) => {
                    tracing::debug!("ignoring notification {} with bad params: {}", N::NAME, e.message);
                    Box::pin(ready(()))
                }
            }
        };
        self.notifications.insert(N::NAME, Box::new(entry));
        self
    }

    /// Register a request entry under `name`, replacing any earlier one.
    pub(crate) fn add(&mut self, name: &'static str, entry: RequestEntry) -> &mut Self {
        self.requests.insert(name, entry);
        self
    }

    /// Wrap every request entry (telemetry, extensions that decorate results): `layer` gets
    /// each method name and its entry and returns the entry to use instead.
    pub(crate) fn wrap(&mut self, layer: impl Fn(&'static str, RequestEntry) -> RequestEntry) -> &mut Self {
        self.requests = std::mem::take(&mut self.requests)
            .into_iter()
            .map(|(name, entry)| (name, layer(name, entry)))
            .collect();
        self
    }

    /// Wrap the entry of `name` alone, if the table holds it.
    pub(crate) fn wrap_one(&mut self, name: &str, layer: impl FnOnce(RequestEntry) -> RequestEntry) -> &mut Self {
        if let Some((name, entry)) = self.requests.remove_entry(name) {
            self.requests.insert(name, layer(entry));
        }
        self
    }

    /// Answer one request. A method this table does not hold is not found (after the era's
    /// admission check, so an uninitialized session hears that first).
    pub(crate) fn handle(&self, call: Call) -> BoxFuture<HandlerResult> {
        match self.requests.get(call.method.as_str()) {
            Some(entry) => entry(call),
            None => Box::pin(async move {
                handshake::admit(&call.session, &call.method)?;
                Err(ErrorObject::method_not_found(&call.method))
            }),
        }
    }

    /// Handle one notification; one this table does not hold is ignored.
    pub(crate) fn notify(&self, call: Call) -> BoxFuture<()> {
        match self.notifications.get(call.method.as_str()) {
            Some(entry) => entry(call),
            None => {
                tracing::debug!("ignoring notification {}", call.method);
                Box::pin(ready(()))
            }
        }
    }
}

/// The two tables of a server, built once when the server is built.
pub(crate) struct EraMethods {
    handshake: Methods,
    stateless: Methods,
}

impl EraMethods {
    /// The tables of a server: the catalogue in both eras, the handshake's own methods in one,
    /// `server/discover` and `subscriptions/listen` in the other; then what each extension
    /// registers (after the core entries, so that it can wrap them); then the middleware around
    /// all of them.
    pub(crate) fn build(extensions: &ExtensionSet, middleware: &Stack) -> EraMethods {
        let mut handshake = core_methods::handshake();
        let mut stateless = core_methods::stateless();
        extensions.register(Era::Handshake, &mut handshake);
        extensions.register(Era::Stateless, &mut stateless);
        middleware.wrap(&mut handshake);
        middleware.wrap(&mut stateless);
        EraMethods { handshake, stateless }
    }

    /// The table of `era`.
    pub(crate) fn of(&self, era: Era) -> &Methods {
        match era {
            Era::Handshake => &self.handshake,
            Era::Stateless => &self.stateless,
        }
    }
}

/// The role the engine runs for one server connection: picks the era of each message and
/// hands it to that era's table.
pub(crate) struct ServerService {
    pub(crate) server: Server,
    pub(crate) session: Arc<ClientState>,
}

impl ServerService {
    /// The era notifications on this connection belong to.
    fn era(&self) -> Era {
        if self.session.stateless_only {
            Era::Stateless
        } else {
            Era::Handshake
        }
    }
}

impl ServerService {
    /// Serve a stateless-era request whose `_meta` was already read and validated (`meta`; the
    /// HTTP path reads it in the same pass as the headers it mirrors): its `_meta` is its whole
    /// session.
    pub(crate) fn handle_stateless(
        &self,
        peer: Peer,
        req: IncomingRequest,
        meta: Result<stateless::StatelessMeta, ErrorObject>,
    ) -> BoxFuture<HandlerResult> {
        let m = match meta {
            Ok(m) => m,
            Err(e) => return Box::pin(ready(Err(e))),
        };
        let session = Arc::new(ClientState::for_request(m.version, m.client, m.log_level));
        // Each stateless request has a session of its own: a layer counting per client counts
        // the connection's (stdio) unless the transport named the client (HTTP).
        let mut req = req;
        if self.server.names_every_client() && req.extensions.get::<QuotaKey>().is_none() {
            req.extensions
                .insert(QuotaKey(format!("session:{}", self.session.scope())));
        }
        let call = Call::request(self.server.clone(), session, peer, req, Era::Stateless);
        self.server.inner.methods.stateless.handle(call)
    }
}

impl Role for ServerService {
    fn handle_request(&self, peer: Peer, req: IncomingRequest) -> BoxFuture<HandlerResult> {
        let methods = &self.server.inner.methods;
        // A dual-era server picks the era per request: a handshake-era session stays one; any
        // other request that carries the 2026-07-28 `_meta` fields is served statelessly, its
        // `_meta` being its whole session (spec: 2026-07-28 `basic/index` "_meta").
        if !self.session.is_negotiated() {
            let meta = match stateless::read_meta(req.params.as_deref()) {
                Ok(m) => m,
                Err(e) if self.session.stateless_only => return Box::pin(ready(Err(e))),
                Err(_) => None,
            };
            if self.session.stateless_only || meta.as_ref().is_some_and(|m| m.protocol_version().is_some()) {
                let meta = stateless::validate(meta);
                return self.handle_stateless(peer, req, meta);
            }
        }
        let call = Call::request(self.server.clone(), self.session.clone(), peer, req, Era::Handshake);
        methods.handshake.handle(call)
    }

    fn handle_notification(&self, peer: Peer, method: String, params: Option<Box<RawValue>>) -> BoxFuture<()> {
        let era = self.era();
        let call = Call::notification(self.server.clone(), self.session.clone(), peer, method, params, era);
        self.server.inner.methods.of(era).notify(call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpkit_types::method::{CallTool, ListTools, Ping};
    use mcpkit_types::schema::PaginatedParams;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_table_holds_its_entries_by_descriptor_name_and_wrap_sees_each() {
        let mut router = Methods::default();
        router
            .request::<Ping, _, _>(|_, _| async { crate::wire::to_raw(&serde_json::json!({})) })
            .request_if::<ListTools, _, _>(Call::offers_tools, |_, _: PaginatedParams| async {
                crate::wire::to_raw(&serde_json::json!({ "tools": [] }))
            });
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        router.wrap(move |name, entry| {
            assert!(name == Ping::NAME || name == ListTools::NAME, "{name}");
            counter.fetch_add(1, Ordering::Relaxed);
            entry
        });
        assert_eq!(seen.load(Ordering::Relaxed), 2);
        assert!(router.requests.contains_key(Ping::NAME));
        assert!(!router.requests.contains_key(CallTool::NAME));
    }

    #[test]
    fn the_name_hash_tells_the_catalogue_apart() {
        use std::hash::BuildHasher;
        let names = mcpkit_types::method::ALL_CLIENT_REQUESTS;
        let hash = |n: &str| BuildHasherDefault::<NameHasher>::default().hash_one(n);
        let mut hashes: Vec<u64> = names.iter().map(|n| hash(n)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), names.len());
    }
}
