//! The server's handler table: one `match` on the method name, params decoded straight into
//! the method's typed params (stage 2 of parsing).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use mcpkit_types::schema::{
    CallToolParams, CompleteParams, CompleteResult, Completion, CompletionReference, EmptyResult, GetPromptParams,
    InitializeParams, InitializeResult, PaginatedParams, ReadResourceParams, SetLevelParams, SubscribeParams,
    UnsubscribeParams,
};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};
use serde_json::json;
use serde_json::value::RawValue;

use super::completion::CompletionInput;
use super::context::RequestContext;
use super::prompt::PromptRequest;
use super::request_state;
use super::resource::ResourceRequest;
use super::session::Session;
use super::stateless::{self, InputState, Settled};
use super::tool::ToolCall;
use super::{page_of, Server, Snapshot};
use crate::engine::{BoxFuture, HandlerResult, IncomingRequest, Peer, Role};
use crate::wire::{params, to_raw};

pub(crate) struct ServerService {
    pub(crate) server: Server,
    pub(crate) session: Arc<Session>,
}

fn empty() -> HandlerResult {
    to_raw(&EmptyResult::default())
}

fn page(pages: &[Box<RawValue>], cursor: Option<&str>) -> HandlerResult {
    let index = match cursor {
        None => 0,
        Some(c) => page_of(c)
            .filter(|i| *i < pages.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("Invalid cursor: {c:?}")))?,
    };
    pages
        .get(index)
        .cloned()
        .ok_or_else(|| ErrorObject::internal("list page missing"))
}

/// Methods that may run before `initialize` completes.
fn allowed_before_init(method: &str) -> bool {
    matches!(method, "initialize" | "ping")
}

impl Role for ServerService {
    fn handle_request(&self, peer: Peer, req: IncomingRequest) -> BoxFuture<HandlerResult> {
        let server = self.server.clone();
        let session = self.session.clone();
        // A dual-era server picks the era per request: a handshake-era session stays one; any
        // other request that carries the 2026-07-28 `_meta` fields is served statelessly.
        if !session.is_negotiated() {
            let meta = match stateless::read_meta(req.params.as_deref()) {
                Ok(m) => m,
                Err(e) if session.modern_only => return Box::pin(std::future::ready(Err(e))),
                Err(_) => None,
            };
            let modern = session.modern_only || meta.as_ref().is_some_and(|m| m.protocol_version.is_some());
            if modern {
                return Box::pin(serve_modern(server, peer, req, meta));
            }
        }
        if req.method == "initialize" {
            // Negotiate now, in arrival order, so a request sent right behind `initialize`
            // already sees the session as initialized.
            let result = initialize(&server, &session, req.params.as_deref());
            return Box::pin(std::future::ready(result));
        }
        Box::pin(async move {
            if !session.is_negotiated() && !allowed_before_init(&req.method) {
                return Err(ErrorObject::invalid_request(format!(
                    "Received {} before initialize: the session must be initialized first",
                    req.method
                )));
            }
            let snap = server.snapshot();
            let raw = req.params.as_deref();
            match req.method.as_str() {
                "initialize" => initialize(&server, &session, raw),
                "ping" => empty(),
                "tools/list" => {
                    require(server.offers_tools(&snap), &req.method)?;
                    let p: PaginatedParams = params(raw)?;
                    page(&snap.tool_pages, p.cursor.as_deref())
                }
                "tools/call" => call_tool(&server, &session, &snap, peer, req, false).await,
                "resources/list" => {
                    require(snap.offers_resources(), &req.method)?;
                    let p: PaginatedParams = params(raw)?;
                    page(&snap.resource_pages, p.cursor.as_deref())
                }
                "resources/templates/list" => {
                    require(snap.offers_resources(), &req.method)?;
                    let p: PaginatedParams = params(raw)?;
                    page(&snap.template_pages, p.cursor.as_deref())
                }
                "resources/read" => read_resource(&server, &session, &snap, peer, req, false).await,
                "resources/subscribe" => {
                    require(snap.offers_resources(), &req.method)?;
                    let p: SubscribeParams = params(raw)?;
                    session
                        .subscriptions
                        .lock()
                        .map_err(|_| ErrorObject::internal("lock"))?
                        .insert(p.uri);
                    empty()
                }
                "resources/unsubscribe" => {
                    require(snap.offers_resources(), &req.method)?;
                    let p: UnsubscribeParams = params(raw)?;
                    session
                        .subscriptions
                        .lock()
                        .map_err(|_| ErrorObject::internal("lock"))?
                        .remove(&p.uri);
                    empty()
                }
                "prompts/list" => {
                    require(snap.offers_prompts(), &req.method)?;
                    let p: PaginatedParams = params(raw)?;
                    page(&snap.prompt_pages, p.cursor.as_deref())
                }
                "prompts/get" => get_prompt(&server, &session, &snap, peer, req, false).await,
                "completion/complete" => complete(&snap, raw),
                "logging/setLevel" => {
                    let p: SetLevelParams = params(raw)?;
                    session.set_log_level(p.level);
                    empty()
                }
                other => Err(ErrorObject::method_not_found(other)),
            }
        })
    }

