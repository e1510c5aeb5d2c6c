//! What each era's table serves, and the catalogue methods both eras share: the lists, `tools/call`,
//! `resources/read`, `prompts/get` and `completion/complete`. A catalogue handler serves either
//! era; the [`Call`] it gets says which, and [`Call::finish`] completes its result for it.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcpkit_types::method::{
    CallTool, Complete, Discover, GetPrompt, Initialize, Initialized, ListPrompts, ListResourceTemplates,
    ListResources, ListTools, Method, Ping, ReadResource, RootsListChanged, SetLevel, Subscribe, SubscriptionsListen,
    Unsubscribe,
};
use mcpkit_types::schema::{
    CallToolParams, CompleteParams, CompleteResult, Completion, CompletionReference, DiscoverResult, GetPromptParams,
    JsonObject, PaginatedParams, ReadResourceParams, RequestMeta, RequestParams, SubscriptionsListenParams,
};
use mcpkit_types::{Era, ErrorCode, ErrorObject, ProtocolVersion};
use serde_json::json;
use serde_json::value::RawValue;

use super::access::{self, Item, List};
use super::call::{finish_for, Call};
use super::completion::CompletionInput;
use super::context::RequestContext;
use super::handshake;
use super::listen;
use super::methods::Methods;
use super::page_of;
use super::prompt::PromptRequest;
use super::resource::ResourceRequest;
use super::stateless::{self, request_state, CacheHint, InputState};
use super::switches::Kind;
use super::tool::ToolCall;
use super::{Server, Snapshot};
use crate::engine::HandlerResult;
use crate::transport::VerifiedCaller;
use crate::wire::to_raw;

/// The handshake era's table (2024-11-05 … 2025-11-25).
pub(crate) fn handshake() -> Methods {
    let mut r = Methods::default();
    r.request_now::<Initialize, _>(handshake::initialize)
        .request::<Ping, _, _>(|_, _| async { handshake::empty() })
        .request_if::<Subscribe, _, _>(Call::offers_resources, handshake::subscribe)
        .request_if::<Unsubscribe, _, _>(Call::offers_resources, handshake::unsubscribe)
        .request::<SetLevel, _, _>(handshake::set_level)
        .notification::<Initialized, _, _>(handshake::initialized)
        .notification::<RootsListChanged, _, _>(handshake::roots_changed);
    catalogue(&mut r);
    r
}

/// The stateless era's table (2026-07-28). `initialize`, `ping`, `logging/setLevel` and
/// `resources/(un)subscribe` are gone from this revision, so they are not found.
pub(crate) fn stateless() -> Methods {
    let mut r = Methods::default();
    r.request::<Discover, _, _>(|call: Call, _: RequestParams| async move { discover(&call.server) })
        .request::<SubscriptionsListen, _, _>(listen);
    catalogue(&mut r);
    r
}

/// The methods both eras serve.
fn catalogue(r: &mut Methods) {
    r.request_if::<ListTools, _, _>(Call::offers_tools, |mut call: Call, p| async move {
        call.catch_up_switches().await;
        list(&call, List::Tools, p)
    })
    .request_if::<ListResources, _, _>(Call::offers_resources, |call, p| async move {
        list(&call, List::Resources, p)
    })
    .request_if::<ListResourceTemplates, _, _>(Call::offers_resources, |call, p| async move {
        list(&call, List::Templates, p)
    })
    .request_if::<ListPrompts, _, _>(Call::offers_prompts, |mut call: Call, p| async move {
        call.catch_up_switches().await;
        list(&call, List::Prompts, p)
    })
    .request::<CallTool, _, _>(call_tool)
    .request::<ReadResource, _, _>(read_resource)
    .request::<GetPrompt, _, _>(get_prompt)
    .request::<Complete, _, _>(|call, p| async move {
        let raw = match forwarded(call.snapshot(), &p) {
            Some(forward) => to_raw(&forward(p).await?)?,
            None => complete(call.snapshot(), p)?,
        };
        call.finish(raw, None)
    });
}

