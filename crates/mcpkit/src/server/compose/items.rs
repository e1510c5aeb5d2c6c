//! What a mount or an upstream brings to a server: its items, tagged with their source, put
//! into a builder (checked by `try_build`) or swapped into a running server's catalogue.

use std::panic::Location;
use std::sync::Arc;

use super::super::catalog::Catalog;
use super::super::listen::Change;
use super::super::registrations::{tool_name_rule, Kind};
use super::super::{PromptDef, ResourceDef, ResourceTemplateDef, Server, ServerBuilder, ToolDef};

/// The items one source (a mount's prefix, an upstream's name) serves, as the server lists
/// them (tools and prompts already named `SOURCE_<name>`), each with its original name.
#[derive(Clone, Default)]
pub(super) struct Items {
    pub(super) tools: Vec<(String, ToolDef)>,
    pub(super) prompts: Vec<(String, PromptDef)>,
    pub(super) resources: Vec<ResourceDef>,
    pub(super) templates: Vec<ResourceTemplateDef>,
}

/// The name an item `name` of source `source` is listed under.
pub(super) fn prefixed(source: &str, name: &str) -> String {
    format!("{source}_{name}")
}

impl Items {
    /// Mark every item as brought by `source`.
    pub(super) fn tagged(mut self, source: &Arc<str>) -> Self {
        let tag = Some(source.clone());
        self.tools.iter_mut().for_each(|(_, t)| t.source = tag.clone());
        self.prompts.iter_mut().for_each(|(_, p)| p.source = tag.clone());
        self.resources.iter_mut().for_each(|r| r.source = tag.clone());
        self.templates.iter_mut().for_each(|t| t.source = tag.clone());
        self
    }

    /// Make every item require `scopes` of the caller too (an upstream's: `Upstream::require_scopes`).
    #[cfg(feature = "client")]
    pub(super) fn requiring(mut self, scopes: &[String]) -> Self {
        if scopes.is_empty() {
            return self;
        }
        let add = |guard: &mut Vec<String>| {
            for scope in scopes {
                if !guard.contains(scope) {
                    guard.push(scope.clone());
                }
            }
        };
        self.tools.iter_mut().for_each(|(_, t)| add(&mut t.guard.scopes));
        self.prompts.iter_mut().for_each(|(_, p)| add(&mut p.guard.scopes));
        self.resources.iter_mut().for_each(|r| add(&mut r.guard.scopes));
        self.templates.iter_mut().for_each(|t| add(&mut t.guard.scopes));
        self
    }

    /// Register the items on `builder`, each remembered as made at `at` by `what` (`mount "a"`,
    /// `upstream "files"`), so that `try_build` names it in a collision or a bad name.
    pub(super) fn register(
        self,
        mut builder: ServerBuilder,
        at: &'static Location<'static>,
        what: &str,
    ) -> ServerBuilder {
        let by = |kind: Kind, original: &str| format!("{what}, its {} {original:?}", kind.word());
        for (original, tool) in self.tools {
            let b = by(Kind::Tool, &original);
            builder.registrations.add_by(Kind::Tool, &tool.tool.name, at, b);
            builder.catalog.tools.push(tool);
        }
        for (original, prompt) in self.prompts {
            let b = by(Kind::Prompt, &original);
            builder.registrations.add_by(Kind::Prompt, &prompt.prompt.name, at, b);
            builder.catalog.prompts.push(prompt);
        }
        for resource in self.resources {
            let b = by(Kind::Resource, &resource.resource.uri);
            builder
                .registrations
                .add_by(Kind::Resource, &resource.resource.uri, at, b);
            builder.catalog.resources.push(resource);
        }
        for template in self.templates {
            let b = by(Kind::Template, &template.template.uri_template);
            builder
                .registrations
                .add_by(Kind::Template, &template.template.uri_template, at, b);
            builder.catalog.templates.push(template);
        }
        builder
    }
}

/// Whether an item belongs to `source`.
fn of(tag: &Option<Arc<str>>, source: &str) -> bool {
    tag.as_deref() == Some(source)
}