    fn handle_notification(&self, peer: Peer, method: String, _params: Option<Box<RawValue>>) -> BoxFuture<()> {
        let server = self.server.clone();
        let session = self.session.clone();
        Box::pin(async move {
            match method.as_str() {
                "notifications/initialized" => session.initialized.store(true, Ordering::Relaxed),
                "notifications/roots/list_changed" => {
                    if let Some(f) = server.inner.on_roots_changed.clone() {
                        let cx = context(
                            &server,
                            &session,
                            peer,
                            None,
                            Default::default(),
                            None,
                            "notifications/roots/list_changed",
                            None,
                            Default::default(),
                        );
                        f(cx);
                    }
                }
                other => tracing::debug!("ignoring notification {other}"),
            }
        })
    }
}

fn require(offered: bool, method: &str) -> Result<(), ErrorObject> {
    if offered {
        Ok(())
    } else {
        Err(ErrorObject::method_not_found(method))
    }
}

#[allow(clippy::too_many_arguments)]
fn context(
    server: &Server,
    session: &Arc<Session>,
    peer: Peer,
    id: Option<mcpkit_types::RequestId>,
    cancel: tokio_util::sync::CancellationToken,
    meta: Option<mcpkit_types::schema::RequestMeta>,
    method: &'static str,
    input: Option<Arc<InputState>>,
    extensions: crate::transport::Extensions,
) -> RequestContext {
    RequestContext {
        peer,
        session: session.clone(),
        server: server.clone(),
        id: id.unwrap_or(mcpkit_types::RequestId::Number(-1)),
        meta,
        cancel,
        method,
        input,
        extensions,
    }
}