/// One page of a pre-serialized list, or, on a server whose items are not all open to every
/// request, of the items this request may use.
fn list(call: &Call, list: List, p: PaginatedParams) -> HandlerResult {
    if call.filters_items() {
        return access::visible_page(call, list, p.cursor.as_deref());
    }
    let pages = list.pages(call.snapshot());
    let index = match p.cursor.as_deref() {
        None => 0,
        Some(c) => page_of(c)
            .filter(|i| *i < pages.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("Invalid cursor: {c:?}")))?,
    };
    let page = pages
        .get(index)
        .cloned()
        .ok_or_else(|| ErrorObject::internal("list page missing"))?;
    call.finish(page, Some(call.server.inner.cache.lists))
}

async fn listen(call: Call, p: SubscriptionsListenParams) -> HandlerResult {
    let feed = call
        .extensions
        .get::<listen::FeedSlot>()
        .and_then(|slot| crate::sync::lock(&slot.0).take());
    listen::listen(call.server, call.peer, call.id, p, call.cancel, feed).await
}

/// The input-round side of a request that may ask for input (`tools/call`, `prompts/get`,
/// `resources/read`). In the handshake era there is none: input is a server→client request.
struct Round<'a> {
    server: Server,
    era: Era,
    method: &'static str,
    /// Digest of the request's salient params, computed only when a state is opened or sealed.
    digest: &'a (dyn Fn() -> String + Sync),
    /// Digest of the verified caller (authorization on): a sealed state is bound to it.
    caller: Option<String>,
    input: Option<Arc<InputState>>,
}

impl Call {
    /// Begin request `M`, which may ask for input: open its `requestState` and
    /// `inputResponses` (stateless era only) and give the handler its context.
    fn begin<'a, M: Method>(
        self,
        meta: Option<RequestMeta>,
        state: Option<&str>,
        responses: Option<JsonObject>,
        digest: &'a (dyn Fn() -> String + Sync),
    ) -> Result<(RequestContext, Round<'a>), ErrorObject> {
        let caller = match self.era {
            Era::Handshake => None,
            Era::Stateless => self
                .extensions
                .get::<VerifiedCaller>()
                .map(request_state::caller_digest),
        };
        let input = match self.era {
            Era::Handshake => None,
            Era::Stateless => {
                let keys = crate::sync::read(&self.server.inner.state_keys);
                let opened = InputState::open(&keys, M::NAME, digest, caller.as_deref(), state, responses)?;
                Some(Arc::new(opened))
            }
        };
        let round = Round {
            server: self.server.clone(),
            era: self.era,
            method: M::NAME,
            digest,
            caller,
            input: input.clone(),
        };
        Ok((self.into_context(M::NAME, meta, input), round))
    }
}

impl Round<'_> {
    /// The reply: `input_required` while inputs are missing, otherwise the outcome, completed
    /// for the era. `plain` says the result sets none of the members the stateless wire adds:
    /// such a result is completed in its one serialization instead of being read and written
    /// again.
    fn reply<T: serde::Serialize>(
        &self,
        outcome: Result<T, ErrorObject>,
        failed: bool,
        cache: Option<CacheHint>,
        plain: impl Fn(&T) -> bool,
    ) -> HandlerResult {
        if let Some(state) = &self.input {
            let keys = crate::sync::read(&self.server.inner.state_keys);
            let info = &self.server.inner.info_json;
            if let Some(reply) =
                state.interrupt(failed, &keys, self.method, self.digest, self.caller.as_deref(), info)?
            {
                return Ok(reply);
            }
        }
        let result = outcome?;
        match self.era {
            Era::Stateless if plain(&result) => stateless::complete(&result, &self.server.inner.info_json, cache),
            era => finish_for(era, &self.server, to_raw(&result)?, cache),
        }
    }
}

