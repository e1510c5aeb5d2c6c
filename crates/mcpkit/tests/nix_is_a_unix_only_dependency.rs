//! Portability: `nix` (signals, file status flags) exists only on unix, so `mcpkit` and
//! `mcpkit-cli` may depend on it only in their `[target.'cfg(unix)'.dependencies]` table (or,
//! for unix-only tests, `[target.'cfg(unix)'.dev-dependencies]`); anywhere else it breaks the
//! Windows build, where most desktop hosts launch stdio servers.
//! (`scripts/test.sh` type-checks that build when the Windows target is installed.)

const UNIX_ONLY: [&str; 2] = [
    "[target.'cfg(unix)'.dependencies]",
    "[target.'cfg(unix)'.dev-dependencies]",
];

/// The table header (`[...]`) each `nix` dependency line of a manifest sits under.
fn nix_tables(manifest: &str) -> Vec<String> {
    let mut table = String::new();
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.to_owned();
        } else if line.split(['=', '.']).next().map(str::trim) == Some("nix") {
            found.push(table.clone());
        }
    }
    found
}

#[test]
fn nix_is_a_unix_only_dependency_of_mcpkit_and_the_cli() {
    let manifests = [
        ("mcpkit", include_str!("../Cargo.toml")),
        ("mcpkit-cli", include_str!("../../mcpkit-cli/Cargo.toml")),
    ];
    for (name, manifest) in manifests {
        let tables = nix_tables(manifest);
        assert!(!tables.is_empty(), "{name}: no nix dependency found (update this test)");
        for table in tables {
            assert!(
                UNIX_ONLY.contains(&table.as_str()),
                "{name}: nix is declared under {table}"
            );
        }
    }
}

#[test]
fn the_workspace_declares_no_shared_nix() {
    let tables = nix_tables(include_str!("../../../Cargo.toml"));
    assert!(tables.is_empty(), "the workspace declares nix under {tables:?}");
}
