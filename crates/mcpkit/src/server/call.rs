//! [`Call`]: one incoming message as a method table receives it, and what middleware and
//! extension methods may read of it (the method, the caller, the params they ask for) and
//! answer with.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use mcpkit_types::method::{CallTool, Method};
use mcpkit_types::schema::{CallToolResult, ProtocolMembersSkipped, RequestMeta};
use mcpkit_types::{Era, ErrorObject, ProtocolVersion, RequestId};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::client_state::{ClientState, QuotaKey};
use super::context::RequestContext;
use super::stateless::{self, CacheHint, InputState};
use super::{Server, Snapshot};
use crate::engine::{HandlerResult, IncomingRequest, Peer};
use crate::transport::{Extensions, VerifiedCaller};
use crate::wire::{member_str, params, to_raw};

/// One incoming message as a method table receives it: the request (or notification), and the
/// server, session and connection serving it. What middleware ([`super::middleware`]) and an
/// extension's methods ([`super::extensions::MethodTable`]) are handed. A notification has no
/// id (`-1`) and no cancellation of its own.
pub struct Call {
    pub(crate) server: Server,
    pub(crate) session: Arc<ClientState>,
    pub(crate) peer: Peer,
    pub(crate) era: Era,
    pub(crate) method: String,
    pub(crate) id: RequestId,
    /// The raw params, until the entry decodes them.
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) cancel: CancellationToken,
    pub(crate) extensions: Extensions,
    /// The catalogue as this request sees it, taken at its first use.
    snapshot: OnceLock<Arc<Snapshot>>,
}

impl Call {
    /// A request served in `era` on `session`.
    pub(crate) fn request(
        server: Server,
        session: Arc<ClientState>,
        peer: Peer,
        req: IncomingRequest,
        era: Era,
    ) -> Call {
        Call {
            server,
            session,
            peer,
            era,
            method: req.method,
            id: req.id,
            params: req.params,
            cancel: req.cancel,
            extensions: req.extensions,
            snapshot: OnceLock::new(),
        }
    }

    /// A notification received in `era` on `session`.
    pub(crate) fn notification(
        server: Server,
        session: Arc<ClientState>,
        peer: Peer,
        method: String,
        params: Option<Box<RawValue>>,
        era: Era,
    ) -> Call {
        Call {
            server,
            session,
            peer,
            era,
            method,
            id: RequestId::Number(-1),
            params,
            cancel: CancellationToken::default(),
            extensions: Extensions::default(),
            snapshot: OnceLock::new(),
        }
    }

    /// The catalogue as this request sees it (the same one however often it is asked).
    pub(crate) fn snapshot(&self) -> &Arc<Snapshot> {
        self.snapshot.get_or_init(|| self.server.snapshot())
    }

    /// Forget the catalogue taken so far: the request sees the server's current one.
    pub(crate) fn renew_snapshot(&mut self) {
        self.snapshot = OnceLock::new();
    }

    /// The catalogue, owned, for a handler that gives the call away.
    pub(crate) fn take_snapshot(&mut self) -> Arc<Snapshot> {
        self.snapshot.take().unwrap_or_else(|| self.server.snapshot())
    }

    /// Whether the tools capability is declared.
    pub(crate) fn offers_tools(&self) -> bool {
        self.server.offers_tools(self.snapshot())
    }

    /// Whether the resources capability is declared.
    pub(crate) fn offers_resources(&self) -> bool {
        self.snapshot().offers_resources()
    }

    /// Whether the prompts capability is declared.
    pub(crate) fn offers_prompts(&self) -> bool {
        self.snapshot().offers_prompts()
    }

    /// Decode the params into the method's type; absent params read as `{}`. A stateless-era
    /// request's `_meta` protocol members are its session (read and validated before dispatch),
    /// so its [`RequestMeta`] keeps only the other members.
    pub(crate) fn decode<P: DeserializeOwned>(&mut self) -> Result<P, ErrorObject> {
        let _skipped = (self.era == Era::Stateless).then(ProtocolMembersSkipped::start);
        params(self.params.take().as_deref())
    }

    /// The handler's context, on this call's session and connection.
    pub(crate) fn into_context(
        self,
        method: &'static str,
        meta: Option<RequestMeta>,
        input: Option<Arc<InputState>>,
    ) -> RequestContext {
        RequestContext {
            peer: self.peer,
            session: self.session,
            server: self.server,
            id: self.id,
            meta,
            cancel: self.cancel,
            method,
            input,
            extensions: self.extensions,
        }
    }

    /// Complete a result for this call's era: on the stateless wire `resultType`, the server's
    /// identity and caching hints; in the handshake era the result as it is.
    pub(crate) fn finish(&self, raw: Box<RawValue>, cache: Option<CacheHint>) -> HandlerResult {
        finish_for(self.era, &self.server, raw, cache)
    }
}

