//! The handlers of an upstream's items as this server serves them: each forwards the request
//! to the upstream, relaying progress, log messages and cancellation.

use std::sync::{Arc, Weak};

use mcpkit_types::schema::{
    CallToolResult, CompleteParams, CompletionReference, GetPromptResult, ProgressParams, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, Tool,
};
use mcpkit_types::ErrorObject;
use tokio::sync::broadcast;

use super::super::resource::ErasedRead;
use super::super::uri_template::UriTemplate;
use super::super::{
    PromptDef, PromptRequest, RequestContext, ResourceDef, ResourceRequest, ResourceTemplateDef, ToolCall, ToolDef,
};
use super::items::prefixed;
use super::upstream::{client_of, failed, unavailable, Shared, MAX_SUBSCRIBED};
use crate::client::{CallOptions, Client, ServerNotification};
use crate::error::Result;

/// The upstream of a forwarding handler, or the error naming it when it is gone.
fn shared_of(weak: &Weak<Shared>, name: &str) -> Result<Arc<Shared>, ErrorObject> {
    weak.upgrade().ok_or_else(|| unavailable(name))
}

pub(super) fn tool_def(weak: &Weak<Shared>, name: &Arc<str>, mut tool: Tool) -> (String, ToolDef) {
    let original: Arc<str> = tool.name.as_str().into();
    tool.name = prefixed(name, &original);
    // Tasks are not passed through: the call is forwarded as an ordinary request.
    tool.execution = None;
    let (weak, name, upstream_name) = (weak.clone(), name.clone(), original.clone());
    let handler: super::super::tool::ErasedTool = Arc::new(move |call: ToolCall| {
        let (weak, name, original) = (weak.clone(), name.clone(), upstream_name.clone());
        Box::pin(async move {
            let shared = shared_of(&weak, &name)?;
            forward_call(&shared, &original, call).await
        })
    });
    (original.to_string(), ToolDef::served_by(tool, handler))
}

/// Forward one `tools/call`, relaying progress (see [`through`]).
async fn forward_call(shared: &Arc<Shared>, original: &str, call: ToolCall) -> Result<CallToolResult, ErrorObject> {
    let client = client_of(shared)?;
    let cx = call.cx;
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let options = CallOptions {
        progress: cx.progress_token().is_some().then_some(tx),
        ..Default::default()
    };
    let arguments = call.arguments;
    let upstream = client.call_tool_with(original, arguments.as_deref(), options);
    through(shared, &client, &cx, upstream, Some(&mut progress)).await
}