/// Digest of a request's salient params, binding its `requestState` to it.
fn digest_of(parts: &[&str], arguments: Option<&RawValue>) -> String {
    let args: Option<serde_json::Value> = arguments.and_then(|a| serde_json::from_str(a.get()).ok());
    request_state::digest(parts, args.as_ref())
}

async fn call_tool(mut call: Call, p: CallToolParams) -> HandlerResult {
    // The schema types `arguments` as an object; anything else is malformed params, not a
    // tool-level mistake.
    if p.arguments.as_deref().is_some_and(|a| !a.get().starts_with('{')) {
        return Err(
            ErrorObject::invalid_params("Invalid params: `arguments` must be an object")
                .with_data(json!({ "path": "arguments" })),
        );
    }
    let mut snap = call.take_snapshot();
    // Off here may be on in the deployment already (the announcement not applied yet).
    if !snap.tool_index.contains_key(&p.name)
        && snap.is_switched_off(Kind::Tool, &p.name)
        && call.server.catch_up().await
    {
        snap = call.server.snapshot();
    }
    let unknown = || ErrorObject::invalid_params(format!("Unknown tool: {}", p.name));
    let Some(def) = snap.tool_index.get(&p.name).map(|&i| &snap.catalog.tools[i]) else {
        return Err(call.server.explain_unknown(&p.name).unwrap_or_else(unknown));
    };
    call.check_access(Item::Tool(&def.tool), &def.guard, unknown)?;
    let version = call.session.version();
    if let Some(invalid) = def.check_arguments(p.arguments.as_deref()) {
        let raw = to_raw(&invalid.for_version(version))?;
        return call.finish(raw, None);
    }
    // The digest binds a stateless request's state to its params; the handshake era never
    // computes it, so it copies nothing.
    let (name, arguments) = match call.era {
        Era::Stateless => (p.name.clone(), p.arguments.clone()),
        Era::Handshake => (String::new(), None),
    };
    let digest = || digest_of(&[CallTool::NAME, &name], arguments.as_deref());
    let (cx, round) = call.begin::<CallTool>(p.meta, p.request_state.as_deref(), p.input_responses, &digest)?;
    let call = ToolCall {
        name: p.name.into(),
        arguments: p.arguments,
        cx,
    };
    let outcome = (def.handler)(call).await;
    let failed = outcome.as_ref().map_or(true, |r| r.is_error == Some(true));
    let outcome = outcome.map(|r| r.for_version(version));
    // A result that sets no stateless member itself is completed as it is serialized.
    round.reply(outcome, failed, None, |r| r.result_type.is_none() && r.meta.is_none())
}

async fn read_resource(mut call: Call, p: ReadResourceParams) -> HandlerResult {
    let snap = call.take_snapshot();
    let version = call.session.version();
    let reads = call.server.inner.cache.reads;
    let uri = p.uri.clone();
    let found = if let Some(def) = snap.resource_index.get(&p.uri).map(|&i| &snap.catalog.resources[i]) {
        call.check_access(Item::Resource(&def.resource), &def.guard, || {
            resource_not_found(&uri, version)
        })?;
        Some((&def.read, BTreeMap::new()))
    } else if let Some((t, variables)) = snap
        .catalog
        .templates
        .iter()
        .find_map(|t| t.matcher.matches(&p.uri).map(|v| (t, v)))
    {
        call.check_access(Item::Template(&t.template), &t.guard, || {
            resource_not_found(&uri, version)
        })?;
        Some((&t.read, variables))
    } else {
        None
    };
    let digest = || digest_of(&[ReadResource::NAME, &uri], None);
    let (cx, round) = call.begin::<ReadResource>(p.meta, p.request_state.as_deref(), p.input_responses, &digest)?;
    let Some((read, variables)) = found else {
        return Err(resource_not_found(&p.uri, version));
    };
    let request = ResourceRequest {
        uri: p.uri,
        variables,
        cx,
    };
    let outcome = read(request).await;
    let failed = outcome.is_err();
    let outcome = outcome.map(|r| r.for_version(version));
    round.reply(outcome, failed, Some(reads), |r| {
        r.result_type.is_none() && r.ttl_ms.is_none() && r.cache_scope.is_none() && r.meta.is_none()
    })
}

