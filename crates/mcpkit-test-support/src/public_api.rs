//! The public API of a crate as its sources declare it: every path a user can name an item by
//! (`pub` modules from the crate root, `pub` items in them, `pub use` re-exports followed to the
//! item they show), read with syn. What the public-API test snapshots (`public-api.txt` beside
//! each published crate's `Cargo.toml`) and what it checks: each item at one module path.
//!
//! Items are functions, types, traits, constants, statics and exported macros; methods, fields
//! and variants ride with their type. `#[cfg(test)]` code is left out; every feature is read in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What a public path names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// An item of this crate, by the module path it is declared in and its name.
    Item {
        /// `fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `macro`, `union`.
        kind: &'static str,
        /// Where it is declared, `::`-joined from the crate root (`server::tool::ToolDef`).
        declared: String,
    },
    /// An item of another crate, re-exported (`tokio_util::sync::CancellationToken`).
    External(String),
}

/// One crate's public paths.
#[derive(Debug, Default)]
pub struct PublicApi {
    /// Each item and the public paths that name it (`hidden`: a path through a
    /// `#[doc(hidden)]` module or item).
    pub items: BTreeMap<Origin, BTreeSet<(String, bool)>>,
}

impl PublicApi {
    /// Read the crate `name` whose root file is `root` (`src/lib.rs`); paths start with `name`.
    pub fn read(name: &str, root: &Path) -> PublicApi {
        let mut modules = Vec::new();
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        load(&mut modules, root, dir, vec![name.to_owned()], None, true, false);
        let mut api = PublicApi::default();
        let mut seen = BTreeSet::new();
        walk(&modules, 0, name.to_owned(), false, &mut api, &mut seen);
        api
    }

    /// Items named by at least one path that is not hidden.
    pub fn visible_items(&self) -> usize {
        self.items
            .values()
            .filter(|paths| paths.iter().any(|(_, h)| !h))
            .count()
    }

    /// The items shown at more than one module path (not counting the crate root's flat
    /// re-exports of what a first server and client need, nor hidden paths), with those paths.
    pub fn items_at_several_paths(&self) -> Vec<(Origin, Vec<String>)> {
        self.items
            .iter()
            .filter_map(|(origin, paths)| {
                let module_paths: Vec<String> = paths
                    .iter()
                    .filter(|(p, h)| !h && p.matches("::").count() > 1)
                    .map(|(p, _)| p.clone())
                    .collect();
                (module_paths.len() > 1).then(|| (origin.clone(), module_paths))
            })
            .collect()
    }

    /// The snapshot text: one line per path, sorted, `path  kind  (declared at …)`.
    pub fn snapshot(&self) -> String {
        let mut lines = BTreeSet::new();
        for (origin, paths) in &self.items {
            for (path, hidden) in paths {
                let what = match origin {
                    Origin::Item { kind, declared } if declared == path => (*kind).to_string(),
                    Origin::Item { kind, declared } => format!("{kind} = {declared}"),
                    Origin::External(e) => format!("re-export of {e}"),
                };
                let hidden = if *hidden { "  #[doc(hidden)]" } else { "" };
                lines.insert(format!("{path}  {what}{hidden}"));
            }
        }
        let mut out = String::new();
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}

/// A module as read: its items, its `use`s and its child modules.
#[derive(Debug, Default)]
struct Module {
    path: Vec<String>,
    parent: Option<usize>,
    public: bool,
    hidden: bool,
    /// Public items: name → (kind, hidden).
    items: BTreeMap<String, (&'static str, bool)>,
    /// Private items too (a `pub use` may show an item of a private module).
    all_items: BTreeMap<String, &'static str>,
    children: BTreeMap<String, usize>,
    /// `use` bindings: (public, hidden, name bound or `None` for a glob, source path).
    uses: Vec<(bool, bool, Option<String>, Vec<String>)>,
}

fn hidden_attr(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("doc") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "hidden"))
}

fn cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s), ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

/// Read module `path` from `file`; `dir` is where its child modules' files are.
fn load(
    modules: &mut Vec<Module>,
    file: &Path,
    dir: PathBuf,
    path: Vec<String>,
    parent: Option<usize>,
    public: bool,
    hidden: bool,
) -> usize {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", file.display()));
    load_items(modules, &ast.items, dir, path, parent, public, hidden)
}

