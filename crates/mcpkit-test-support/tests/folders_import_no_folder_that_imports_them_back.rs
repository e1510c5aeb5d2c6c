//! The architecture test: in every crate of the workspace, no folder of `src/` imports a folder
//! that imports it back, directly or through others (ARCHITECTURE.md, "The layout"). A cycle
//! fails here naming each edge and one `use` that makes it.

use std::path::Path;

use mcpkit_test_support::architecture::FolderGraph;

fn workspace_sources() -> Vec<std::path::PathBuf> {
    workspace_sources_of(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

fn workspace_sources_of(root: &Path) -> Vec<std::path::PathBuf> {
    let mut sources: Vec<_> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path().join("src"))
        .chain([root.join("conformance/src")])
        .filter(|src| src.is_dir())
        .collect();
    sources.sort();
    sources
}

#[test]
fn no_crate_has_a_folder_cycle() {
    let sources = workspace_sources();
    assert!(sources.len() >= 8, "expected every crate's src/, found {sources:?}");
    let mut report = String::new();
    for src in &sources {
        let cycles = FolderGraph::scan(src).describe_cycles();
        if !cycles.is_empty() {
            report.push_str(&format!("{}:\n{cycles}", src.display()));
        }
    }
    assert!(report.is_empty(), "folders that import each other:\n{report}");
}

/// Every import between two folders of a cycle, for whoever untangles one:
/// `MCPKIT_ARCHITECTURE_DUMP=1 cargo test -p mcpkit-test-support --test behaviour folders --
/// --nocapture` (`MCPKIT_ARCHITECTURE_DUMP=/path/to/checkout` for another checkout).
#[test]
fn dump_the_imports_of_cycles_when_asked() {
    let Some(dump) = std::env::var_os("MCPKIT_ARCHITECTURE_DUMP") else {
        return;
    };
    let sources = match Path::new(&dump) {
        root if root.is_dir() => workspace_sources_of(root),
        _ => workspace_sources(),
    };
    for src in sources {
        eprintln!(
            "{}: {} folder cycles",
            src.display(),
            FolderGraph::scan(&src).cycles().len()
        );
        for group in FolderGraph::scan(&src).cycles() {
            for ((a, b), imports) in group {
                for i in imports {
                    eprintln!("{} | {a} -> {b} | {} | {}", src.display(), i.file, i.path);
                }
            }
        }
    }
}

#[test]
fn a_cycle_is_found_and_named() {
    let dir = std::env::temp_dir().join(format!("mcpkit-architecture-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a/inner")).unwrap();
    std::fs::create_dir_all(src.join("b")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\npub use a::A;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod inner;\npub use inner::A;\n").unwrap();
    // a/inner → b through a `use` group, b → a through a path in code: one cycle.
    std::fs::write(
        src.join("a/inner/mod.rs"),
        "use crate::b::{self, B};\npub struct A(B);\n",
    )
    .unwrap();
    std::fs::write(
        src.join("b/mod.rs"),
        "pub struct B;\nfn f() -> Option<super::a::inner::A> { None }\n",
    )
    .unwrap();
    let graph = FolderGraph::scan(&src);
    let text = graph.describe_cycles();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(graph.cycles().len(), 1, "{text}");
    assert!(text.contains("a/inner -> b   (a/inner/mod.rs: crate::b"), "{text}");
    assert!(text.contains("b -> a/inner   (b/mod.rs: super::a::inner::A"), "{text}");
}

#[test]
fn re_exports_and_one_way_imports_are_no_cycle() {
    let dir = std::env::temp_dir().join(format!("mcpkit-architecture-ok-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("low")).unwrap();
    std::fs::create_dir_all(src.join("high")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod low;\nmod high;\npub use high::H;\n").unwrap();
    std::fs::create_dir_all(src.join("high/part")).unwrap();
    std::fs::write(src.join("low/mod.rs"), "pub struct L;\n").unwrap();
    // A parent shows its child's item and the child uses its parent: no cycle.
    std::fs::write(
        src.join("high/mod.rs"),
        "mod part;\npub use part::P;\nuse crate::low::L;\npub struct H(L);\n",
    )
    .unwrap();
    std::fs::write(src.join("high/part/mod.rs"), "pub struct P(super::H);\n").unwrap();
    let graph = FolderGraph::scan(&src);
    assert!(graph.cycles().is_empty(), "{}", graph.describe_cycles());
    assert!(graph.edges["high"].contains_key("low"), "{:?}", graph.edges);
    // A re-export of another folder's item is an import of it: now a cycle.
    std::fs::write(src.join("low/mod.rs"), "pub struct L;\npub use crate::high::H;\n").unwrap();
    let graph = FolderGraph::scan(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(graph.cycles().len(), 1, "{}", graph.describe_cycles());
}
