//! [`ServerBuilder::mount`]: another [`Server`] of this process served under a prefix.
//!
//! The mounted server's handlers run as they are, with the request's context (its session,
//! progress, logging, sampling, elicitation and roots, input rounds on the stateless wire,
//! cancellation), except that [`RequestContext::server`](super::super::RequestContext::server)
//! and [`State`](super::super::State) are the mounted server's own. Its catalogue is copied
//! into the outer one and copied again whenever it changes.

use std::panic::Location;
use std::sync::{Arc, Weak};

use super::super::listen::Change;
use super::super::{Inner, PromptRequest, ResourceRequest, Server, ServerBuilder, ToolCall};
use super::items::{prefixed, Items};

impl ServerBuilder {
    /// Serve `server`'s tools, prompts, resources, resource templates and completions here,
    /// under `prefix`: its tool `add` is listed as `PREFIX_add` (and so for prompts); resources
    /// and templates keep their URIs; completions follow the prompt or template they name.
    ///
    /// The mounted server's handlers keep their extractors: [`State`](super::super::State) and
    /// [`RequestContext::server`](super::super::RequestContext::server) are the mounted
    /// server's, everything else (session, progress, logging, sampling, elicitation, roots,
    /// cancellation, input rounds) the request's. Tools, prompts or resources the mounted
    /// server adds or removes later appear here too, with `list_changed` sent to this server's
    /// sessions, and its `notifications/resources/updated` reach the sessions subscribed here.
    /// Its own middleware, extensions and server info are not used: this server's are.
    ///
    /// A name or URI used twice, or a prefixed name outside the spec's tool-name rules, makes
    /// [`ServerBuilder::try_build`] fail naming both registrations.
    #[track_caller]
    pub fn mount(mut self, prefix: impl Into<String>, server: Server) -> Self {
        let at = Location::caller();
        let prefix: Arc<str> = prefix.into().into();
        let items = items_of(&prefix, &server);
        self = items.register(self, at, &format!("mount {prefix:?}"));
        self.on_build
            .push(Box::new(move |outer: &Server| watch(outer, prefix, &server)));
        self
    }
}

/// Copy the mounted server's catalogue again whenever it changes (the outer server and the
/// mounted one are held weakly: the watcher lives inside the mounted server).
fn watch(outer: &Server, prefix: Arc<str>, mounted: &Server) {
    let outer: Weak<Inner> = Arc::downgrade(&outer.inner);
    let inner: Weak<Inner> = Arc::downgrade(&mounted.inner);
    mounted.watch(Arc::new(move |change: &Change| {
        let (Some(outer), Some(inner)) = (outer.upgrade(), inner.upgrade()) else {
            return false;
        };
        let outer = Server { inner: outer };
        match change {
            Change::ResourceUpdated(uri) => outer.notify_resource_updated(uri),
            _ => outer.replace_source(&prefix, items_of(&prefix, &Server { inner })),
        }
        true
    }));
}

/// What `mounted` lists now, named for the outer server and served by the mounted handlers.
fn items_of(prefix: &Arc<str>, mounted: &Server) -> Items {
    let snap = mounted.snapshot();
    let mut items = Items::default();
    for &i in &snap.live_tools {
        let mut def = snap.catalog.tools[i].clone();
        let original: Arc<str> = def.tool.name.as_str().into();
        let handler = def.handler.clone();
        let server = mounted.clone();
        let name = original.clone();
        def.handler = Arc::new(move |mut call: ToolCall| {
            call.name = name.clone();
            call.cx.server = server.clone();
            handler(call)
        });
        def.tool.name = prefixed(prefix, &original);
        // Switched in the mounted server: it is listed here only while on there.
        def.switch = None;
        items.tools.push((original.to_string(), def));
    }
    for &i in &snap.live_prompts {
        let mut def = snap.catalog.prompts[i].clone();
        let original = def.prompt.name.clone();
        let get = def.get.clone();
        let server = mounted.clone();
        let name = original.clone();
        def.get = Arc::new(move |mut request: PromptRequest| {
            request.name = name.clone();
            request.cx.server = server.clone();
            get(request)
        });
        def.prompt.name = prefixed(prefix, &original);
        def.switch = None;
        items.prompts.push((original, def));
    }
    let reading = |read: &super::super::resource::ErasedRead| {
        let read = read.clone();
        let server = mounted.clone();
        Arc::new(move |mut request: ResourceRequest| {
            request.cx.server = server.clone();
            read(request)
        }) as super::super::resource::ErasedRead
    };
    for def in &snap.catalog.resources {
        let mut def = def.clone();
        def.read = reading(&def.read);
        items.resources.push(def);
    }
    for def in &snap.catalog.templates {
        let mut def = def.clone();
        def.read = reading(&def.read);
        items.templates.push(def);
    }
    items.tagged(prefix)
}
