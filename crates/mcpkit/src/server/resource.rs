//! Resources and resource templates (spec: `server/resources`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcpkit_types::schema::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use mcpkit_types::ErrorObject;

use super::completion::{Completer, CompletionFn};
use super::context::RequestContext;
use super::uri_template::{TemplateError, UriTemplate};
use crate::engine::BoxFuture;

/// One `resources/read`, as seen by a resource handler.
#[derive(Debug)]
pub struct ResourceRequest {
    /// The URI asked for.
    pub uri: String,
    /// For templates: the values of the template's variables.
    pub variables: BTreeMap<String, String>,
    /// The request context.
    pub cx: RequestContext,
}

type ErasedRead = Arc<dyn Fn(ResourceRequest) -> BoxFuture<Result<ReadResourceResult, ErrorObject>> + Send + Sync>;

fn erase<F, Fut>(f: F) -> ErasedRead
where
    F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
{
    Arc::new(move |r| Box::pin(f(r)))
}

/// A concrete resource and how to read it.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) read: ErasedRead,
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
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        ResourceDef {
            resource: Resource::new(uri, name),
            read: erase(handler),
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
        Self::new(uri, name, move |_| std::future::ready(Ok(result.clone())))
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
}

impl std::fmt::Debug for ResourceTemplateDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplateDef")
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplateDef {
    /// A template read by `handler`, which receives the matched variables.
    pub fn new<F, Fut>(uri_template: &str, name: impl Into<String>, handler: F) -> Result<Self, TemplateError>
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        Ok(ResourceTemplateDef {
            matcher: UriTemplate::parse(uri_template)?,
            template: ResourceTemplate::new(uri_template, name),
            read: erase(handler),
            completions: BTreeMap::new(),
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