/// Serve one stateless-era request (spec: 2026-07-28): its `_meta` is its whole session.
async fn serve_modern(
    server: Server,
    peer: Peer,
    req: IncomingRequest,
    meta: Option<mcpkit_types::schema::ProtocolMeta>,
) -> HandlerResult {
    let m = stateless::validate(meta)?;
    let session = Arc::new(Session::per_request(
        m.version,
        m.capabilities,
        m.client_info,
        m.log_level,
    ));
    let snap = server.snapshot();
    let raw = req.params.as_deref();
    let info = &server.inner.info_json;
    let lists = Some(server.inner.cache.lists);
    let listed = |pages: &[Box<RawValue>], offered: bool| -> HandlerResult {
        require(offered, &req.method)?;
        let p: PaginatedParams = params(raw)?;
        stateless::finish(&page(pages, p.cursor.as_deref())?, info, lists)
    };
    match req.method.as_str() {
        "server/discover" => stateless::discover(&server),
        "tools/list" => listed(&snap.tool_pages, server.offers_tools(&snap)),
        "resources/list" => listed(&snap.resource_pages, snap.offers_resources()),
        "resources/templates/list" => listed(&snap.template_pages, snap.offers_resources()),
        "prompts/list" => listed(&snap.prompt_pages, snap.offers_prompts()),
        "tools/call" => call_tool(&server, &session, &snap, peer, req, true).await,
        "resources/read" => read_resource(&server, &session, &snap, peer, req, true).await,
        "prompts/get" => get_prompt(&server, &session, &snap, peer, req, true).await,
        "completion/complete" => stateless::finish(&complete(&snap, raw)?, info, None),
        "subscriptions/listen" => stateless::listen(server.clone(), peer, req.id, req.params, req.cancel).await,
        // Removed in 2026-07-28 (`initialize`, `ping`, `logging/setLevel`,
        // `resources/subscribe`, `resources/unsubscribe`) or unknown.
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// The multi round-trip side of one request that may ask for input (`tools/call`,
/// `prompts/get`, `resources/read`): nothing on a handshake-era session.
struct Mrtr<'a> {
    server: &'a Server,
    modern: bool,
    method: &'static str,
    /// Digest of the request's salient params, computed only when a state is opened or sealed.
    digest: &'a (dyn Fn() -> String + Sync),
}

impl Mrtr<'_> {
    /// Open the request's `requestState` and `inputResponses` (stateless era only).
    fn open(
        &self,
        state: Option<&str>,
        responses: Option<mcpkit_types::schema::JsonObject>,
    ) -> Result<Option<Arc<InputState>>, ErrorObject> {
        if !self.modern {
            return Ok(None);
        }
        let keys = &self.server.inner.state_keys;
        InputState::open(keys, self.method, self.digest, state, responses).map(|s| Some(Arc::new(s)))
    }

    /// The reply: `input_required` while inputs are missing, otherwise the outcome, completed
    /// for the stateless wire.
    fn settle(
        &self,
        input: Option<&InputState>,
        outcome: HandlerResult,
        failed: bool,
        cache: Option<stateless::CacheHint>,
    ) -> HandlerResult {
        let settled = match input {
            Some(state) => state.settle(
                outcome,
                failed,
                &self.server.inner.state_keys,
                self.method,
                self.digest,
                &self.server.inner.info_json,
            )?,
            None => Settled::Complete(outcome?),
        };
        match settled {
            Settled::Complete(raw) => finish_if(self.modern, self.server, raw, cache),
            Settled::InputRequired(raw) => Ok(raw),
        }
    }
}

/// Digest of a request's salient params, binding its `requestState` to it.
fn digest_of(parts: &[&str], arguments: Option<&RawValue>) -> String {
    let args: Option<serde_json::Value> = arguments.and_then(|a| serde_json::from_str(a.get()).ok());
    request_state::digest(parts, args.as_ref())
}

/// Spec: `basic/lifecycle` "Version Negotiation": answer with the client's version when we speak
/// it, otherwise with our latest; the client decides whether to go on.
fn initialize(server: &Server, session: &Session, raw: Option<&RawValue>) -> HandlerResult {
    let p: InitializeParams = params(raw)?;
    let version = match p.protocol_version.parse::<ProtocolVersion>() {
        Ok(v) if v.era() == mcpkit_types::Era::Handshake => v,
        _ => ProtocolVersion::LATEST_HANDSHAKE,
    };
    if !session.negotiate(version, p.capabilities, p.client_info) {
        return Err(ErrorObject::invalid_request(
            "initialize was already received on this session",
        ));
    }
    let mut result = InitializeResult::new(version.as_str(), server.capabilities(), server.inner.info.clone());
    if let Some(i) = &server.inner.instructions {
        result = result.with_instructions(i.clone());
    }
    to_raw(&result)
}

