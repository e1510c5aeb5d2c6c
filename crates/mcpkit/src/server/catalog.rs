//! The catalogue: the registered items, and the snapshot of them that requests read (lookup
//! maps and list pages, built once per change).

use super::*;

/// What the server offers, as registered.
#[derive(Debug, Default, Clone)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<ToolDef>,
    pub(crate) resources: Vec<ResourceDef>,
    pub(crate) templates: Vec<ResourceTemplateDef>,
    pub(crate) prompts: Vec<PromptDef>,
    /// The states of switchable items set so far (see `switches.rs`).
    pub(crate) switches: backend::Switches,
}

impl Catalog {
    /// Whether any item requires scopes (a request may then be refused with 403).
    pub(crate) fn requires_scopes(&self) -> bool {
        self.tools.iter().any(|t| !t.guard.scopes.is_empty())
            || self.prompts.iter().any(|p| !p.guard.scopes.is_empty())
            || self.resources.iter().any(|r| !r.guard.scopes.is_empty())
            || self.templates.iter().any(|t| !t.guard.scopes.is_empty())
    }

    /// Whether any item is guarded (scopes, or hidden until shown): lists are then filtered
    /// per request.
    fn guarded(&self) -> bool {
        self.tools.iter().any(|t| !t.guard.is_open())
            || self.prompts.iter().any(|p| !p.guard.is_open())
            || self.resources.iter().any(|r| !r.guard.is_open())
            || self.templates.iter().any(|t| !t.guard.is_open())
    }
}

/// An immutable view of the catalogue with its lookup maps and pre-serialized list pages.
///
/// The maps and pages ([`Derived`], reached through `Deref`) are built on first use, once per
/// catalogue change: a server answers `initialize` without serializing its lists first.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub(crate) catalog: Catalog,
    pub(crate) page_size: usize,
    pub(crate) derived: std::sync::OnceLock<Derived>,
}

impl std::ops::Deref for Snapshot {
    type Target = Derived;
    fn deref(&self) -> &Derived {
        self.derived
            .get_or_init(|| Derived::build(&self.catalog, self.page_size))
    }
}

/// The lookup maps and list pages of a [`Snapshot`].
#[derive(Debug, Default)]
pub(crate) struct Derived {
    pub(crate) tool_index: HashMap<String, usize>,
    pub(crate) resource_index: HashMap<String, usize>,
    pub(crate) prompt_index: HashMap<String, usize>,
    pub(crate) tool_pages: Vec<Box<RawValue>>,
    pub(crate) resource_pages: Vec<Box<RawValue>>,
    pub(crate) template_pages: Vec<Box<RawValue>>,
    pub(crate) prompt_pages: Vec<Box<RawValue>>,
    /// Tool parameters mirrored into `Mcp-Param-*` headers (2026-07-28), by tool name; a tool
    /// whose annotations are invalid has none.
    #[cfg(feature = "http-server")]
    pub(crate) tool_headers: HashMap<String, Vec<mcpkit_types::headers::HeaderParam>>,
    /// Whether any tool or prompt is switchable (only then do lists ask a switch store).
    pub(crate) switchable: bool,
    /// The switchable items that are off, by switch key (`tool:NAME`, `prompt:NAME`).
    pub(crate) switched_off: std::collections::HashSet<String>,
    /// The tools and prompts listed (not switched off), by index in the catalogue, in order.
    pub(crate) live_tools: Vec<usize>,
    pub(crate) live_prompts: Vec<usize>,
    /// Whether any item is guarded ([`Catalog::guarded`]).
    pub(crate) guarded: bool,
}

fn pages<T: Clone, R: Serialize>(
    items: &[T],
    size: usize,
    build: impl Fn(Vec<T>, Option<String>) -> R,
) -> Vec<Box<RawValue>> {
    let chunks: Vec<&[T]> = if items.is_empty() {
        vec![&[]]
    } else {
        items.chunks(size.max(1)).collect()
    };
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .filter_map(|(i, chunk)| {
            let next = (i + 1 < n).then(|| cursor_for(i + 1));
            serde_json::value::to_raw_value(&build(chunk.to_vec(), next)).ok()
        })
        .collect()
}

