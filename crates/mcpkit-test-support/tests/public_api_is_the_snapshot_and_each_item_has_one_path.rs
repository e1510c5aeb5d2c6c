//! The public API of each published crate is the snapshot kept beside its `Cargo.toml`
//! (`public-api.txt`), so a change to it shows in review; and each item is shown at one module
//! path (the crate root may show it once more, flat: what a first server and client need).
//! After a deliberate change: `MCPKIT_BLESS_PUBLIC_API=1 cargo test -p mcpkit-test-support
//! --test behaviour public_api`, then review the diff of the snapshots.

use std::path::Path;

use mcpkit_test_support::public_api::PublicApi;

const CRATES: [(&str, &str); 4] = [
    ("mcpkit_types", "mcpkit-types"),
    ("mcpkit", "mcpkit"),
    ("mcpkit_redis", "mcpkit-redis"),
    ("mcpkit_codegen", "mcpkit-codegen"),
];

fn crate_dir(folder: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(folder)
}

#[test]
fn each_crate_matches_its_snapshot() {
    let bless = std::env::var_os("MCPKIT_BLESS_PUBLIC_API").is_some();
    let mut stale = Vec::new();
    for (name, folder) in CRATES {
        let api = PublicApi::read(name, &crate_dir(folder).join("src/lib.rs"));
        let text = api.snapshot();
        let file = crate_dir(folder).join("public-api.txt");
        if bless {
            std::fs::write(&file, &text).unwrap();
            eprintln!("{name}: {} items, {} paths", api.visible_items(), text.lines().count());
        } else if std::fs::read_to_string(&file).unwrap_or_default() != text {
            stale.push(file.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "the public API changed; if that is intended, run with MCPKIT_BLESS_PUBLIC_API=1 and review: {stale:?}"
    );
}

/// The figures of another checkout, for a before/after comparison:
/// `MCPKIT_PUBLIC_API_OF=/path/to/checkout cargo test -p mcpkit-test-support --test behaviour
/// public_api -- --nocapture`.
#[test]
fn figures_of_another_checkout_when_asked() {
    let Some(root) = std::env::var_os("MCPKIT_PUBLIC_API_OF") else {
        return;
    };
    for (name, folder) in CRATES {
        let api = PublicApi::read(name, &Path::new(&root).join("crates").join(folder).join("src/lib.rs"));
        eprintln!(
            "{name}: {} items, {} paths, {} items at several module paths",
            api.visible_items(),
            api.snapshot().lines().count(),
            api.items_at_several_paths().len()
        );
    }
}

#[test]
fn each_item_is_at_one_module_path() {
    let mut report = String::new();
    for (name, folder) in CRATES {
        let api = PublicApi::read(name, &crate_dir(folder).join("src/lib.rs"));
        for (origin, paths) in api.items_at_several_paths() {
            report.push_str(&format!("{origin:?}\n    {}\n", paths.join("\n    ")));
        }
    }
    assert!(report.is_empty(), "items shown at several module paths:\n{report}");
}

#[test]
fn the_reader_follows_re_exports_and_leaves_private_items_out() {
    let dir = std::env::temp_dir().join(format!("mcpkit-public-api-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "pub mod outer;\nmod inner;\npub use inner::Shown;\npub fn top() {}\nfn private() {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("outer.rs"), "pub use crate::inner::Shown;\npub struct Own;\n").unwrap();
    std::fs::write(
        dir.join("inner/mod.rs"),
        "pub struct Shown;\npub(crate) struct Crate;\n",
    )
    .unwrap();
    let api = PublicApi::read("demo", &dir.join("lib.rs"));
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        api.snapshot(),
        "demo::Shown  struct = demo::inner::Shown\n\
         demo::outer::Own  struct\n\
         demo::outer::Shown  struct = demo::inner::Shown\n\
         demo::top  fn\n"
    );
    assert_eq!(api.visible_items(), 3);
    assert!(
        api.items_at_several_paths().is_empty(),
        "a root re-export is the allowed second path"
    );
}
