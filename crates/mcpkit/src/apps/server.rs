//! The server side of MCP Apps: a tool linked to its view, the view as a resource, and the
//! extension both bring with them. All of it is metadata on ordinary tools and resources: a
//! host without Apps sees the same tools and gets the same text from them.

use std::sync::Arc;

use mcpkit_types::schema::{JsonObject, Meta, ReadResourceResult, ResourceContents};
use serde_json::{json, Value};

use super::meta::{Csp, Permission, Permissions, ViewMeta, Visibility};
use super::meta::{EXTENSION_ID, LEGACY_RESOURCE_URI_KEY, MIME_TYPE, URI_SCHEME};
use crate::server::extensions::Extension;
use crate::server::{RequestContext, ResourceDef, ToolDef};

/// The MCP Apps extension (`io.modelcontextprotocol/ui`). A server serves it, and declares
/// `{"mimeTypes": ["text/html;profile=mcp-app"]}`, as soon as it registers a view
/// ([`UiResource`]) or a tool linked to one ([`ToolDef::ui`]); adding it by hand is not needed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Apps;

impl Extension for Apps {
    fn id(&self) -> &str {
        EXTENSION_ID
    }

    fn settings(&self) -> JsonObject {
        super::meta::settings()
    }
}

impl RequestContext {
    /// Whether the client renders MCP App views: it declared `io.modelcontextprotocol/ui` with
    /// `text/html;profile=mcp-app` among its `mimeTypes` (in `initialize`, or this request's
    /// `_meta` on the stateless wire). A tool still answers with text when it did not.
    pub fn client_supports_apps(&self) -> bool {
        self.client_extension(EXTENSION_ID)
            .and_then(|settings| settings.get("mimeTypes").cloned())
            .and_then(|types| types.as_array().cloned())
            .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
    }
}

impl ToolDef {
    /// Link the tool to the view at `resource_uri` (a `ui://` URI of a [`UiResource`] of this
    /// server): hosts with MCP Apps render its results there. Writes `_meta.ui.resourceUri`
    /// and the legacy flat `_meta["ui/resourceUri"]` (call after [`ToolDef::meta`], which
    /// replaces `_meta`). A URI outside `ui://`, or one no resource of the server has, is
    /// refused by [`ServerBuilder::try_build`](crate::ServerBuilder::try_build).
    pub fn ui(mut self, resource_uri: impl Into<String>) -> Self {
        let uri = resource_uri.into();
        if !uri.starts_with(URI_SCHEME) {
            self.needs.fault = Some(format!("its view {uri:?} is not a ui:// URI"));
        }
        let meta = self.tool.meta.get_or_insert_with(Meta::new);
        set_ui(meta, "resourceUri", Value::String(uri.clone()));
        meta.insert(LEGACY_RESOURCE_URI_KEY.into(), Value::String(uri.clone()));
        self.needs.links.push(uri);
        self.needs.extension = Some(Arc::new(Apps));
        self
    }

    /// Who may call the tool: the model, the views of this server, or both (the default).
    /// A tool only views call (`[Visibility::App]`) is left out of what hosts give the model.
    /// Writes `_meta.ui.visibility`.
    pub fn visibility(mut self, who: impl IntoIterator<Item = Visibility>) -> Self {
        let who: Vec<Value> = who.into_iter().map(|v| json!(v)).collect();
        let meta = self.tool.meta.get_or_insert_with(Meta::new);
        set_ui(meta, "visibility", Value::Array(who));
        self.needs.extension = Some(Arc::new(Apps));
        self
    }
}

/// Set `meta["ui"][key]`, making `meta["ui"]` an object if it is absent or not one.
fn set_ui(meta: &mut Meta, key: &str, value: Value) {
    let mut ui = match meta.remove("ui") {
        Some(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    ui.insert(key.to_owned(), value);
    meta.insert("ui".to_owned(), Value::Object(ui));
}

/// A view: an HTML document served as the resource `ui://…` with MIME type
/// `text/html;profile=mcp-app`, and its security and rendering settings in the read contents'
/// `_meta.ui` (and the listed resource's). Register it with
/// [`ServerBuilder::resource`](crate::ServerBuilder::resource).
#[derive(Debug, Clone)]
pub struct UiResource {
    uri: String,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    html: String,
    meta: ViewMeta,
}

impl UiResource {
    /// The view at `uri` (which must start with `ui://`, or the server refuses to build) with
    /// the HTML document `html`.
    pub fn html(uri: impl Into<String>, html: impl Into<String>) -> UiResource {
        UiResource {
            uri: uri.into(),
            name: None,
            title: None,
            description: None,
            html: html.into(),
            meta: ViewMeta::default(),
        }
    }

    /// The name it is listed under (default: its URI).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The origins the view may reach; without it, none.
    pub fn csp(mut self, csp: Csp) -> Self {
        self.meta.csp = Some(csp);
        self
    }

    /// The browser capabilities it asks for (camera, microphone, geolocation, clipboard
    /// write); hosts may grant them.
    pub fn permissions(mut self, permissions: impl IntoIterator<Item = Permission>) -> Self {
        self.meta.permissions = Some(Permissions::of(permissions));
        self
    }

    /// A dedicated sandbox origin, in the format the host documents.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.meta.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background around the view.
    pub fn prefers_border(mut self, prefers: bool) -> Self {
        self.meta.prefers_border = Some(prefers);
        self
    }
}

impl From<UiResource> for ResourceDef {
    fn from(view: UiResource) -> ResourceDef {
        let meta: Option<Meta> = match view.meta.is_empty() {
            true => None,
            false => serde_json::to_value(&view.meta)
                .ok()
                .map(|ui| Meta::from_iter([("ui".to_owned(), ui)])),
        };
        let mut contents = ResourceContents::text(view.uri.clone(), Some(MIME_TYPE), view.html);
        if let ResourceContents::Text(text) = &mut contents {
            text.meta = meta.clone();
        }
        let result = ReadResourceResult::new(vec![contents]);
        let name = view.name.unwrap_or_else(|| view.uri.clone());
        let fault = (!view.uri.starts_with(URI_SCHEME)).then(|| format!("a view's URI must start with {URI_SCHEME}"));
        let mut def = ResourceDef::new(view.uri, name, move || std::future::ready(result.clone())).mime_type(MIME_TYPE);
        if let Some(meta) = meta {
            def = def.meta(meta);
        }
        if let Some(title) = view.title {
            def = def.title(title);
        }
        if let Some(description) = view.description {
            def = def.description(description);
        }
        def.needs.fault = fault;
        def.needs.extension = Some(Arc::new(Apps));
        def
    }
}
