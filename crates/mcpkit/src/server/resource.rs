//! Resources and resource templates (spec: `server/resources`): async functions whose parameters
//! are extractors, like tools.
//!
//! ```
//! use mcpkit::server::{Args, ResourceTemplateDef, Uri};
//!
//! #[derive(serde::Deserialize)]
//! struct Item {
//!     id: String,
//! }
//!
//! let items = ResourceTemplateDef::new("items://{id}", "item", |Uri(uri): Uri, Args(item): Args<Item>| async move {
//!     format!("{uri} is item {}", item.id)
//! });
//! # let _ = items;
//! ```

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcpkit_types::schema::{Meta, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use mcpkit_types::{ErrorCode, ErrorObject, ProtocolVersion};

use super::completion::{Completer, CompletionFn};
use super::context::RequestContext;
use super::extract::{for_each_arity, sealed, FromRequest, HandlerRequest};
use super::uri_template::{TemplateError, UriTemplate};
use crate::engine::BoxFuture;

/// One `resources/read`, as seen by extractors ([`FromRequest<ResourceRequest>`]).
#[derive(Debug)]
pub struct ResourceRequest {
    /// The URI asked for.
    pub(crate) uri: String,
    /// For templates: the values of the template's variables.
    pub(crate) variables: BTreeMap<String, String>,
    pub(crate) cx: RequestContext,
}

impl ResourceRequest {
    /// The URI asked for.
    pub fn uri(&self) -> &str {
        &self.uri
    }
    /// For a template: the values of its variables (empty for a concrete resource).
    pub fn variables(&self) -> &BTreeMap<String, String> {
        &self.variables
    }
}

impl sealed::Request for ResourceRequest {}

impl HandlerRequest for ResourceRequest {
    fn context(&self) -> &RequestContext {
        &self.cx
    }
}

/// What a resource handler may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource handler",
    note = "a resource handler returns `ReadResourceResult`, `ResourceContents`, \
            `Vec<ResourceContents>`, `String` (text at the URI read), or a `Result` of one of these \
            whose error converts into `ErrorObject` (`mcpkit::Error` does)"
)]
pub trait IntoResourceResult: Send + 'static {
    /// Convert to the wire result for a read of `uri` (an `Err` is the request's error).
    fn into_resource_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject>;
}

impl IntoResourceResult for ReadResourceResult {
    fn into_resource_result(self, _: &str) -> Result<ReadResourceResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_result(self, _: &str) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource_result(self, _: &str) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

/// Text contents at the URI read, without a MIME type.
impl IntoResourceResult for String {
    fn into_resource_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        ResourceContents::text(uri, None, self).into_resource_result(uri)
    }
}

/// An `Err` is the error of the `resources/read` request.
impl<T: IntoResourceResult, E: Into<ErrorObject> + Send + 'static> IntoResourceResult for Result<T, E> {
    fn into_resource_result(self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        self.map_err(Into::into).and_then(|r| r.into_resource_result(uri))
    }
}

/// An async function usable as a resource or resource template handler: up to six
/// [`FromRequest`] parameters in any order, returning an [`IntoResourceResult`]. Implemented
/// for such functions only (sealed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a resource handler",
    label = "not a resource handler",
    note = "a resource handler is an async fn or closure taking up to six extractors in any order \
            (`Uri`, `Args<T>` or `RawArgs` for template variables, `RequestContext`, `State<S>`, \
            `CancellationToken`) and returning something that implements `IntoResourceResult` \
            (`ReadResourceResult`, `ResourceContents`, `String`, `Result<_, impl Into<ErrorObject>>`, ...)"
)]
pub trait ResourceHandler<T>: sealed::Handler<T> + Clone + Send + Sync + 'static {
    /// Read the resource for a request.
    fn call(&self, request: ResourceRequest) -> BoxFuture<Result<ReadResourceResult, ErrorObject>>;
}