fn load_items(
    modules: &mut Vec<Module>,
    items: &[syn::Item],
    dir: PathBuf,
    path: Vec<String>,
    parent: Option<usize>,
    public: bool,
    hidden: bool,
) -> usize {
    let id = modules.len();
    modules.push(Module {
        path: path.clone(),
        parent,
        public,
        hidden,
        ..Default::default()
    });
    for item in items {
        let (name, kind, vis, attrs): (String, &'static str, Option<&syn::Visibility>, &[syn::Attribute]) = match item {
            syn::Item::Fn(i) => (i.sig.ident.to_string(), "fn", Some(&i.vis), &i.attrs),
            syn::Item::Struct(i) => (i.ident.to_string(), "struct", Some(&i.vis), &i.attrs),
            syn::Item::Enum(i) => (i.ident.to_string(), "enum", Some(&i.vis), &i.attrs),
            syn::Item::Union(i) => (i.ident.to_string(), "union", Some(&i.vis), &i.attrs),
            syn::Item::Trait(i) => (i.ident.to_string(), "trait", Some(&i.vis), &i.attrs),
            syn::Item::Type(i) => (i.ident.to_string(), "type", Some(&i.vis), &i.attrs),
            syn::Item::Const(i) => (i.ident.to_string(), "const", Some(&i.vis), &i.attrs),
            syn::Item::Static(i) => (i.ident.to_string(), "static", Some(&i.vis), &i.attrs),
            syn::Item::Macro(i) => match &i.ident {
                // An exported macro lives at the crate root, wherever it is written.
                Some(ident) if i.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
                    modules[0]
                        .items
                        .insert(ident.to_string(), ("macro", hidden_attr(&i.attrs)));
                    continue;
                }
                _ => continue,
            },
            syn::Item::Mod(m) => {
                if cfg_test(&m.attrs) {
                    continue;
                }
                let name = m.ident.to_string();
                let mut child_path = path.clone();
                child_path.push(name.clone());
                let child_hidden = hidden || hidden_attr(&m.attrs);
                let child = match &m.content {
                    Some((_, inner)) => load_items(
                        modules,
                        inner,
                        dir.join(&name),
                        child_path,
                        Some(id),
                        is_pub(&m.vis),
                        child_hidden,
                    ),
                    None => {
                        let file = match path_attr(&m.attrs) {
                            Some(p) => dir.join(p),
                            None if dir.join(format!("{name}.rs")).is_file() => dir.join(format!("{name}.rs")),
                            None => dir.join(&name).join("mod.rs"),
                        };
                        load(
                            modules,
                            &file,
                            dir.join(&name),
                            child_path,
                            Some(id),
                            is_pub(&m.vis),
                            child_hidden,
                        )
                    }
                };
                modules[id].children.insert(name, child);
                continue;
            }
            syn::Item::Use(u) => {
                if cfg_test(&u.attrs) {
                    continue;
                }
                let mut out = Vec::new();
                flatten(&u.tree, &mut Vec::new(), &mut out);
                for (name, source) in out {
                    modules[id]
                        .uses
                        .push((is_pub(&u.vis), hidden_attr(&u.attrs), name, source));
                }
                continue;
            }
            _ => continue,
        };
        if cfg_test(attrs) {
            continue;
        }
        modules[id].all_items.insert(name.clone(), kind);
        if vis.is_some_and(is_pub) {
            modules[id].items.insert(name, (kind, hidden_attr(attrs)));
        }
    }
    id
}

