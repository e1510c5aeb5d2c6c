//! The client's handler table: answers the server's requests and fans notifications out.

use std::sync::{Arc, RwLock};

use mcpkit_types::method::{
    CreateMessage, Elicit, ListPrompts, ListResourceTemplates, ListResources, ListRoots, ListTools, LoggingMessage,
    Method, NotificationMethod, Ping, Progress, PromptListChanged, ResourceListChanged, ResourceUpdated,
    ToolListChanged,
};
use mcpkit_types::schema::{
    CreateMessageParams, ElicitParams, EmptyResult, ListRootsResult, LoggingMessageParams, ProgressParams,
    ResourceUpdatedParams, Root,
};
use mcpkit_types::ErrorObject;
use serde_json::value::RawValue;
use tokio::sync::broadcast;

use super::{ElicitFn, RootsFn, SamplingFn};
use crate::engine::{BoxFuture, HandlerResult, IncomingRequest, Peer, Role};
use crate::wire::{params, to_raw};

/// A notification from the server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress` (also delivered to the call that asked for it).
    Progress(ProgressParams),
    /// `notifications/message`.
    Log(LoggingMessageParams),
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedParams),
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// Any other notification, raw.
    Other {
        /// The method.
        method: String,
        /// The params as JSON.
        params: Option<serde_json::Value>,
    },
}

pub(crate) struct ClientService {
    pub(crate) cache: Arc<super::cache::ResponseCache>,
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) elicitation: Option<ElicitFn>,
    pub(crate) roots: Option<Arc<RwLock<Vec<Root>>>>,
    pub(crate) roots_fn: Option<RootsFn>,
    pub(crate) notifications: broadcast::Sender<ServerNotification>,
}

impl Role for ClientService {
    fn handle_request(&self, _peer: Peer, req: IncomingRequest) -> BoxFuture<HandlerResult> {
        let raw = req.params;
        match req.method.as_str() {
            Ping::NAME => Box::pin(async { to_raw(&EmptyResult::default()) }),
            CreateMessage::NAME => match self.sampling.clone() {
                Some(f) => Box::pin(async move {
                    let p: CreateMessageParams = params(raw.as_deref())?;
                    to_raw(&f(p).await?)
                }),
                None => not_found(req.method),
            },
            Elicit::NAME => match self.elicitation.clone() {
                Some(f) => Box::pin(async move {
                    let p: ElicitParams = params(raw.as_deref())?;
                    to_raw(&f(p).await?)
                }),
                None => not_found(req.method),
            },
            ListRoots::NAME if self.roots_fn.is_some() => match self.roots_fn.clone() {
                Some(f) => Box::pin(async move { to_raw(&f().await?) }),
                None => not_found(req.method),
            },
            ListRoots::NAME => match self.roots.clone() {
                Some(roots) => Box::pin(async move {
                    let roots = roots.read().map(|r| r.clone()).unwrap_or_default();
                    to_raw(&ListRootsResult {
                        roots,
                        ..Default::default()
                    })
                }),
                None => not_found(req.method),
            },
            _ => not_found(req.method),
        }
    }

    fn handle_notification(&self, _peer: Peer, method: String, raw: Option<Box<RawValue>>) -> BoxFuture<()> {
        let raw = raw.as_deref();
        let n = match method.as_str() {
            Progress::NAME => params(raw).map(ServerNotification::Progress).ok(),
            LoggingMessage::NAME => params(raw).map(ServerNotification::Log).ok(),
            ResourceUpdated::NAME => params(raw).map(ServerNotification::ResourceUpdated).ok(),
            ResourceListChanged::NAME => Some(ServerNotification::ResourceListChanged),
            ToolListChanged::NAME => Some(ServerNotification::ToolListChanged),
            PromptListChanged::NAME => Some(ServerNotification::PromptListChanged),
            _ => Some(ServerNotification::Other {
                params: raw.and_then(|r| serde_json::from_str(r.get()).ok()),
                method,
            }),
        };
        // Change notifications make cached results stale at once.
        match &n {
            Some(ServerNotification::ToolListChanged) => self.cache.invalidate(ListTools::NAME),
            Some(ServerNotification::PromptListChanged) => self.cache.invalidate(ListPrompts::NAME),
            Some(ServerNotification::ResourceListChanged) => {
                self.cache.invalidate(ListResources::NAME);
                self.cache.invalidate(ListResourceTemplates::NAME);
            }
            Some(ServerNotification::ResourceUpdated(p)) => self.cache.invalidate_read(&p.uri),
            _ => {}
        }
        if let Some(n) = n {
            // No receivers is fine: nobody is listening.
            let _ = self.notifications.send(n);
        }
        Box::pin(std::future::ready(()))
    }
}

fn not_found(method: String) -> BoxFuture<HandlerResult> {
    Box::pin(async move { Err(ErrorObject::method_not_found(&method)) })
}