/// What middleware and extension methods read and answer with.
impl Call {
    /// The method, as the client sent it.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Whether this is a request for method `M` (by its descriptor: `call.is::<CallTool>()`).
    pub fn is<M: Method>(&self) -> bool {
        self.method == M::NAME
    }

    /// The era of the table serving it.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol revision in use: negotiated at `initialize`, or this request's own on the
    /// stateless wire.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.session.version()
    }

    /// The request's id (`-1` for a notification).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Who the request's bearer token speaks for, when authorization is on.
    pub fn caller(&self) -> Option<&VerifiedCaller> {
        self.extensions.get::<VerifiedCaller>()
    }

    /// The client as per-client limits count it: its verified caller's principal (`user…` or
    /// `client…`), else, over HTTP, its address through the trusted proxies (`peer:<ip>`), else
    /// this session (stdio: the one client of the connection). Over HTTP the address is named
    /// for every request only on a server with a layer that asks for it
    /// ([`super::middleware::Middleware::counts_clients`]).
    pub fn client(&self) -> String {
        if let Some(QuotaKey(key)) = self.extensions.get::<QuotaKey>() {
            return key.clone();
        }
        if let Some(principal) = self.caller().and_then(VerifiedCaller::principal) {
            return principal;
        }
        format!("session:{}", self.session.scope())
    }

    /// The params decoded as request `M`'s (`None` when this is not a request for `M`): a copy,
    /// read for the asking; the method's handler reads its own.
    pub fn params<M: Method>(&self) -> Option<Result<M::Params, ErrorObject>> {
        if !self.is::<M>() {
            return None;
        }
        let _skipped = (self.era == Era::Stateless).then(ProtocolMembersSkipped::start);
        Some(params(self.params.as_deref()))
    }

    /// What the request targets: the tool of `tools/call`, the prompt of `prompts/get`, the URI
    /// of `resources/read` and `resources/(un)subscribe` (`None` for other methods, or params
    /// without it). Read from the params at each ask, up to the member (borrowed unless it has
    /// escapes): a `Call` carries nothing for it, as most requests meet no layer that asks.
    pub fn target(&self) -> Option<Cow<'_, str>> {
        let raw = self.params.as_deref();
        member_str(raw, "name").or_else(|| member_str(raw, "uri"))
    }

    /// The request's `_meta` (progress token, trace context, vendor keys), read for the asking.
    pub fn meta(&self) -> Option<RequestMeta> {
        #[derive(Deserialize)]
        struct WithMeta {
            #[serde(rename = "_meta")]
            meta: Option<RequestMeta>,
        }
        let _skipped = (self.era == Era::Stateless).then(ProtocolMembersSkipped::start);
        let raw = self.params.as_deref()?;
        serde_json::from_str::<WithMeta>(raw.get()).ok()?.meta
    }

    /// What the transport and outer layers attached (the verified caller, trace headers, and
    /// what middleware puts there for the layers inside it).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// [`Call::extensions`], to attach to.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }

    /// Fires when the client cancels the request (or its connection ends).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The handler sees `token` as its cancellation from here on: a layer that ends a request
    /// early (a timeout) gives the handler a child of [`Call::cancellation`] and fires it, which
    /// tells the handler without cancelling the client's request (whose answer must still go).
    pub fn set_cancellation(&mut self, token: CancellationToken) {
        self.cancel = token;
    }

    /// The server's shared state of type `T` ([`super::ServerBuilder::state`]).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.server.state::<T>()
    }

    /// Answer with `result`, completed for the era (on the stateless wire `resultType` and the
    /// server's identity are added).
    pub fn reply<T: Serialize>(&self, result: &T) -> HandlerResult {
        self.finish(to_raw(result)?, None)
    }

    /// Answer with a list-like `result` (one page of entries), completed for the era with the
    /// caching hints the server gives its list results ([`super::ServerBuilder::list_cache_hint`]).
    pub fn reply_list<T: Serialize>(&self, result: &T) -> HandlerResult {
        self.finish(to_raw(result)?, Some(self.server.inner.cache.lists))
    }

    /// Items per list page ([`super::ServerBuilder::page_size`]).
    pub fn page_size(&self) -> usize {
        self.server.inner.page_size.max(1)
    }

    /// Answer a `tools/call` with a tool error (`isError: true`, `message` as its text): the
    /// model sees it and can adjust, where a JSON-RPC error would end the call. For any other
    /// method it is a JSON-RPC internal error with `message`.
    pub fn tool_error(&self, message: impl Into<String>) -> HandlerResult {
        let message = message.into();
        if !self.is::<CallTool>() {
            return Err(ErrorObject::internal(message));
        }
        self.reply(&CallToolResult::error_text(message).for_version(self.protocol_version()))
    }
}

/// [`Call::finish`] for code that no longer holds the call.
pub(crate) fn finish_for(era: Era, server: &Server, raw: Box<RawValue>, cache: Option<CacheHint>) -> HandlerResult {
    match era {
        Era::Handshake => Ok(raw),
        Era::Stateless => stateless::finish(&raw, &server.inner.info_json, cache),
    }
}