async fn call_tool(
    server: &Server,
    session: &Arc<Session>,
    snap: &Snapshot,
    peer: Peer,
    req: IncomingRequest,
    modern: bool,
) -> HandlerResult {
    let p: CallToolParams = params(req.params.as_deref())?;
    // The schema types `arguments` as an object; anything else is malformed params, not a
    // tool-level mistake.
    if p.arguments.as_deref().is_some_and(|a| !a.get().starts_with('{')) {
        return Err(
            ErrorObject::invalid_params("Invalid params: `arguments` must be an object")
                .with_data(json!({ "path": "arguments" })),
        );
    }
    let Some(def) = snap.tool_index.get(&p.name).map(|&i| &snap.catalog.tools[i]) else {
        return Err(ErrorObject::invalid_params(format!("Unknown tool: {}", p.name)));
    };
    if let Some(invalid) = def.check_arguments(p.arguments.as_deref()) {
        let raw = to_raw(&invalid.for_version(session.version()))?;
        return finish_if(modern, server, raw, None);
    }
    // The digest binds a stateless request's state to its params; the handshake era never
    // computes it, so it copies nothing.
    let (name, arguments) = if modern {
        (p.name.clone(), p.arguments.clone())
    } else {
        (String::new(), None)
    };
    let digest = || digest_of(&["tools/call", &name], arguments.as_deref());
    let mrtr = Mrtr {
        server,
        modern,
        method: "tools/call",
        digest: &digest,
    };
    let input = mrtr.open(p.request_state.as_deref(), p.input_responses)?;
    let cx = context(
        server,
        session,
        peer,
        Some(req.id),
        req.cancel,
        p.meta,
        mrtr.method,
        input.clone(),
        req.extensions,
    );
    let call = ToolCall {
        name: p.name.into(),
        arguments: p.arguments,
        cx,
    };
    let outcome = (def.handler)(call).await;
    let failed = outcome.as_ref().map_or(true, |r| r.is_error == Some(true));
    let outcome = outcome.and_then(|r| to_raw(&r.for_version(session.version())));
    mrtr.settle(input.as_deref(), outcome, failed, None)
}

/// On the stateless wire, complete a result (`resultType`, server identity, caching hints);
/// `input_required` results are already complete.
fn finish_if(modern: bool, server: &Server, raw: Box<RawValue>, cache: Option<stateless::CacheHint>) -> HandlerResult {
    if modern {
        stateless::finish(&raw, &server.inner.info_json, cache)
    } else {
        Ok(raw)
    }
}

async fn read_resource(
    server: &Server,
    session: &Arc<Session>,
    snap: &Snapshot,
    peer: Peer,
    req: IncomingRequest,
    modern: bool,
) -> HandlerResult {
    let p: ReadResourceParams = params(req.params.as_deref())?;
    let uri = p.uri.clone();
    let digest = || digest_of(&["resources/read", &uri], None);
    let mrtr = Mrtr {
        server,
        modern,
        method: "resources/read",
        digest: &digest,
    };
    let input = mrtr.open(p.request_state.as_deref(), p.input_responses)?;
    let cx = context(
        server,
        session,
        peer,
        Some(req.id),
        req.cancel,
        p.meta,
        mrtr.method,
        input.clone(),
        req.extensions,
    );
    let read = if let Some(def) = snap
        .resource_index
        .get(&p.uri)
        .map(|&i| snap.catalog.resources[i].clone())
    {
        def.read.clone()
    } else if let Some((t, variables)) = snap
        .catalog
        .templates
        .iter()
        .find_map(|t| t.matcher.matches(&p.uri).map(|v| (t, v)))
    {
        let read = t.read.clone();
        let request = ResourceRequest {
            uri: p.uri,
            variables,
            cx,
        };
        let outcome = read(request).await;
        return settle_read(&mrtr, session, input.as_deref(), outcome);
    } else {
        return Err(resource_not_found(&p.uri, session.version()));
    };
    let request = ResourceRequest {
        uri: p.uri,
        variables: BTreeMap::new(),
        cx,
    };
    let outcome = read(request).await;
    settle_read(&mrtr, session, input.as_deref(), outcome)
}

