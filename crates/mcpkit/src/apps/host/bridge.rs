//! [`AppBridge`]: the host end of one view's postMessage JSON-RPC (SEP-1865, "Communication
//! Protocol", "Visibility"). Transport-neutral: the host hands it each message the view posts
//! and posts back what comes out, whatever carries them (a webview's IPC, a WebSocket to a
//! browser page).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcpkit_types::jsonrpc::{parse, FrameError, MessageRef, OutgoingError, OutgoingNotification, OutgoingResult};
use mcpkit_types::method::{CallTool, LoggingMessage, Method, NotificationMethod, ReadResource};
use mcpkit_types::schema::{
    CallToolParams, CallToolResult, Implementation, JsonObject, LoggingMessageParams, ReadResourceParams,
    ResourceContents, Tool,
};
use mcpkit_types::{ErrorObject, RequestId};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::messages::{self, HostCapabilities, HostContext, InitializeResult, Sandbox, Supported};
use super::sandbox::{allow_attribute, content_security_policy};
use crate::apps::{ToolUi, ViewMeta, Visibility, MIME_TYPE};
use crate::sync::lock;
use crate::Client;

/// What a view asks of the host beyond the server: the host decides what to do with each.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ViewEvent {
    /// `ui/notifications/initialized`: the view is ready.
    Initialized,
    /// `notifications/message`: a log message from the view.
    Log(LoggingMessageParams),
    /// `ui/notifications/size-changed`.
    SizeChanged(messages::SizeChangedParams),
    /// `ui/open-link` (answered `{}`): open this URL if the user agrees.
    OpenLink(String),
    /// `ui/message` (answered `{}`): a message for the conversation.
    Message(JsonObject),
    /// `ui/update-model-context` (answered `{}`): context for the model's next turns.
    UpdateModelContext(JsonObject),
}

/// A view as read from its server: its HTML and metadata, and the sandbox built from them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct View {
    /// Its `ui://` URI.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// Its `_meta.ui`, if it declared one.
    pub meta: Option<ViewMeta>,
}

impl View {
    /// Read the view at `uri` from `client`'s server. Fails when it is not an HTML view
    /// (`text/html;profile=mcp-app`, as text or as base64 UTF-8).
    pub async fn read(client: &Client, uri: &str) -> crate::Result<View> {
        use base64::Engine as _;
        let read = client.read_resource(uri).await?;
        let wrong = |why: &str| crate::Error::InvalidResponse(format!("{uri} is not a {MIME_TYPE} view: {why}"));
        let contents = read.contents.into_iter().next().ok_or_else(|| wrong("no contents"))?;
        let meta = ViewMeta::of(&contents);
        if contents.mime_type() != Some(MIME_TYPE) {
            return Err(wrong("another MIME type"));
        }
        let html = match contents {
            ResourceContents::Text(t) => t.text,
            ResourceContents::Blob(b) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b.blob.as_bytes())
                    .map_err(|_| wrong("its blob is not base64"))?;
                String::from_utf8(bytes).map_err(|_| wrong("its blob is not UTF-8"))?
            }
        };
        Ok(View {
            uri: uri.to_owned(),
            html,
            meta,
        })
    }

    /// The iframe's Content-Security-Policy ([`content_security_policy`]).
    pub fn csp(&self) -> String {
        content_security_policy(self.meta.as_ref())
    }

    /// The iframe's `allow` attribute ([`allow_attribute`]).
    pub fn allow(&self) -> String {
        allow_attribute(self.meta.as_ref())
    }
}

/// What comes out of an [`AppBridge`]: the messages to post to the view, and what the view
/// asks of the host.
#[derive(Debug)]
pub struct Outlet {
    /// Each a JSON-RPC message for the view's `postMessage`.
    pub to_view: mpsc::UnboundedReceiver<String>,
    /// Requests and notifications for the host itself.
    pub events: mpsc::UnboundedReceiver<ViewEvent>,
}

/// The host end of one view. Cheap to clone; every clone is the same bridge.
#[derive(Clone)]
pub struct AppBridge {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    host_info: Implementation,
    context: Mutex<HostContext>,
    view: Option<ViewMeta>,
    /// The view's server's tools by name, refreshed when a view names one not seen yet.
    tools: Mutex<HashMap<String, Tool>>,
    outbox: Mutex<Outbox>,
    events: mpsc::UnboundedSender<ViewEvent>,
}

/// Notifications to the view wait until it said it is initialized (the spec forbids sending
/// earlier).
struct Outbox {
    initialized: bool,
    held: Vec<String>,
    to_view: mpsc::UnboundedSender<String>,
}

impl std::fmt::Debug for AppBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppBridge")
            .field("host_info", &self.inner.host_info)
            .finish_non_exhaustive()
    }
}