/// Run `upstream` (a request to the upstream made for the downstream request `cx`) to its
/// end, passing on its progress and the upstream's log messages meanwhile, and what came
/// before its result before it. It ends early when the downstream request is cancelled (the
/// upstream request is then dropped, which cancels it there) or must end to ask for input.
async fn through<T>(
    shared: &Arc<Shared>,
    client: &Client,
    cx: &RequestContext,
    upstream: impl std::future::Future<Output = Result<T>>,
    mut progress: Option<&mut tokio::sync::mpsc::UnboundedReceiver<ProgressParams>>,
) -> Result<T, ErrorObject> {
    let entered = shared.in_flight.enter(cx);
    let mut heard = Some(client.notifications());
    let relay_log = |n: ServerNotification| {
        if let ServerNotification::Log(m) = n {
            shared.in_flight.log(&shared.name, m, &entered);
        }
    };
    let upstream = shared.in_flight.scope(&entered, upstream);
    tokio::pin!(upstream);
    loop {
        let next_progress = async {
            match progress.as_deref_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        let next_heard = async {
            match heard.as_mut() {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            Some(p) = next_progress => cx.progress(p.progress, p.total, p.message.as_deref()),
            n = next_heard => match n {
                Ok(n) => relay_log(n),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                // The upstream is gone: the request ends with the connection's error.
                Err(broadcast::error::RecvError::Closed) => heard = None,
            },
            result = &mut upstream => {
                // What the upstream sent before its result is passed on before it.
                if let Some(rx) = progress.as_deref_mut() {
                    while let Ok(p) = rx.try_recv() {
                        cx.progress(p.progress, p.total, p.message.as_deref());
                    }
                }
                while let Some(rx) = heard.as_mut() {
                    match rx.try_recv() {
                        Ok(n) => relay_log(n),
                        Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                        Err(_) => break,
                    }
                }
                return result.map_err(|e| failed(shared, e));
            }
            () = entered.interrupt.cancelled() => {
                return Err(ErrorObject::internal("input required"));
            }
        }
    }
}

pub(super) fn prompt_def(weak: &Weak<Shared>, name: &Arc<str>, mut prompt: Prompt) -> (String, PromptDef) {
    let original = prompt.name.clone();
    prompt.name = prefixed(name, &original);
    let get = {
        let (weak, name, original) = (weak.clone(), name.clone(), original.clone());
        Arc::new(move |request: PromptRequest| {
            let (weak, name, original) = (weak.clone(), name.clone(), original.clone());
            Box::pin(async move {
                let shared = shared_of(&weak, &name)?;
                let client = client_of(&shared)?;
                let get = client.get_prompt(&original, request.arguments);
                through(&shared, &client, &request.cx, get, None).await
            }) as crate::engine::BoxFuture<Result<GetPromptResult, ErrorObject>>
        })
    };
    let upstream_name = original.clone();
    let forward_complete = forwarding_completions(weak, name, move |reference| {
        if let CompletionReference::Prompt(p) = reference {
            p.name.clone_from(&upstream_name);
        }
    });
    let def = PromptDef {
        prompt,
        get,
        completions: Default::default(),
        switch: None,
        guard: Default::default(),
        source: None,
        forward_complete: Some(forward_complete),
    };
    (original, def)
}

/// Completions asked of the upstream, the reference rewritten to its own name by `rename`.
fn forwarding_completions(
    weak: &Weak<Shared>,
    name: &Arc<str>,
    rename: impl Fn(&mut CompletionReference) + Send + Sync + 'static,
) -> super::super::completion::ForwardComplete {
    let (weak, name) = (weak.clone(), name.clone());
    let rename = Arc::new(rename);
    Arc::new(move |mut params: CompleteParams| {
        let (weak, name, rename) = (weak.clone(), name.clone(), rename.clone());
        Box::pin(async move {
            let shared = shared_of(&weak, &name)?;
            let client = client_of(&shared)?;
            rename(&mut params.reference);
            params.meta = None;
            client.complete_with(&params).await.map_err(|e| failed(&shared, e))
        })
    })
}

/// A read of a resource or template of the upstream.
fn reading(weak: &Weak<Shared>) -> ErasedRead {
    let weak = weak.clone();
    Arc::new(move |request: ResourceRequest| {
        let weak = weak.clone();
        Box::pin(async move {
            let shared = weak
                .upgrade()
                .ok_or_else(|| ErrorObject::internal("the upstream is no longer served"))?;
            let client = client_of(&shared)?;
            let read = client.read_resource(&request.uri);
            through(&shared, &client, &request.cx, read, None).await
        }) as crate::engine::BoxFuture<Result<ReadResourceResult, ErrorObject>>
    })
}

pub(super) fn resource_def(weak: &Weak<Shared>, resource: Resource) -> ResourceDef {
    ResourceDef {
        resource,
        read: reading(weak),
        guard: Default::default(),
        needs: Default::default(),
        source: None,
        on_subscribe: Some(subscribing(weak)),
    }
}

/// A downstream subscription to one of the upstream's resources: made upstream too, once per
/// URI (when the upstream offers subscriptions).
fn subscribing(weak: &Weak<Shared>) -> super::super::resource::OnSubscribe {
    let weak = weak.clone();
    Arc::new(move |uri: &str| {
        let Some(shared) = weak.upgrade() else {
            return;
        };
        {
            let mut subscribed = crate::sync::lock(&shared.subscribed);
            if subscribed.contains(uri) || subscribed.len() >= MAX_SUBSCRIBED {
                return;
            }
            subscribed.insert(uri.to_owned());
        }
        if let Ok(client) = client_of(&shared) {
            subscribe_upstream(&client, &shared.name, uri.to_owned());
        }
    })
}

/// `resources/subscribe` to the upstream in the background, if it offers subscriptions.
pub(super) fn subscribe_upstream(client: &Client, name: &Arc<str>, uri: String) {
    let offers = client
        .server_capabilities()
        .resources
        .as_ref()
        .is_some_and(|r| r.subscribe == Some(true));
    if !offers || client.is_stateless() {
        return;
    }
    let (client, name) = (client.clone(), name.clone());
    tokio::spawn(async move {
        if let Err(e) = client.subscribe(&uri).await {
            tracing::debug!("upstream {name:?}: subscribing to {uri} failed: {e}");
        }
    });
}

pub(super) fn template_def(weak: &Weak<Shared>, template: ResourceTemplate) -> Option<ResourceTemplateDef> {
    let matcher = match UriTemplate::parse(&template.uri_template) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("leaving out resource template {:?}: {e}", template.uri_template);
            return None;
        }
    };
    let name = weak.upgrade().map_or_else(|| Arc::from(""), |s| s.name.clone());
    let forward_complete = forwarding_completions(weak, &name, |_| {});
    Some(ResourceTemplateDef {
        template,
        matcher,
        read: reading(weak),
        completions: Default::default(),
        guard: Default::default(),
        source: None,
        forward_complete: Some(forward_complete),
        on_subscribe: Some(subscribing(weak)),
    })
}