impl Server {
    /// Put `items` in place of what `source` brought before (nothing: remove them), and tell
    /// the sessions about each list that changed. An item whose name or URI another item of
    /// the server already uses, or whose name breaks the tool-name rules, is left out with a
    /// warning.
    pub(super) fn replace_source(&self, source: &str, items: Items) {
        let mut changes = Vec::new();
        self.update(|c| changes = swap(c, source, items));
        for change in changes {
            self.broadcast(change, None, |_| true);
        }
    }

    /// Remove what `source` brought; whether it brought anything.
    #[cfg(feature = "client")]
    pub(super) fn remove_source(&self, source: &str) -> bool {
        let mut changes = Vec::new();
        self.update(|c| changes = swap(c, source, Items::default()));
        let any = !changes.is_empty();
        for change in changes {
            self.broadcast(change, None, |_| true);
        }
        any
    }
}

/// Swap the items of `source` in `catalog`; the lists whose content changed.
fn swap(catalog: &mut Catalog, source: &str, items: Items) -> Vec<Change> {
    let mut changes = Vec::new();

    let before: Vec<_> = catalog
        .tools
        .iter()
        .filter(|t| of(&t.source, source))
        .map(|t| t.tool.clone())
        .collect();
    catalog.tools.retain(|t| !of(&t.source, source));
    for (_, tool) in items.tools {
        let name = &tool.tool.name;
        if let Some(rule) = tool_name_rule(name) {
            tracing::warn!("{source}: leaving out tool {name:?}: the name {rule}");
        } else if catalog.tools.iter().any(|t| t.tool.name == *name) {
            tracing::warn!("{source}: leaving out tool {name:?}: another tool has that name");
        } else {
            catalog.tools.push(tool);
        }
    }
    let after: Vec<_> = catalog
        .tools
        .iter()
        .filter(|t| of(&t.source, source))
        .map(|t| t.tool.clone())
        .collect();
    if before != after {
        changes.push(Change::Tools);
    }

    let before: Vec<_> = catalog
        .prompts
        .iter()
        .filter(|p| of(&p.source, source))
        .map(|p| p.prompt.clone())
        .collect();
    catalog.prompts.retain(|p| !of(&p.source, source));
    for (_, prompt) in items.prompts {
        let name = &prompt.prompt.name;
        if catalog.prompts.iter().any(|p| p.prompt.name == *name) {
            tracing::warn!("{source}: leaving out prompt {name:?}: another prompt has that name");
        } else {
            catalog.prompts.push(prompt);
        }
    }
    let after: Vec<_> = catalog
        .prompts
        .iter()
        .filter(|p| of(&p.source, source))
        .map(|p| p.prompt.clone())
        .collect();
    if before != after {
        changes.push(Change::Prompts);
    }

    let listed = |c: &Catalog| {
        let r: Vec<_> = c
            .resources
            .iter()
            .filter(|r| of(&r.source, source))
            .map(|r| r.resource.clone())
            .collect();
        let t: Vec<_> = c
            .templates
            .iter()
            .filter(|t| of(&t.source, source))
            .map(|t| t.template.clone())
            .collect();
        (r, t)
    };
    let before = listed(catalog);
    catalog.resources.retain(|r| !of(&r.source, source));
    catalog.templates.retain(|t| !of(&t.source, source));
    for resource in items.resources {
        let uri = &resource.resource.uri;
        if catalog.resources.iter().any(|r| r.resource.uri == *uri) {
            tracing::warn!("{source}: leaving out resource {uri:?}: another resource has that URI");
        } else {
            catalog.resources.push(resource);
        }
    }
    for template in items.templates {
        let uri = &template.template.uri_template;
        if catalog.templates.iter().any(|t| t.template.uri_template == *uri) {
            tracing::warn!("{source}: leaving out resource template {uri:?}: another template has it");
        } else {
            catalog.templates.push(template);
        }
    }
    if before != listed(catalog) {
        changes.push(Change::Resources);
    }
    changes
}