impl AppBridge {
    /// A bridge between a view (with metadata `view`, as read with [`View::read`]) and its own
    /// server, reached through `client`. `host_info` and `context` answer the view's
    /// `ui/initialize`.
    pub fn new(
        client: Client,
        host_info: Implementation,
        context: HostContext,
        view: Option<ViewMeta>,
    ) -> (AppBridge, Outlet) {
        let (to_view, to_view_rx) = mpsc::unbounded_channel();
        let (events, events_rx) = mpsc::unbounded_channel();
        let inner = Inner {
            client,
            host_info,
            context: Mutex::new(context),
            view,
            tools: Mutex::default(),
            outbox: Mutex::new(Outbox {
                initialized: false,
                held: Vec::new(),
                to_view,
            }),
            events,
        };
        let outlet = Outlet {
            to_view: to_view_rx,
            events: events_rx,
        };
        (AppBridge { inner: Arc::new(inner) }, outlet)
    }

    /// Handle one message the view posted; the answer to post back, if it was a request.
    pub async fn receive(&self, message: &str) -> Option<String> {
        match parse(message.as_bytes()) {
            Ok(MessageRef::Request(r)) => {
                let outcome = self.answer(&r.method, r.params).await;
                Some(reply(&r.id, outcome))
            }
            Ok(MessageRef::Notification(n)) => {
                self.notice(&n.method, n.params);
                None
            }
            // The host sends the view no requests it waits on.
            Ok(MessageRef::Response(_)) | Err(FrameError::Ignore(_)) => None,
            Err(FrameError::Parse(e)) => Some(error_reply(None, &ErrorObject::parse_error(e))),
            Err(FrameError::Invalid { id, reason }) => {
                Some(error_reply(id.as_ref(), &ErrorObject::invalid_request(reason)))
            }
        }
    }