/// Whether `uri` names a resource of `snap`, or matches one of its templates.
pub(super) fn names_resource(snap: &Snapshot, uri: &str) -> bool {
    snap.resource_index.contains_key(uri) || snap.catalog.templates.iter().any(|t| t.matcher.matches(uri).is_some())
}

/// Spec: `server/resources` "Error Handling" (-32002 up to 2025-11-25, -32602 from 2026-07-28).
pub(super) fn resource_not_found(uri: &str, version: ProtocolVersion) -> ErrorObject {
    let code = if version >= ProtocolVersion::V2026_07_28 {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND
    };
    ErrorObject::new(code, format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }))
}

async fn get_prompt(mut call: Call, p: GetPromptParams) -> HandlerResult {
    let mut snap = call.take_snapshot();
    if !snap.prompt_index.contains_key(&p.name)
        && snap.is_switched_off(Kind::Prompt, &p.name)
        && call.server.catch_up().await
    {
        snap = call.server.snapshot();
    }
    let unknown = || ErrorObject::invalid_params(format!("Unknown prompt: {}", p.name));
    let Some(def) = snap.prompt_index.get(&p.name).map(|&i| &snap.catalog.prompts[i]) else {
        return Err(call.server.explain_unknown(&p.name).unwrap_or_else(unknown));
    };
    call.check_access(Item::Prompt(&def.prompt), &def.guard, unknown)?;
    let arguments = p.arguments.unwrap_or_default();
    if let Some(missing) = def.missing_required(&arguments) {
        return Err(ErrorObject::invalid_params(format!(
            "Missing required argument {missing:?} for prompt {}",
            p.name
        )));
    }
    let version = call.session.version();
    // As for tools: only the stateless era digests the arguments.
    let args_json = match call.era {
        Era::Stateless => serde_json::to_value(&arguments).ok(),
        Era::Handshake => None,
    };
    let digest = || request_state::digest(&[GetPrompt::NAME, &p.name], args_json.as_ref());
    let (cx, round) = call.begin::<GetPrompt>(p.meta, p.request_state.as_deref(), p.input_responses, &digest)?;
    let request = PromptRequest {
        name: p.name.clone(),
        arguments,
        cx,
    };
    let outcome = (def.get)(request).await;
    let failed = outcome.is_err();
    let outcome = outcome.map(|r| r.for_version(version));
    // A result that sets no stateless member itself is completed as it is serialized.
    round.reply(outcome, failed, None, |r| r.result_type.is_none() && r.meta.is_none())
}

/// Where the completions of the prompt or template `p` names are answered, when not here.
fn forwarded(snap: &Snapshot, p: &CompleteParams) -> Option<super::completion::ForwardComplete> {
    match &p.reference {
        CompletionReference::Prompt(r) => {
            let &i = snap.prompt_index.get(&r.name)?;
            snap.catalog.prompts[i].forward_complete.clone()
        }
        CompletionReference::Resource(r) => snap
            .catalog
            .templates
            .iter()
            .find(|t| t.template.uri_template == r.uri)?
            .forward_complete
            .clone(),
    }
}

/// Spec: `server/utilities/completion`: at most 100 values, with `total` and `hasMore`.
fn complete(snap: &Snapshot, p: CompleteParams) -> HandlerResult {
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

/// Spec: 2026-07-28 `server/discover`.
pub(crate) fn discover(server: &Server) -> HandlerResult {
    let result = DiscoverResult {
        supported_versions: stateless::supported_versions().into_iter().map(str::to_owned).collect(),
        capabilities: server.capabilities_in(mcpkit_types::Era::Stateless),
        instructions: server.inner.instructions.clone(),
        ..Default::default()
    };
    let raw = to_raw(&result)?;
    stateless::finish(&raw, &server.inner.info_json, Some(server.inner.cache.lists))
}