/// A use tree as (name bound, or `None` for a glob; full source path) pairs.
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Option<String>, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut source = prefix.clone();
            if n.ident == "self" {
                out.push((prefix.last().cloned(), source));
            } else {
                source.push(n.ident.to_string());
                out.push((Some(n.ident.to_string()), source));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut source = prefix.clone();
            if r.ident != "self" {
                source.push(r.ident.to_string());
            }
            if r.rename != "_" {
                out.push((Some(r.rename.to_string()), source));
            }
        }
        syn::UseTree::Glob(_) => out.push((None, prefix.clone())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// What a path names, seen from one module.
#[derive(Debug, Clone)]
enum Target {
    Module(usize),
    Item(Origin),
}

/// Resolve `source` (as written in module `from`).
fn resolve(modules: &[Module], from: usize, source: &[String], depth: usize) -> Option<Target> {
    if depth > 16 {
        return None;
    }
    let (first, rest) = source.split_first()?;
    let start = match first.as_str() {
        "crate" => 0,
        // The crate's own name, as `$crate` paths in exported macros spell it.
        name if name == modules[0].path[0] => 0,
        "self" => from,
        "super" => modules[from].parent?,
        name => match lookup(modules, from, name, depth) {
            Some(Target::Module(m)) => m,
            Some(Target::Item(o)) if rest.is_empty() => return Some(Target::Item(o)),
            Some(Target::Item(_)) => return None,
            // Not in this crate: another crate's item (`tokio_util::sync::CancellationToken`).
            None => return Some(Target::Item(Origin::External(source.join("::")))),
        },
    };
    let mut at = start;
    for (i, seg) in rest.iter().enumerate() {
        if seg == "super" {
            at = modules[at].parent?;
            continue;
        }
        match lookup(modules, at, seg, depth)? {
            Target::Module(m) => at = m,
            Target::Item(o) if i + 1 == rest.len() => return Some(Target::Item(o)),
            Target::Item(_) => return None,
        }
    }
    Some(Target::Module(at))
}

/// The name `name` in module `m`: a child module, an item, or what a `use` binds to it.
fn lookup(modules: &[Module], m: usize, name: &str, depth: usize) -> Option<Target> {
    let module = &modules[m];
    if let Some(&child) = module.children.get(name) {
        return Some(Target::Module(child));
    }
    if let Some(kind) = module.all_items.get(name) {
        let mut declared = module.path.clone();
        declared.push(name.to_owned());
        return Some(Target::Item(Origin::Item {
            kind,
            declared: declared.join("::"),
        }));
    }
    for (_, _, bound, source) in &module.uses {
        if bound.as_deref() == Some(name) {
            return resolve(modules, m, source, depth + 1);
        }
    }
    for (_, _, bound, source) in &module.uses {
        if bound.is_none() {
            if let Some(Target::Module(g)) = resolve(modules, m, source, depth + 1) {
                if let Some(t) = lookup(modules, g, name, depth + 1) {
                    return Some(t);
                }
            }
        }
    }
    None
}

/// Record module `m`'s public items and public child modules under `prefix`.
fn show_contents(
    modules: &[Module],
    m: usize,
    prefix: &str,
    hidden: bool,
    api: &mut PublicApi,
    seen: &mut BTreeSet<(usize, String)>,
) {
    let module = &modules[m];
    for (name, (kind, item_hidden)) in &module.items {
        let mut declared = module.path.clone();
        declared.push(name.clone());
        let origin = Origin::Item {
            kind,
            declared: declared.join("::"),
        };
        api.items
            .entry(origin)
            .or_default()
            .insert((format!("{prefix}::{name}"), hidden || *item_hidden));
    }
    for (name, &child) in &module.children {
        if modules[child].public {
            walk(
                modules,
                child,
                format!("{prefix}::{name}"),
                hidden || modules[child].hidden,
                api,
                seen,
            );
        }
    }
}

/// Record every public path under module `m`, reachable as `prefix`.
fn walk(
    modules: &[Module],
    m: usize,
    prefix: String,
    hidden: bool,
    api: &mut PublicApi,
    seen: &mut BTreeSet<(usize, String)>,
) {
    if !seen.insert((m, prefix.clone())) {
        return;
    }
    let join = |name: &str| format!("{prefix}::{name}");
    let module = &modules[m];
    show_contents(modules, m, &prefix, hidden, api, seen);
    for (public, use_hidden, bound, source) in &module.uses {
        if !public {
            continue;
        }
        let hidden = hidden || *use_hidden;
        match (bound, resolve(modules, m, source, 0)) {
            (Some(name), Some(Target::Module(target))) => walk(modules, target, join(name), hidden, api, seen),
            (Some(name), Some(Target::Item(origin))) => {
                api.items.entry(origin).or_default().insert((join(name), hidden));
            }
            (None, Some(Target::Module(target))) => {
                // A glob: every public item and module of the target, as if written here.
                show_contents(modules, target, &prefix, hidden, api, seen);
            }
            (None, Some(Target::Item(Origin::External(e)))) => {
                api.items
                    .entry(Origin::External(format!("{e}::*")))
                    .or_default()
                    .insert((join("*"), hidden));
            }
            _ => {}
        }
    }
}