    async fn answer(&self, method: &str, params: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            messages::Initialize::NAME => to_raw(&self.initialize_result()),
            messages::Ping::NAME => to_raw(&JsonObject::new()),
            CallTool::NAME => {
                let params: CallToolParams = decode(params)?;
                self.gate(&params.name).await?;
                let args = params.arguments.unwrap_or_else(empty_object);
                let result = self.inner.client.call_tool(&params.name, args).await;
                to_raw(&for_view(&result.map_err(wire_error)?))
            }
            ReadResource::NAME => {
                let params: ReadResourceParams = decode(params)?;
                let result = self.inner.client.read_resource(&params.uri).await;
                to_raw(&for_view(&result.map_err(wire_error)?))
            }
            messages::OpenLink::NAME => {
                let params: messages::OpenLinkParams = decode(params)?;
                self.event(ViewEvent::OpenLink(params.url));
                to_raw(&JsonObject::new())
            }
            messages::UiMessage::NAME => {
                self.event(ViewEvent::Message(decode(params)?));
                to_raw(&JsonObject::new())
            }
            messages::UpdateModelContext::NAME => {
                self.event(ViewEvent::UpdateModelContext(decode(params)?));
                to_raw(&JsonObject::new())
            }
            // The host offers no other mode: it answers with the current one, as the spec asks.
            messages::RequestDisplayMode::NAME => {
                let mode = lock(&self.inner.context).display_mode.clone();
                to_raw(&messages::DisplayModeParams {
                    mode: mode.unwrap_or_else(|| "inline".to_owned()),
                })
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }

    fn notice(&self, method: &str, params: Option<&RawValue>) {
        match method {
            messages::Initialized::NAME => {
                let mut outbox = lock(&self.inner.outbox);
                outbox.initialized = true;
                for message in std::mem::take(&mut outbox.held) {
                    // A view that is gone reads nothing more; nothing to do about it here.
                    let _ = outbox.to_view.send(message);
                }
                drop(outbox);
                self.event(ViewEvent::Initialized);
            }
            LoggingMessage::NAME => {
                if let Ok(log) = decode(params) {
                    self.event(ViewEvent::Log(log));
                }
            }
            messages::SizeChanged::NAME => {
                if let Ok(size) = decode(params) {
                    self.event(ViewEvent::SizeChanged(size));
                }
            }
            _ => {}
        }
    }

    /// The visibility gate: a view calls only tools of its own server whose visibility
    /// includes `app`.
    async fn gate(&self, name: &str) -> Result<(), ErrorObject> {
        if !lock(&self.inner.tools).contains_key(name) {
            let tools = self.inner.client.list_all_tools().await.map_err(wire_error)?;
            *lock(&self.inner.tools) = tools.into_iter().map(|t| (t.name.clone(), t)).collect();
        }
        let allowed = match lock(&self.inner.tools).get(name) {
            None => {
                return Err(ErrorObject::invalid_params(format!(
                    "{name:?} is not a tool of this view's server"
                )))
            }
            Some(tool) => ToolUi::of(tool).is_none_or(|ui| ui.allows(Visibility::App)),
        };
        match allowed {
            true => Ok(()),
            false => Err(ErrorObject::invalid_params(format!(
                "tool {name:?} is not callable from a view: its visibility leaves out \"app\""
            ))),
        }
    }

    fn initialize_result(&self) -> InitializeResult {
        let sandbox = self.inner.view.as_ref().map(|v| Sandbox {
            permissions: v.permissions.clone(),
            csp: v.csp.clone(),
        });
        InitializeResult {
            protocol_version: messages::PROTOCOL_VERSION.to_owned(),
            host_info: self.inner.host_info.clone(),
            host_capabilities: HostCapabilities {
                open_links: Some(Supported {}),
                server_tools: Some(JsonObject::new()),
                server_resources: Some(JsonObject::new()),
                logging: Some(Supported {}),
                sandbox,
            },
            host_context: lock(&self.inner.context).clone(),
        }
    }

    /// Send the tool call's complete arguments (`ui/notifications/tool-input`).
    pub fn send_tool_input(&self, arguments: JsonObject) {
        self.notify::<messages::ToolInput>(&messages::ToolInputParams { arguments });
    }

    /// Send arguments still streaming (`ui/notifications/tool-input-partial`).
    pub fn send_tool_input_partial(&self, arguments: JsonObject) {
        self.notify::<messages::ToolInputPartial>(&messages::ToolInputParams { arguments });
    }

    /// Send the tool call's result (`ui/notifications/tool-result`).
    pub fn send_tool_result(&self, result: &CallToolResult) {
        self.notify::<messages::ToolResult>(result);
    }

    /// Say the tool call was cancelled (`ui/notifications/tool-cancelled`).
    pub fn send_tool_cancelled(&self, reason: Option<String>) {
        self.notify::<messages::ToolCancelled>(&messages::ToolCancelledParams { reason });
    }

    /// Merge `changed` into the host context and tell the view
    /// (`ui/notifications/host-context-changed`).
    pub fn set_host_context(&self, changed: HostContext) {
        {
            let mut context = lock(&self.inner.context);
            let mut merged = serde_json::to_value(&*context).unwrap_or_default();
            if let (Some(into), Ok(serde_json::Value::Object(from))) =
                (merged.as_object_mut(), serde_json::to_value(&changed))
            {
                into.extend(from);
            }
            if let Ok(merged) = serde_json::from_value(merged) {
                *context = merged;
            }
        }
        self.notify::<messages::HostContextChanged>(&changed);
    }

    fn notify<N: NotificationMethod>(&self, params: &N::Params) {
        let Ok(message) = serde_json::to_string(&OutgoingNotification::new(N::NAME, Some(params))) else {
            return;
        };
        let mut outbox = lock(&self.inner.outbox);
        if outbox.initialized {
            let _ = outbox.to_view.send(message);
        } else {
            outbox.held.push(message);
        }
    }

    fn event(&self, event: ViewEvent) {
        // A host that dropped its event receiver chose not to hear them.
        let _ = self.inner.events.send(event);
    }
}

/// A server's result as the view gets it: without the members of the stateless era's wire
/// (`resultType`, caching hints, the protocol's own `_meta` keys), which belong to the
/// host's connection, not to the view's protocol.
fn for_view<T: Serialize>(result: &T) -> serde_json::Value {
    let mut value = serde_json::to_value(result).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        for member in ["resultType", "ttlMs", "cacheScope"] {
            object.remove(member);
        }
        if let Some(serde_json::Value::Object(meta)) = object.get_mut("_meta") {
            meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
            if meta.is_empty() {
                object.remove("_meta");
            }
        }
    }
    value
}

fn decode<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ErrorObject> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| ErrorObject::invalid_params(e.to_string()))
}

fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, ErrorObject> {
    serde_json::value::to_raw_value(value).map_err(|e| ErrorObject::internal(e.to_string()))
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).unwrap_or_default()
}

/// What the view gets for a failure to reach the server: the server's own error, or an
/// internal error naming what went wrong.
fn wire_error(e: crate::Error) -> ErrorObject {
    match e {
        crate::Error::Rpc(e) => e,
        other => ErrorObject::internal(other.to_string()),
    }
}

fn reply(id: &RequestId, outcome: Result<Box<RawValue>, ErrorObject>) -> String {
    match outcome {
        Ok(result) => serde_json::to_string(&OutgoingResult::new(id, &*result)).unwrap_or_default(),
        Err(e) => error_reply(Some(id), &e),
    }
}

fn error_reply(id: Option<&RequestId>, e: &ErrorObject) -> String {
    serde_json::to_string(&OutgoingError::new(id, e)).unwrap_or_default()
}
