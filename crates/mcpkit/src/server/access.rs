//! Who sees and calls each catalogue item: the scopes an item requires
//! (`ToolDef::require_scopes`, …), a server-wide decision hook ([`ServerBuilder::authorize`]),
//! and per-session visibility (items hidden until a session shows them, or hidden for one
//! session: [`RequestContext::show`], [`RequestContext::hide`]).
//!
//! An item a request may not see is neither listed nor found (a call is answered as for an
//! unknown item). An item it may see but lacks the scopes for is listed only with the scopes; a
//! call gets [`ErrorCode::INSUFFICIENT_SCOPE`] naming them, over HTTP with `403` and, behind
//! the OAuth resource layer, the step-up `WWW-Authenticate` challenge. A server using none of
//! this pays one flag test per list and call.

use std::sync::{Arc, Mutex};

use mcpkit_types::schema::{
    CacheScope, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt, Resource,
    ResourceTemplate, Tool,
};
use mcpkit_types::{ErrorCode, ErrorObject};
use serde_json::json;
use serde_json::value::RawValue;

use super::backend::{SessionUpdate, VisibilityRule};
use super::{cursor_for, page_of, CacheHint};
use super::{
    Call, Change, PromptDef, RequestContext, ResourceDef, ResourceTemplateDef, ServerBuilder, Snapshot, ToolDef,
};
use crate::engine::HandlerResult;
use crate::transport::AuthInfo;
use crate::wire::to_raw;

/// A catalogue item, as the [`ServerBuilder::authorize`] hook is asked about it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Item<'a> {
    /// A tool.
    Tool(&'a Tool),
    /// A prompt.
    Prompt(&'a Prompt),
    /// A resource.
    Resource(&'a Resource),
    /// A resource template.
    Template(&'a ResourceTemplate),
}

impl Item<'_> {
    /// "tool NAME", "prompt NAME", "resource URI" or "resource template URI-TEMPLATE".
    fn describe(&self) -> String {
        let kind = match self {
            Item::Tool(_) => "tool",
            Item::Prompt(_) => "prompt",
            Item::Resource(_) => "resource",
            Item::Template(_) => "resource template",
        };
        format!("{kind} {}", self.name())
    }

    /// The item's name: a tool's or prompt's name, a resource's URI, a template's URI template.
    pub fn name(&self) -> &str {
        match self {
            Item::Tool(t) => &t.name,
            Item::Prompt(p) => &p.name,
            Item::Resource(r) => &r.uri,
            Item::Template(t) => &t.uri_template,
        }
    }
}

/// The server-wide decision beyond scopes: whether the caller (its verified token, when
/// authorization is on) may see and use the item.
pub(crate) type Hook = Arc<dyn Fn(Option<&AuthInfo>, Item<'_>) -> bool + Send + Sync>;

/// What an item's definition says about who sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Guard {
    /// Scopes the caller's token must carry.
    pub(crate) scopes: Vec<String>,
    /// Labels that per-session visibility selects by.
    pub(crate) tags: Vec<String>,
    /// Hidden until a session shows it.
    pub(crate) hidden: bool,
}

impl Guard {
    /// Whether the item is seen and used by everyone (unless a session hides it).
    pub(crate) fn is_open(&self) -> bool {
        self.scopes.is_empty() && !self.hidden
    }
}

/// The `require_scopes`, `tags` and `hidden` setters of each definition.
macro_rules! guard_setters {
    ($($def:ty),*) => {$(
        impl $def {
            /// Scopes a caller's token must carry to use this item (all of them). A caller
            /// without them does not see it listed, and using it is refused with
            /// `insufficient_scope` (HTTP 403 with the step-up challenge behind the OAuth
            /// resource layer). Without authorization (stdio) no caller has scopes.
            pub fn require_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
                self.guard.scopes = scopes.into_iter().map(Into::into).collect();
                self
            }

            /// Labels for per-session visibility ([`RequestContext::show`]: `Select::tag`).
            pub fn tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
                self.guard.tags = tags.into_iter().map(Into::into).collect();
                self
            }

            /// Hidden from every session until one shows it ([`RequestContext::show`]).
            pub fn hidden(mut self) -> Self {
                self.guard.hidden = true;
                self
            }
        }
    )*};
}

guard_setters!(ToolDef, PromptDef, ResourceDef, ResourceTemplateDef);

/// Which items a visibility change applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Select {
    /// The item of this name (a tool's or prompt's name, a resource's URI, a template's URI
    /// template).
    Name(String),
    /// Every item with this tag.
    Tag(String),
}

impl Select {
    /// The item named `name`.
    pub fn name(name: impl Into<String>) -> Select {
        Select::Name(name.into())
    }

    /// The items tagged `tag`.
    pub fn tag(tag: impl Into<String>) -> Select {
        Select::Tag(tag.into())
    }