pub(crate) fn cursor_for(page: usize) -> String {
    format!("mcpkit:{page}")
}

pub(crate) fn page_of(cursor: &str) -> Option<usize> {
    cursor.strip_prefix("mcpkit:")?.parse().ok()
}

impl Snapshot {
    /// The tool's parameters mirrored into `Mcp-Param-*` headers (none for most tools).
    #[cfg(feature = "http-server")]
    pub(crate) fn tool_header_params(&self, tool: &str) -> &[mcpkit_types::headers::HeaderParam] {
        self.tool_headers.get(tool).map_or(&[], Vec::as_slice)
    }

    /// Whether the resources capability is declared.
    pub(crate) fn offers_resources(&self) -> bool {
        !self.catalog.resources.is_empty() || !self.catalog.templates.is_empty()
    }

    /// Whether the prompts capability is declared.
    pub(crate) fn offers_prompts(&self) -> bool {
        !self.catalog.prompts.is_empty()
    }

    pub(crate) fn build(catalog: Catalog, page_size: usize) -> Self {
        Snapshot {
            catalog,
            page_size,
            derived: std::sync::OnceLock::new(),
        }
    }
}

impl Derived {
    fn build(catalog: &Catalog, page_size: usize) -> Self {
        let index = |names: Vec<&str>| names.into_iter().enumerate().map(|(i, n)| (n.to_owned(), i)).collect();
        // Switched-off items are neither listed nor found; their places in the catalogue stay.
        let live = switches::Live::of(catalog);
        let tools: Vec<_> = live.tools.iter().map(|(_, t)| t.tool.clone()).collect();
        let resources: Vec<_> = catalog.resources.iter().map(|r| r.resource.clone()).collect();
        let templates: Vec<_> = catalog.templates.iter().map(|t| t.template.clone()).collect();
        let prompts: Vec<_> = live.prompts.iter().map(|(_, p)| p.prompt.clone()).collect();
        #[cfg(feature = "http-server")]
        let tool_headers = live
            .tools
            .iter()
            .filter_map(|(_, t)| {
                let params = mcpkit_types::headers::header_params(&t.tool.input_schema).ok()?;
                (!params.is_empty()).then(|| (t.tool.name.clone(), params))
            })
            .collect();
        Derived {
            #[cfg(feature = "http-server")]
            tool_headers,
            tool_index: live.tools.iter().map(|(i, t)| (t.tool.name.clone(), *i)).collect(),
            resource_index: index(catalog.resources.iter().map(|r| r.resource.uri.as_str()).collect()),
            prompt_index: live.prompts.iter().map(|(i, p)| (p.prompt.name.clone(), *i)).collect(),
            live_tools: live.tools.iter().map(|(i, _)| *i).collect(),
            live_prompts: live.prompts.iter().map(|(i, _)| *i).collect(),
            guarded: catalog.guarded(),
            switchable: live.switchable,
            switched_off: live.switched_off,
            tool_pages: pages(&tools, page_size, |tools, next_cursor| ListToolsResult {
                tools,
                next_cursor,
                ..Default::default()
            }),
            resource_pages: pages(&resources, page_size, |resources, next_cursor| ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            }),
            template_pages: pages(&templates, page_size, |resource_templates, next_cursor| {
                ListResourceTemplatesResult {
                    resource_templates,
                    next_cursor,
                    ..Default::default()
                }
            }),
            prompt_pages: pages(&prompts, page_size, |prompts, next_cursor| ListPromptsResult {
                prompts,
                next_cursor,
                ..Default::default()
            }),
        }
    }
}

/// Remove the items matching `hit`; whether any was removed.
pub(super) fn remove<T>(items: &mut Vec<T>, hit: impl Fn(&T) -> bool) -> bool {
    let before = items.len();
    items.retain(|x| !hit(x));
    items.len() != before
}
