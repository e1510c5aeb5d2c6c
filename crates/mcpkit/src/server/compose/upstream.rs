//! [`Upstream`]: a server reached through a [`Client`], served as part of this one.

use std::collections::HashSet;
use std::panic::Location;
use std::sync::{Arc, Mutex, RwLock, Weak};

use mcpkit_types::schema::{InputRequest, LoggingLevel};
use mcpkit_types::ErrorObject;
use tokio::sync::watch;

use super::super::{Inner, Server, ServerBuilder};
use super::follow::{follow, refresh};
use super::forward::subscribe_upstream;
use super::items::Items;
use super::relay::InFlight;
use crate::client::{Client, ClientBuilder};
use crate::error::{Error, Result};

/// An upstream server, reached through a [`Client`], whose catalogue a [`Server`] serves as
/// its own: tools and prompts as `NAME_<name>`, resources and templates under their URIs.
/// Cheap to clone: clones are handles to one upstream.
///
/// Calls, reads, prompts and completions are forwarded to it. While a downstream request runs
/// through it, its progress reaches the downstream caller, its log messages the downstream
/// session, and its sampling, elicitation and roots requests are asked of the downstream
/// client on that request (a server→client request on a handshake-era session, an input round
/// on the stateless wire: the downstream retry runs the upstream call again, which then finds
/// its answer), provided the client was built with [`Upstream::relay`]. A downstream
/// cancellation cancels the upstream call; an upstream's cancellation of its own request
/// cancels what it asked downstream. The downstream request's span is the parent of the
/// upstream call's, whose trace context travels in `_meta`.
///
/// Its `list_changed` notifications are followed (the catalogue listed again and the
/// downstream sessions told), and `notifications/resources/updated` passed on to the
/// downstream sessions subscribed to the URI.
///
/// When its connection ends, or on [`Upstream::detach`], its items leave the lists (with
/// `list_changed`) and a request that still names one fails at once with a JSON-RPC error
/// naming the upstream; [`Upstream::attach`] with a new client puts them back. The servers
/// that serve it are held weakly.
#[derive(Clone)]
pub struct Upstream {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.shared.name)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

/// What the handles of one upstream share: its connection, its items, the servers serving it.
pub(super) struct Shared {
    pub(super) name: Arc<str>,
    /// The upstream tool names served (`None`: all).
    pub(super) allow_tools: Option<HashSet<String>>,
    /// The scopes every item served requires of the caller.
    pub(super) scopes: Vec<String>,
    /// The client in use, and its attachment number (a stale watcher must not detach a newer
    /// client).
    pub(super) link: RwLock<Option<(u64, Client)>>,
    pub(super) attachments: std::sync::atomic::AtomicU64,
    /// What it serves now, as the servers list it.
    pub(super) items: RwLock<Items>,
    /// The servers serving it.
    pub(super) servers: Mutex<Vec<Weak<Inner>>>,
    /// The downstream requests running through it.
    pub(super) in_flight: InFlight,
    /// Whether a client is attached, for [`Upstream::disconnected`].
    pub(super) connected: watch::Sender<bool>,
    /// The URIs downstream sessions subscribed to, subscribed upstream too (again on each
    /// attach); at most [`MAX_SUBSCRIBED`].
    pub(super) subscribed: Mutex<HashSet<String>>,
    /// Whether a ping after a transport failure is under way.
    pub(super) checking: std::sync::atomic::AtomicBool,
}

/// At most this many resource URIs are subscribed upstream per upstream.
pub(super) const MAX_SUBSCRIBED: usize = 10_000;