    fn matches(&self, name: &str, guard: &Guard) -> bool {
        match self {
            Select::Name(n) => n == name,
            Select::Tag(t) => guard.tags.iter().any(|g| g == t),
        }
    }
}

/// One session's visibility changes, in order (the last that matches an item decides).
#[derive(Debug, Default)]
pub(crate) struct Visibility {
    rules: Mutex<Vec<(Select, bool)>>,
}

/// At most this many changes are kept per session (the oldest go first): a session cannot grow
/// the server's memory by toggling.
const MAX_RULES: usize = 64;

impl Visibility {
    /// Add a change; the rules now, as a session record keeps them.
    fn push(&self, select: Select, show: bool) -> Vec<VisibilityRule> {
        let mut rules = crate::sync::lock(&self.rules);
        rules.retain(|(s, _)| s != &select);
        if rules.len() >= MAX_RULES {
            rules.remove(0);
        }
        rules.push((select, show));
        rules
            .iter()
            .map(|(s, show)| {
                let (by_tag, value) = match s {
                    Select::Name(n) => (false, n.clone()),
                    Select::Tag(t) => (true, t.clone()),
                };
                VisibilityRule {
                    by_tag,
                    value,
                    show: *show,
                }
            })
            .collect()
    }

    /// Take the rules a session record (or another instance) says.
    #[cfg(feature = "http-server")]
    pub(crate) fn replace(&self, kept: &[VisibilityRule]) {
        let rules = kept.iter().rev().take(MAX_RULES).rev().map(|r| {
            let select = if r.by_tag {
                Select::Tag(r.value.clone())
            } else {
                Select::Name(r.value.clone())
            };
            (select, r.show)
        });
        *crate::sync::lock(&self.rules) = rules.collect();
    }

    /// Whether an item is visible to this session.
    fn shows(&self, name: &str, guard: &Guard) -> bool {
        let rules = crate::sync::lock(&self.rules);
        rules
            .iter()
            .rev()
            .find(|(s, _)| s.matches(name, guard))
            .map_or(!guard.hidden, |(_, show)| *show)
    }
}

/// What a request may do with an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// See and use it.
    Allowed,
    /// Neither see nor use it: as if it did not exist.
    Hidden,
    /// See it only with these scopes; use refused with `insufficient_scope`.
    NeedsScopes(Vec<String>),
}

impl Call {
    /// Whether any item may be refused to this request: only then are lists filtered.
    pub(crate) fn filters_items(&self) -> bool {
        self.snapshot().guarded || self.server.inner.authorize.is_some() || self.session.visibility.get().is_some()
    }

    /// What this request may do with `item`, guarded by `guard`.
    pub(crate) fn verdict(&self, item: Item<'_>, guard: &Guard) -> Verdict {
        let name = item.name();
        let visible = match self.session.visibility.get() {
            Some(v) => v.shows(name, guard),
            None => !guard.hidden,
        };
        let auth = self.extensions.get::<AuthInfo>();
        if !visible
            || self
                .server
                .inner
                .authorize
                .as_ref()
                .is_some_and(|hook| !hook(auth, item))
        {
            return Verdict::Hidden;
        }
        if guard.scopes.iter().all(|s| auth.is_some_and(|a| a.scopes.contains(s))) {
            Verdict::Allowed
        } else {
            Verdict::NeedsScopes(guard.scopes.clone())
        }
    }
}

/// The lists that items `select` names are in.
fn kinds_selected(snap: &Snapshot, select: &Select) -> Vec<Change> {
    let c = &snap.catalog;
    let mut kinds = Vec::new();
    if c.tools.iter().any(|t| select.matches(&t.tool.name, &t.guard)) {
        kinds.push(Change::Tools);
    }
    if c.prompts.iter().any(|p| select.matches(&p.prompt.name, &p.guard)) {
        kinds.push(Change::Prompts);
    }
    if c.resources.iter().any(|r| select.matches(&r.resource.uri, &r.guard))
        || c.templates
            .iter()
            .any(|t| select.matches(&t.template.uri_template, &t.guard))
    {
        kinds.push(Change::Resources);
    }
    kinds
}

impl Call {
    /// Refuse this request's use of `item` if it may not use it: as unknown (`unknown`) when it
    /// may not see it, with [`ErrorCode::INSUFFICIENT_SCOPE`] when it lacks scopes.
    pub(crate) fn check_access(
        &self,
        item: Item<'_>,
        guard: &Guard,
        unknown: impl FnOnce() -> ErrorObject,
    ) -> Result<(), ErrorObject> {
        if !self.filters_items() {
            return Ok(());
        }
        match self.verdict(item, guard) {
            Verdict::Allowed => Ok(()),
            Verdict::Hidden => Err(unknown()),
            Verdict::NeedsScopes(scopes) => Err(ErrorObject::new(
                ErrorCode::INSUFFICIENT_SCOPE,
                format!(
                    "The {} needs the scopes {}; the token lacks some",
                    item.describe(),
                    scopes.join(" ")
                ),
            )
            .with_data(json!({ "requiredScopes": scopes }))),
        }
    }
}