fn settle_read(
    mrtr: &Mrtr<'_>,
    session: &Session,
    input: Option<&InputState>,
    outcome: Result<mcpkit_types::schema::ReadResourceResult, ErrorObject>,
) -> HandlerResult {
    let failed = outcome.is_err();
    let outcome = outcome.and_then(|r| to_raw(&r.for_version(session.version())));
    mrtr.settle(input, outcome, failed, Some(mrtr.server.inner.cache.reads))
}

/// Spec: `server/resources` "Error Handling" (-32002 up to 2025-11-25, -32602 from 2026-07-28).
pub(crate) fn resource_not_found(uri: &str, version: ProtocolVersion) -> ErrorObject {
    let code = if version >= ProtocolVersion::V2026_07_28 {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND
    };
    ErrorObject::new(code, format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }))
}

async fn get_prompt(
    server: &Server,
    session: &Arc<Session>,
    snap: &Snapshot,
    peer: Peer,
    req: IncomingRequest,
    modern: bool,
) -> HandlerResult {
    let p: GetPromptParams = params(req.params.as_deref())?;
    let Some(def) = snap.prompt_index.get(&p.name).map(|&i| &snap.catalog.prompts[i]) else {
        return Err(ErrorObject::invalid_params(format!("Unknown prompt: {}", p.name)));
    };
    let arguments = p.arguments.unwrap_or_default();
    if let Some(missing) = def.missing_required(&arguments) {
        return Err(ErrorObject::invalid_params(format!(
            "Missing required argument {missing:?} for prompt {}",
            p.name
        )));
    }
    let args_json = serde_json::to_value(&arguments).ok();
    let digest = || request_state::digest(&["prompts/get", &p.name], args_json.as_ref());
    let mrtr = Mrtr {
        server,
        modern,
        method: "prompts/get",
        digest: &digest,
    };
    let input = mrtr.open(p.request_state.as_deref(), p.input_responses)?;
    let cx = context(
        server,
        session,
        peer,
        Some(req.id),
        req.cancel,
        p.meta,
        mrtr.method,
        input.clone(),
        req.extensions,
    );
    let outcome = (def.get)(PromptRequest { arguments, cx }).await;
    let failed = outcome.is_err();
    let outcome = outcome.and_then(|r| to_raw(&r.for_version(session.version())));
    mrtr.settle(input.as_deref(), outcome, failed, None)
}

/// Spec: `server/utilities/completion`: at most 100 values, with `total` and `hasMore`.
fn complete(snap: &Snapshot, raw: Option<&RawValue>) -> HandlerResult {
    let p: CompleteParams = params(raw)?;
    let completer = match &p.reference {
        CompletionReference::Prompt(r) => {
            let Some(&i) = snap.prompt_index.get(&r.name) else {
                return Err(ErrorObject::invalid_params(format!("Unknown prompt: {}", r.name)));
            };
            snap.catalog.prompts[i].completions.get(&p.argument.name).cloned()
        }
        CompletionReference::Resource(r) => {
            let Some(t) = snap.catalog.templates.iter().find(|t| t.template.uri_template == r.uri) else {
                return Err(ErrorObject::invalid_params(format!(
                    "Unknown resource template: {}",
                    r.uri
                )));
            };
            t.completions.get(&p.argument.name).cloned()
        }
    };
    let context = p.context.and_then(|c| c.arguments).unwrap_or_default();
    let mut values = completer
        .map(|c| {
            c.complete(&CompletionInput {
                argument: &p.argument.name,
                value: &p.argument.value,
                context: &context,
            })
        })
        .unwrap_or_default();
    let total = values.len();
    values.truncate(100);
    let completion = Completion {
        has_more: Some(total > values.len()),
        total: Some(total as u64),
        values,
    };
    to_raw(&CompleteResult {
        completion,
        ..Default::default()
    })
}