impl Upstream {
    /// An upstream named `name`, not connected yet: give it a client with
    /// [`Upstream::attach`]. Its tools and prompts are listed as `NAME_<name>`, so `name`
    /// should be short and of `A-Z a-z 0-9 _ - .` (the spec's tool-name characters).
    pub fn new(name: impl Into<String>) -> Upstream {
        Upstream {
            shared: Arc::new(Shared {
                name: name.into().into(),
                allow_tools: None,
                scopes: Vec::new(),
                link: RwLock::new(None),
                attachments: std::sync::atomic::AtomicU64::new(0),
                items: RwLock::new(Items::default()),
                servers: Mutex::new(Vec::new()),
                in_flight: InFlight::default(),
                connected: watch::channel(false).0,
                subscribed: Mutex::new(HashSet::new()),
                checking: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// Serve only these of the upstream's tools (names as the upstream has them); the others
    /// are not listed and cannot be called. Set before the upstream is shared (a handle
    /// cloned earlier keeps serving every tool).
    pub fn allow_tools<I, S>(self, names: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let allow: HashSet<String> = names.into_iter().map(Into::into).collect();
        let shared = match Arc::try_unwrap(self.shared) {
            Ok(mut shared) => {
                shared.allow_tools = Some(allow);
                shared
            }
            Err(shared) => {
                tracing::warn!("upstream {:?}: allow_tools on a shared handle is ignored", shared.name);
                return Upstream { shared };
            }
        };
        Upstream {
            shared: Arc::new(shared),
        }
    }

    /// Every item the upstream serves requires these scopes of the caller's token (as
    /// [`ToolDef::require_scopes`] does for one item): a caller without them does not see its
    /// items listed, and using one is refused with `insufficient_scope` (HTTP 403 with the
    /// step-up challenge behind the OAuth resource layer). Without authorization (stdio) no
    /// caller has scopes, so none sees them. Set before the upstream is shared, like
    /// [`Upstream::allow_tools`].
    pub fn require_scopes<I, S>(self, scopes: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        match Arc::try_unwrap(self.shared) {
            Ok(mut shared) => {
                shared.scopes = scopes;
                Upstream {
                    shared: Arc::new(shared),
                }
            }
            Err(shared) => {
                tracing::warn!(
                    "upstream {:?}: require_scopes on a shared handle is ignored",
                    shared.name
                );
                Upstream { shared }
            }
        }
    }

    /// Its name: the prefix of its tools and prompts.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// `builder` set up to pass the upstream's sampling, elicitation and roots requests on to
    /// the downstream client (it then declares those capabilities to the upstream). Connect
    /// the client it builds and [`attach`](Upstream::attach) it; a client built without this
    /// serves calls, reads and prompts but answers none of the upstream's requests.
    pub fn relay(&self, builder: ClientBuilder) -> ClientBuilder {
        let (a, b, c) = (
            Arc::downgrade(&self.shared),
            Arc::downgrade(&self.shared),
            Arc::downgrade(&self.shared),
        );
        builder
            .on_sampling(move |params| {
                let shared = a.upgrade();
                async move {
                    match ask(shared, InputRequest::Sample(params)).await? {
                        mcpkit_types::schema::InputResponse::Sample(r) => Ok(r),
                        _ => Err(ErrorObject::internal("the downstream client answered another question")),
                    }
                }
            })
            .on_elicitation(move |params| {
                let shared = b.upgrade();
                async move {
                    match ask(shared, InputRequest::Elicit(params)).await? {
                        mcpkit_types::schema::InputResponse::Elicit(r) => Ok(r),
                        _ => Err(ErrorObject::internal("the downstream client answered another question")),
                    }
                }
            })
            .on_roots(move || {
                let shared = c.upgrade();
                async move {
                    match ask(shared, InputRequest::ListRoots).await? {
                        mcpkit_types::schema::InputResponse::ListRoots(r) => Ok(r),
                        _ => Err(ErrorObject::internal("the downstream client answered another question")),
                    }
                }
            })
    }

    /// Serve the upstream through `client` (replacing the client in use, if any): list its
    /// tools, prompts, resources and templates, put them in the lists of the servers serving
    /// it (`list_changed` to their sessions), and follow its notifications until its
    /// connection ends, when its items leave the lists again. An error when the listing
    /// fails; the upstream is then detached.
    pub async fn attach(&self, client: Client) -> Result<()> {
        let number = self
            .shared
            .attachments
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        let notifications = client.notifications();
        if client.is_stateless() {
            // On the stateless wire the level travels in each request: the upstream sends
            // every message and each downstream session's own level filters what it gets.
            client.set_log_level(LoggingLevel::Debug).await?;
        }
        *crate::sync::write(&self.shared.link) = Some((number, client.clone()));
        if let Err(e) = refresh(&self.shared, &client).await {
            self.detach_if(number);
            return Err(e);
        }
        self.shared.connected.send_replace(true);
        let subscribed: Vec<String> = crate::sync::lock(&self.shared.subscribed).iter().cloned().collect();
        for uri in subscribed {
            subscribe_upstream(&client, &self.shared.name, uri);
        }
        tokio::spawn(follow(Arc::downgrade(&self.shared), number, client, notifications));
        Ok(())
    }

    /// List the upstream's catalogue again and update the servers' lists (what a
    /// `list_changed` from the upstream does by itself).
    pub async fn refresh(&self) -> Result<()> {
        let client = client_of(&self.shared).map_err(Error::Rpc)?;
        refresh(&self.shared, &client).await
    }

    /// Stop serving the upstream: its items leave the lists (`list_changed` to the sessions),
    /// and requests that still name one fail at once naming it. Returns the client it used,
    /// if any (not closed: close it with [`Client::close`]).
    pub fn detach(&self) -> Option<Client> {
        let client = crate::sync::write(&self.shared.link).take().map(|(_, c)| c);
        unpublish(&self.shared);
        client
    }

    /// Detach if attachment `number` is still the one in use.
    fn detach_if(&self, number: u64) {
        detach_if(&self.shared, number);
    }

    /// Whether a client is attached and its connection open (what a `/readyz` reports).
    pub fn is_connected(&self) -> bool {
        crate::sync::read(&self.shared.link)
            .as_ref()
            .is_some_and(|(_, c)| !c.peer().is_closed())
    }

    /// Ping the upstream (`ping`, or `server/discover` on the stateless wire), waiting at most
    /// `timeout`. When it does not answer in time, or answers with an error, it is detached
    /// (see [`Upstream::detach`]) and the error returned: what a supervisor calls now and then
    /// for an upstream whose connection cannot tell it is gone (an HTTP server that went
    /// away between requests).
    pub async fn ping(&self, timeout: std::time::Duration) -> Result<()> {
        let number = crate::sync::read(&self.shared.link).as_ref().map(|(n, _)| *n);
        let client = client_of(&self.shared).map_err(Error::Rpc)?;
        let outcome = match tokio::time::timeout(timeout, client.ping()).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout(timeout)),
        };
        if outcome.is_err() {
            if let Some(number) = number {
                tracing::warn!("upstream {:?}: no answer to ping, detached", self.shared.name);
                self.detach_if(number);
            }
        }
        outcome
    }

    /// How many downstream requests are running through it now.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.len()
    }

    /// Resolves when the upstream is no longer served: its connection ended or it was
    /// detached (at once when it is not attached). A supervisor awaits this, then attaches a
    /// new client.
    pub async fn disconnected(&self) {
        let mut rx = self.shared.connected.subscribe();
        let _ = rx.wait_for(|connected| !connected).await;
    }

    /// The client in use while connected (to read the upstream's `serverInfo`, say).
    pub fn client(&self) -> Option<Client> {
        client_of(&self.shared).ok()
    }

    /// Serve it on `server` (see [`Server::add_upstream`]).
    fn serve_on(&self, server: &Server) {
        let first_time = {
            let mut servers = crate::sync::lock(&self.shared.servers);
            servers.retain(|s| s.strong_count() > 0);
            let known = servers
                .iter()
                .any(|s| std::ptr::eq(s.as_ptr(), Arc::as_ptr(&server.inner)));
            if !known {
                servers.push(Arc::downgrade(&server.inner));
            }
            !known
        };
        if first_time {
            server.add_explainer(explainer(&self.shared, server));
        }
        let items = crate::sync::read(&self.shared.items).clone();
        server.replace_source(&self.shared.name, items);
    }
}

impl ServerBuilder {
    /// Serve `upstream`'s catalogue (see [`Upstream`]): what it lists now is registered here,
    /// so a name or URI another item uses makes [`ServerBuilder::try_build`] fail naming both;
    /// what it lists later (after a `list_changed`, a detach or a new client) replaces it.
    #[track_caller]
    pub fn proxy(mut self, upstream: &Upstream) -> Self {
        let at = Location::caller();
        let items = crate::sync::read(&upstream.shared.items).clone();
        self = items.register(self, at, &format!("upstream {:?}", upstream.shared.name));
        let upstream = upstream.clone();
        self.on_build
            .push(Box::new(move |server: &Server| upstream.serve_on(server)));
        self
    }
}

impl Server {
    /// Serve `upstream` from now on (see [`Upstream`]): its items join the lists, and
    /// sessions get `list_changed`. An item whose name or URI is taken is left out, with a
    /// warning (at build, [`ServerBuilder::proxy`] reports it as an error instead).
    pub fn add_upstream(&self, upstream: &Upstream) {
        upstream.serve_on(self);
    }