/// A list method's items.
#[derive(Debug, Clone, Copy)]
pub(crate) enum List {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl List {
    /// The pre-serialized pages everyone sees when nothing is filtered.
    pub(crate) fn pages(self, snap: &Snapshot) -> &[Box<RawValue>] {
        match self {
            List::Tools => &snap.tool_pages,
            List::Resources => &snap.resource_pages,
            List::Templates => &snap.template_pages,
            List::Prompts => &snap.prompt_pages,
        }
    }
}

/// One page of the items of `list` that `call` may use (those it may only see with scopes it
/// lacks are left out), built for this request. Its caching hint is private: another caller
/// may see another list.
pub(crate) fn visible_page(call: &Call, list: List, cursor: Option<&str>) -> HandlerResult {
    let snap = call.snapshot();
    let c = &snap.catalog;
    let allowed = |item: Item<'_>, guard: &Guard| call.verdict(item, guard) == Verdict::Allowed;
    let page = match cursor {
        None => 0,
        Some(cur) => page_of(cur).ok_or_else(|| ErrorObject::invalid_params(format!("Invalid cursor: {cur:?}")))?,
    };
    let size = call.page_size();
    let raw = match list {
        List::Tools => {
            let all = snap.live_tools.iter().map(|&i| &c.tools[i]);
            let visible = all.filter(|d| allowed(Item::Tool(&d.tool), &d.guard)).map(|d| &d.tool);
            let (tools, next_cursor) = one_page(visible, page, size);
            to_raw(&ListToolsResult {
                tools,
                next_cursor,
                ..Default::default()
            })?
        }
        List::Prompts => {
            let all = snap.live_prompts.iter().map(|&i| &c.prompts[i]);
            let visible = all
                .filter(|d| allowed(Item::Prompt(&d.prompt), &d.guard))
                .map(|d| &d.prompt);
            let (prompts, next_cursor) = one_page(visible, page, size);
            to_raw(&ListPromptsResult {
                prompts,
                next_cursor,
                ..Default::default()
            })?
        }
        List::Resources => {
            let all = c.resources.iter();
            let visible = all
                .filter(|d| allowed(Item::Resource(&d.resource), &d.guard))
                .map(|d| &d.resource);
            let (resources, next_cursor) = one_page(visible, page, size);
            to_raw(&ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            })?
        }
        List::Templates => {
            let all = c.templates.iter();
            let visible = all
                .filter(|d| allowed(Item::Template(&d.template), &d.guard))
                .map(|d| &d.template);
            let (resource_templates, next_cursor) = one_page(visible, page, size);
            to_raw(&ListResourceTemplatesResult {
                resource_templates,
                next_cursor,
                ..Default::default()
            })?
        }
    };
    let hint = CacheHint {
        scope: CacheScope::Private,
        ..call.server.inner.cache.lists
    };
    call.finish(raw, Some(hint))
}

/// Page `page` of `items` (`size` each), and the cursor of the next page if any item follows.
fn one_page<'a, T: Clone + 'a>(
    items: impl Iterator<Item = &'a T>,
    page: usize,
    size: usize,
) -> (Vec<T>, Option<String>) {
    let mut rest = items.skip(page * size);
    let this: Vec<T> = rest.by_ref().take(size).cloned().collect();
    let next = rest.next().is_some().then(|| cursor_for(page + 1));
    (this, next)
}

impl ServerBuilder {
    /// Decide beyond scopes who sees and uses each item: `hook` gets the caller's verified token
    /// (`None` without authorization) and the item; `false` hides the item from that caller (not
    /// listed, not found). Called per item on every list and use: keep it quick.
    pub fn authorize(mut self, hook: impl Fn(Option<&AuthInfo>, Item<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.authorize = Some(Arc::new(hook));
        self
    }
}

impl RequestContext {
    /// Show the items `select` names to this session (hidden ones included), then tell the
    /// session (only it) that its lists changed. Handshake-era sessions only: a stateless-era
    /// request has no session to remember it (nothing is changed then).
    pub fn show(&self, select: Select) {
        self.change_visibility(select, true);
    }

    /// Hide the items `select` names from this session (they are neither listed nor found for
    /// it), then tell the session that its lists changed.
    pub fn hide(&self, select: Select) {
        self.change_visibility(select, false);
    }

    fn change_visibility(&self, select: Select, show: bool) {
        if self.protocol_version().era() == mcpkit_types::Era::Stateless {
            return;
        }
        let kinds = kinds_selected(&self.server.snapshot(), &select);
        let rules = self.session.visibility.get_or_init(Box::default).push(select, show);
        // Kept with the session record: any instance serving the session sees the same.
        self.session.changed(SessionUpdate::Visibility(rules));
        for change in kinds {
            let _ = self.peer.notify_raw(change.method(), None::<&serde_json::Value>);
        }
    }
}