macro_rules! impl_resource_handler {
    ($($t:ident),*) => {
        impl<F, Fut, $($t,)*> ResourceHandler<($($t,)*)> for F
        where
            F: Fn($($t),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: IntoResourceResult,
            $($t: FromRequest<ResourceRequest>,)*
        {
            #[allow(non_snake_case)]
            fn call(&self, request: ResourceRequest) -> BoxFuture<Result<ReadResourceResult, ErrorObject>> {
                let ($($t,)*) = match <($($t,)*) as FromRequest<ResourceRequest>>::from_request(&request) {
                    Ok(extracted) => extracted,
                    Err(r) => return Box::pin(std::future::ready(Err(r.into_error()))),
                };
                let fut = (self)($($t),*);
                let uri = request.uri;
                Box::pin(async move { fut.await.into_resource_result(&uri) })
            }
        }
    };
}
for_each_arity!(impl_resource_handler);

/// Told the URI when a session subscribes to a resource (an upstream's resource: the
/// subscription is made upstream too).
pub(crate) type OnSubscribe = Arc<dyn Fn(&str) + Send + Sync>;

pub(crate) type ErasedRead =
    Arc<dyn Fn(ResourceRequest) -> BoxFuture<Result<ReadResourceResult, ErrorObject>> + Send + Sync>;

fn erase<H: ResourceHandler<T>, T>(handler: H) -> ErasedRead {
    Arc::new(move |r| {
        let version = r.cx.protocol_version();
        let read = handler.call(r);
        Box::pin(async move { read.await.map_err(|e| not_found_for_version(e, version)) })
    })
}

/// A handler's "Resource not found" ([`ErrorObject::resource_not_found`], -32002) in the code
/// of the request's revision, as the server's own answer for an unknown URI: 2026-07-28 must
/// not emit -32002 and says -32602 (spec 2026-07-28 `basic/index` "Error codes").
fn not_found_for_version(mut e: ErrorObject, version: ProtocolVersion) -> ErrorObject {
    if e.code == ErrorCode::RESOURCE_NOT_FOUND {
        e.code = super::core_methods::resource_not_found("", version).code;
    }
    e
}

/// A concrete resource and how to read it.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) read: ErasedRead,
    /// Who sees and reads it (scopes, tags, hidden).
    pub(crate) guard: super::access::Guard,
    /// What it needs of the rest of the server (an MCP App view: the extension).
    pub(crate) needs: super::registrations::Needs,
    /// What brought it when it came with others (a mount's prefix, an upstream's name).
    pub(crate) source: Option<std::sync::Arc<str>>,
    /// Told when a session subscribes to it.
    pub(crate) on_subscribe: Option<OnSubscribe>,
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDef")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

impl ResourceDef {
    /// A resource read by `handler`.
    pub fn new<H: ResourceHandler<T>, T>(uri: impl Into<String>, name: impl Into<String>, handler: H) -> Self {
        ResourceDef {
            resource: Resource::new(uri, name),
            read: erase(handler),
            guard: Default::default(),
            needs: Default::default(),
            source: None,
            on_subscribe: None,
        }
    }

    /// A resource with fixed text content.
    pub fn text(uri: impl Into<String>, name: impl Into<String>, mime: &str, text: impl Into<String>) -> Self {
        let uri = uri.into();
        let contents = ResourceContents::text(uri.clone(), Some(mime), text);
        let def = Self::fixed(uri, name, contents);
        def.mime_type(mime)
    }

    /// A resource with fixed binary content (given base64-encoded).
    pub fn blob(uri: impl Into<String>, name: impl Into<String>, mime: &str, blob_b64: impl Into<String>) -> Self {
        let uri = uri.into();
        let contents = ResourceContents::blob(uri.clone(), Some(mime), blob_b64);
        Self::fixed(uri, name, contents).mime_type(mime)
    }

    fn fixed(uri: String, name: impl Into<String>, contents: ResourceContents) -> Self {
        let result = ReadResourceResult::new(vec![contents]);
        Self::new(uri, name, move || std::future::ready(result.clone()))
    }

    /// Description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.resource.description = Some(d.into());
        self
    }

    /// Display title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.resource.title = Some(t.into());
        self
    }

    /// MIME type.
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.resource.mime_type = Some(m.into());
        self
    }

    /// Its `_meta`: metadata for hosts under namespaced keys (e.g. an MCP App's `ui`, or a
    /// vendor's `com.example/…`), sent with the definition in every list. Replaces earlier
    /// `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.resource.meta = Some(meta);
        self
    }

    /// The wire description.
    pub fn resource(&self) -> &Resource {
        &self.resource
    }
}

/// A resource template (RFC 6570) and how to read URIs that match it.
#[derive(Clone)]
pub struct ResourceTemplateDef {
    pub(crate) template: ResourceTemplate,
    pub(crate) matcher: UriTemplate,
    pub(crate) read: ErasedRead,
    pub(crate) completions: BTreeMap<String, CompletionFn>,
    /// Who sees and reads it (scopes, tags, hidden).
    pub(crate) guard: super::access::Guard,
    /// What brought it when it came with others (a mount's prefix, an upstream's name).
    pub(crate) source: Option<std::sync::Arc<str>>,
    /// Completions answered elsewhere (an upstream's), instead of by `completions`.
    pub(crate) forward_complete: Option<super::completion::ForwardComplete>,
    /// Told when a session subscribes to a URI it matches.
    pub(crate) on_subscribe: Option<OnSubscribe>,
}

impl std::fmt::Debug for ResourceTemplateDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplateDef")
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplateDef {
    /// A template read by `handler`, which reads the matched variables through [`Args<T>`](super::Args)
    /// or [`RawArgs`](super::RawArgs).
    pub fn new<H: ResourceHandler<T>, T>(
        uri_template: &str,
        name: impl Into<String>,
        handler: H,
    ) -> Result<Self, TemplateError> {
        Ok(ResourceTemplateDef {
            matcher: UriTemplate::parse(uri_template)?,
            template: ResourceTemplate::new(uri_template, name),
            read: erase(handler),
            completions: BTreeMap::new(),
            guard: Default::default(),
            source: None,
            forward_complete: None,
            on_subscribe: None,
        })
    }

    /// Description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.template.description = Some(d.into());
        self
    }

    /// Display title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.template.title = Some(t.into());
        self
    }

    /// MIME type of the resources it yields.
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.template.mime_type = Some(m.into());
        self
    }

    /// Its `_meta`: metadata for hosts under namespaced keys (e.g. an MCP App's `ui`, or a
    /// vendor's `com.example/…`), sent with the definition in every list. Replaces earlier
    /// `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.template.meta = Some(meta);
        self
    }

    /// Offer completions for a template variable (`completion/complete` with `ref/resource`).
    pub fn complete(mut self, variable: impl Into<String>, completer: impl Completer) -> Self {
        self.completions.insert(variable.into(), Arc::new(completer));
        self
    }

    /// The wire description.
    pub fn template(&self) -> &ResourceTemplate {
        &self.template
    }
}