    /// Stop serving `upstream` here: its items leave the lists, and sessions get
    /// `list_changed`. Whether it was served here.
    pub fn remove_upstream(&self, upstream: &Upstream) -> bool {
        let was = {
            let mut servers = crate::sync::lock(&upstream.shared.servers);
            let before = servers.len();
            servers.retain(|s| s.strong_count() > 0 && !std::ptr::eq(s.as_ptr(), Arc::as_ptr(&self.inner)));
            before != servers.len()
        };
        self.remove_source(&upstream.shared.name) || was
    }
}

/// What says, on `server`, that a tool or prompt named `NAME_…` is not there because the
/// upstream is not connected (while `server` serves it).
fn explainer(shared: &Arc<Shared>, server: &Server) -> super::super::Explainer {
    let weak = Arc::downgrade(shared);
    let at = Arc::downgrade(&server.inner);
    Arc::new(move |name: &str| {
        let shared = weak.upgrade()?;
        let ours = name.strip_prefix(&*shared.name)?.starts_with('_');
        let served_here = crate::sync::lock(&shared.servers).iter().any(|s| Weak::ptr_eq(s, &at));
        (ours && served_here && client_of(&shared).is_err()).then(|| unavailable(&shared.name))
    })
}

/// The error a request gets when the upstream it names is not connected.
pub(super) fn unavailable(name: &str) -> ErrorObject {
    ErrorObject::internal(format!("upstream {name:?} is not connected"))
        .with_data(serde_json::json!({ "upstream": name }))
}

/// The error a forwarded request gets when the upstream failed to answer (an error the
/// upstream itself answered is passed on as it is). When the client's transport could not
/// reach it, the caller is told it is unreachable (the transport's detail, which may name
/// its address, is only logged) and the upstream is pinged at once, so that a dead one
/// leaves the lists now.
pub(super) fn failed(shared: &Arc<Shared>, e: Error) -> ErrorObject {
    let name = &shared.name;
    if e.is_transport_failure() {
        tracing::warn!("upstream {name:?} is unreachable: {e}");
        check(shared);
        return ErrorObject::internal(format!("upstream {name:?} is unreachable"))
            .with_data(serde_json::json!({ "upstream": &**name }));
    }
    match e {
        Error::Rpc(e) => e,
        e => ErrorObject::internal(format!("upstream {name:?} failed: {e}"))
            .with_data(serde_json::json!({ "upstream": &**name })),
    }
}

/// How long the ping after a transport failure waits for the upstream's answer.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Ping the upstream in the background (one check at a time), detaching it when it does not
/// answer (see [`Upstream::ping`]).
fn check(shared: &Arc<Shared>) {
    if shared.checking.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    let upstream = Upstream { shared: shared.clone() };
    tokio::spawn(async move {
        let _ = upstream.ping(CHECK_TIMEOUT).await;
        upstream
            .shared
            .checking
            .store(false, std::sync::atomic::Ordering::Release);
    });
}

pub(super) fn client_of(shared: &Shared) -> Result<Client, ErrorObject> {
    match crate::sync::read(&shared.link).as_ref() {
        Some((_, c)) if !c.peer().is_closed() => Ok(c.clone()),
        _ => Err(unavailable(&shared.name)),
    }
}

async fn ask(
    shared: Option<Arc<Shared>>,
    request: InputRequest,
) -> Result<mcpkit_types::schema::InputResponse, ErrorObject> {
    let Some(shared) = shared else {
        return Err(ErrorObject::internal("the upstream is no longer served"));
    };
    shared.in_flight.ask(&shared.name, request).await
}

/// The servers serving the upstream now.
pub(super) fn servers(shared: &Shared) -> Vec<Server> {
    crate::sync::lock(&shared.servers)
        .iter()
        .filter_map(Weak::upgrade)
        .map(|inner| Server { inner })
        .collect()
}

pub(super) fn publish(shared: &Shared, items: Items) {
    *crate::sync::write(&shared.items) = items.clone();
    for server in servers(shared) {
        server.replace_source(&shared.name, items.clone());
    }
}

fn unpublish(shared: &Shared) {
    *crate::sync::write(&shared.items) = Items::default();
    for server in servers(shared) {
        server.remove_source(&shared.name);
    }
    shared.connected.send_replace(false);
}

pub(super) fn detach_if(shared: &Shared, number: u64) {
    let mut link = crate::sync::write(&shared.link);
    if link.as_ref().is_some_and(|(n, _)| *n == number) {
        *link = None;
        drop(link);
        unpublish(shared);
    }
}
