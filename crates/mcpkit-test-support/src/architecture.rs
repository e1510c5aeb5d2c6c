//! The folder graph of a crate's sources, for the architecture test: which folder imports which,
//! and the cycles among them. A folder is a directory under `src/`; a file belongs to the folder
//! it sits in, and a path it names (`use`, or a `crate::`/`super::`/`self::`/child-module path
//! anywhere in its code) to the deepest folder that path enters. The crate root is no folder of
//! one job but the crate itself: there each file is a node of its own (`lib.rs`/`main.rs` is
//! `""`, `error.rs` is `error.rs`), so `main.rs` may call the subcommands that use `args.rs`.
//! A parent's `mod child;` is no import, and neither is a re-export (`pub use`, `pub(crate)
//! use`, …) of an item of the folder's own subtree: that is how a parent shows its children's
//! items. A re-export from anywhere else is an import (the folder now offers, and so depends
//! on, another folder's item).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// One import of a folder by another: where it is written and what it names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Import {
    /// The file that writes the path, relative to `src/`.
    pub file: String,
    /// The path as written, `::`-joined.
    pub path: String,
}

/// The folders of one crate's `src/` and the imports between them.
#[derive(Debug, Default)]
pub struct FolderGraph {
    /// `from` folder → `to` folder → the imports that make the edge.
    pub edges: BTreeMap<String, BTreeMap<String, BTreeSet<Import>>>,
}

impl FolderGraph {
    /// Scans every `.rs` file under `src`.
    pub fn scan(src: &Path) -> FolderGraph {
        let mut graph = FolderGraph::default();
        let mut files = Vec::new();
        collect(src, &mut files);
        for file in files {
            let rel = file.strip_prefix(src).unwrap_or(&file).to_path_buf();
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
            let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", file.display()));
            let module = module_of(&rel);
            let from = node_of_file(&rel);
            let mut visitor = Paths {
                src,
                module: module.clone(),
                found: Vec::new(),
                re_export: false,
            };
            visitor.visit_file(&ast);
            for (path, resolved, re_export) in visitor.found {
                let to = node_of_module(src, &resolved);
                let own_subtree = from.is_empty() || to == from || to.starts_with(&format!("{from}/"));
                if to != from && !(re_export && own_subtree) {
                    graph
                        .edges
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .insert(Import {
                            file: rel.to_string_lossy().into_owned(),
                            path: path.join("::"),
                        });
                }
            }
        }
        graph
    }

    /// Every pair of folders that import each other, directly or through others: each strongly
    /// connected group of more than one folder, with the edges inside it.
    pub fn cycles(&self) -> Vec<BTreeMap<(String, String), BTreeSet<Import>>> {
        let nodes: BTreeSet<&String> = self
            .edges
            .keys()
            .chain(self.edges.values().flat_map(|m| m.keys()))
            .collect();
        let reach = |start: &String| -> BTreeSet<String> {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start.clone()];
            while let Some(n) = todo.pop() {
                for next in self.edges.get(&n).into_iter().flat_map(|m| m.keys()) {
                    if seen.insert(next.clone()) {
                        todo.push(next.clone());
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
        let mut done = BTreeSet::new();
        let mut groups = Vec::new();
        for n in &nodes {
            if done.contains(*n) {
                continue;
            }
            let group: BTreeSet<String> = nodes
                .iter()
                .filter(|m| reaches[*n].contains(**m) && reaches[**m].contains(*n))
                .map(|m| (*m).clone())
                .collect();
            if group.len() > 1 {
                let mut inside = BTreeMap::new();
                for a in &group {
                    for (b, imports) in self.edges.get(a).into_iter().flatten() {
                        if group.contains(b) {
                            inside.insert((a.clone(), b.clone()), imports.clone());
                        }
                    }
                }
                groups.push(inside);
            }
            done.extend(group);
            done.insert((*n).clone());
        }
        groups
    }

    /// The cycles as text a failing test can print: each edge of each cycle with one place that
    /// makes it.
    pub fn describe_cycles(&self) -> String {
        let mut out = String::new();
        for (i, group) in self.cycles().iter().enumerate() {
            out.push_str(&format!("cycle {}:\n", i + 1));
            for ((a, b), imports) in group {
                let first = imports.iter().next();
                let (file, path) = first.map_or(("?", "?"), |i| (&i.file, &i.path));
                let more = imports.len().saturating_sub(1);
                out.push_str(&format!(
                    "  {} -> {}   ({file}: {path}{})\n",
                    shown(a),
                    shown(b),
                    if more > 0 {
                        format!(", and {more} more")
                    } else {
                        String::new()
                    }
                ));
            }
        }
        out
    }
}

fn shown(folder: &str) -> &str {
    if folder.is_empty() {
        "(crate root)"
    } else {
        folder
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `server/http/post.rs` → `[server, http, post]`; `server/mod.rs` → `[server]`; `lib.rs` → `[]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

fn node_of_file(rel: &Path) -> String {
    match rel
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
    {
        root if root.is_empty() => match rel.to_string_lossy().as_ref() {
            "lib.rs" | "main.rs" => String::new(),
            file => file.to_owned(),
        },
        folder => folder,
    }
}

/// The deepest folder under `src` that the module path enters, or the root file it names.
fn node_of_module(src: &Path, module: &[String]) -> String {
    let Some(first) = module.first() else {
        return String::new();
    };
    if src.join(format!("{first}.rs")).is_file() {
        return format!("{first}.rs");
    }
    let mut best = String::new();
    for n in 1..=module.len() {
        let dir = module[..n].join("/");
        if src.join(&dir).is_dir() {
            best = dir;
        } else {
            break;
        }
    }
    best
}

/// Collects the crate-internal paths of one file, resolved to absolute module paths.
struct Paths<'a> {
    src: &'a Path,
    /// The module the visitor is in (inline `mod x { … }` blocks push onto it).
    module: Vec<String>,
    /// Each path as written, resolved, and whether a re-export wrote it.
    found: Vec<(Vec<String>, Vec<String>, bool)>,
    /// Inside a `pub use`.
    re_export: bool,
}

impl Paths<'_> {
    /// `segments` as written, from the current module; `None` when it leaves the crate.
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut m = self.module.clone();
                m.pop();
                m
            }
            // A child module of the current one, named without `self::`.
            name if self.is_child(name) => {
                let mut m = self.module.clone();
                m.push(name.to_owned());
                m
            }
            _ => return None,
        };
        let mut rest = &segments[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn is_child(&self, name: &str) -> bool {
        let dir = self.src.join(self.module.join("/"));
        dir.join(format!("{name}.rs")).is_file() || dir.join(name).join("mod.rs").is_file()
    }

    fn record(&mut self, segments: Vec<String>) {
        if let Some(resolved) = self.resolve(&segments) {
            self.found.push((segments, resolved, self.re_export));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                if n.ident != "self" {
                    path.push(n.ident.to_string());
                }
                self.record(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.record(path);
            }
            syn::UseTree::Glob(_) => self.record(prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.re_export = !matches!(item.vis, syn::Visibility::Inherited);
        self.use_tree(&mut Vec::new(), &item.tree);
        self.re_export = false;
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            self.record(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {
        // `pub(in crate::x)` names a scope, not an item it uses.
    }
}
