//! The App region: a tool linked to a `ui://` view (MCP Apps) has the view rendered in the page,
//! in an iframe sandboxed to scripts only, loaded from a second loopback listener (the views'
//! origin, another port: the view shares no origin with the page, and its document carries the
//! Content-Security-Policy its metadata asks for, never looser). The page relays what the view
//! posts to `POST /api/view/post`, which feeds the view's [`AppBridge`]: the bridge answers
//! `ui/initialize`, and proxies the view's `tools/call` and `resources/read` to the server
//! through the page's connection, with the visibility gate. What the bridge sends the view, and
//! what the view asks of the host (log messages, links, size), reach the page as events.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use mcpkit::apps::host::messages::{HostContext, ToolInfo};
use mcpkit::apps::host::{AppBridge, Outlet, View, ViewEvent};
use mcpkit::types::schema::{Implementation, Tool};
use mcpkit::Client;
use serde_json::{json, Value};

use super::hub::{timestamp, Hub};
use crate::target::one_line;

/// What the views' listener needs.
#[derive(Clone)]
pub(super) struct Views {
    pub(super) hub: Arc<Hub>,
    /// The `Host` values that name the views' listener.
    pub(super) hosts: Arc<[String]>,
    /// The page's origins, the only ones that may frame a view.
    pub(super) page_origins: Arc<str>,
}

/// The views' origin: `GET /view?id=N&key=K`, the view's document with its CSP.
pub(super) fn router(views: Views) -> Router {
    Router::new().route("/view", get(document)).with_state(views)
}

/// The view's document, to the page's iframe only: the view's key, a `Host` of this listener,
/// and its CSP (with `frame-ancestors` the page and `sandbox allow-scripts`, so even opened on
/// its own it runs in an opaque origin).
async fn document(State(views): State<Views>, request: Request) -> Response {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| views.hosts.iter().any(|a| a.eq_ignore_ascii_case(h))) {
        return (StatusCode::MISDIRECTED_REQUEST, "this Host is not served here\n").into_response();
    }
    let (mut id, mut key) = (None, None);
    for pair in request.uri().query().unwrap_or_default().split('&') {
        if let Some(v) = pair.strip_prefix("id=") {
            id = v.parse::<u64>().ok();
        } else if let Some(v) = pair.strip_prefix("key=") {
            key = Some(v);
        }
    }
    let view = id.and_then(|id| views.hub.view(id));
    let Some(view) = view.filter(|v| key.is_some_and(|k| super::http::same(k.as_bytes(), v.key.as_bytes()))) else {
        return (StatusCode::NOT_FOUND, "no such view\n").into_response();
    };
    let csp = format!(
        "{}; frame-ancestors {}; sandbox allow-scripts",
        view.csp, views.page_origins
    );
    let mut r = view.html.to_string().into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    match HeaderValue::from_str(&csp) {
        Ok(v) => {
            h.insert(header::CONTENT_SECURITY_POLICY, v);
            r
        }
        // A policy that is not a header value is not served without one.
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the view's policy is not a header value\n",
        )
            .into_response(),
    }
}

/// Open the view at `uri` (for `tool`, when a tool's call opens it): read it from the server,
/// bridge it, and say where the page loads it from. `theme` and `locale` are the page's, for
/// the view's host context.
pub(super) async fn open(
    hub: &Arc<Hub>,
    client: Client,
    views_base: &str,
    uri: &str,
    tool: Option<Tool>,
    theme: Option<String>,
    locale: Option<String>,
) -> Value {
    let view = match View::read(&client, uri).await {
        Ok(v) => v,
        Err(e) => return json!({"error": one_line(&e.to_string())}),
    };
    let key = match super::random_hex(16) {
        Ok(k) => k,
        Err(f) => return json!({"error": f.message}),
    };
    let context = HostContext {
        tool_info: tool.map(|t| ToolInfo::new(None, t)),
        theme: theme.filter(|t| t == "light" || t == "dark"),
        display_mode: Some("inline".to_owned()),
        available_display_modes: Some(vec!["inline".to_owned()]),
        locale: locale.filter(|l| l.len() <= 35),
        platform: Some("web".to_owned()),
        ..HostContext::default()
    };
    let (bridge, outlet) = AppBridge::new(
        client,
        Implementation::new("mcpkit-dev", env!("CARGO_PKG_VERSION")),
        context,
        view.meta.clone(),
    );
    let id = hub.next_view();
    let pump = tokio::spawn(pump(hub.clone(), id, outlet)).abort_handle();
    let (csp, allow) = (view.csp(), view.allow());
    hub.add_view(
        id,
        bridge,
        Arc::from(view.html.as_str()),
        Arc::from(csp.as_str()),
        Arc::from(key.as_str()),
        pump,
    );
    json!({
        "view": id,
        "uri": uri,
        "src": format!("{views_base}/view?id={id}&key={key}"),
        "sandbox": "allow-scripts",
        "allow": allow,
        "csp": csp,
        "prefersBorder": view.meta.as_ref().and_then(|m| m.prefers_border),
    })
}

/// One message the view posted: shown in Messages, fed to the bridge; the answer (also shown)
/// to post back.
pub(super) async fn post(hub: &Hub, bridge: &AppBridge, message: &str) -> Option<String> {
    hub.publish(json!({"kind": "message", "dir": "in", "peer": "view", "at": timestamp(), "text": message}));
    let reply = bridge.receive(message).await;
    if let Some(reply) = &reply {
        hub.publish(json!({"kind": "message", "dir": "out", "peer": "view", "at": timestamp(), "text": reply}));
    }
    reply
}

/// Carry the bridge's output to the page: messages for the view, and what the view asks of
/// the host.
async fn pump(hub: Arc<Hub>, id: u64, outlet: Outlet) {
    let Outlet {
        mut to_view,
        mut events,
    } = outlet;
    loop {
        tokio::select! {
            message = to_view.recv() => match message {
                Some(text) => {
                    hub.publish(json!({"kind": "message", "dir": "out", "peer": "view", "at": timestamp(), "text": text}));
                    hub.publish(json!({"kind": "view-post", "view": id, "text": text}));
                }
                None => return,
            },
            event = events.recv() => match event {
                Some(event) => hub.publish(json!({"kind": "view-event", "view": id, "event": describe(event)})),
                None => return,
            },
        }
    }
}

/// A view's request of the host, for the page.
fn describe(event: ViewEvent) -> Value {
    match event {
        ViewEvent::Initialized => json!({"type": "initialized"}),
        ViewEvent::Log(log) => json!({"type": "log", "log": log}),
        ViewEvent::SizeChanged(size) => json!({"type": "size", "width": size.width, "height": size.height}),
        ViewEvent::OpenLink(url) => json!({"type": "open-link", "url": url}),
        ViewEvent::Message(m) => json!({"type": "message", "params": m}),
        ViewEvent::UpdateModelContext(c) => json!({"type": "model-context", "params": c}),
        other => json!({"type": "other", "debug": format!("{other:?}")}),
    }
}
