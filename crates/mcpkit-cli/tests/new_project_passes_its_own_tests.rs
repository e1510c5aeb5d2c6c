//! `mcpkit new demo --mcpkit-path <this checkout>` writes a project whose own `cargo test`
//! passes as generated, for the stdio server and for `--http`.
//!
//! Kept cheap: the workspace's `Cargo.lock` is copied into the project first (the same
//! dependency versions), and the project builds into the workspace's own target directory with
//! the settings the workspace gives its dependencies (no debug info), so every dependency whose
//! features are the same in both is the workspace build's artifact: on a workspace already
//! built, 22 of the project's 112 crates compile (mcpkit itself and the crates whose features
//! differ). Cargo releases its build lock while tests run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn shared_target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

fn generate_and_test(name: &str, extra: &[&str]) {
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .arg("new")
        .arg(&project)
        .args(extra)
        .arg("--mcpkit-path")
        .arg(workspace())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cargo_toml = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let crate_dir = workspace().join("crates/mcpkit");
    assert!(
        cargo_toml.contains(&format!("path = \"{}\"", crate_dir.display())),
        "{cargo_toml}"
    );
    std::fs::copy(workspace().join("Cargo.lock"), project.join("Cargo.lock")).unwrap();

    let started = Instant::now();
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["test", "--offline"])
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        // Debug info is not what this checks, and the workspace builds its dependencies
        // without it (`[profile.dev.package."*"]`): the same flags, so the same artifacts.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "cargo test in the generated {name}:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("test result: ok. 4 passed"), "{stdout}");
    eprintln!("generated {name} {extra:?}: cargo test took {:.1}s", took.as_secs_f64());
}

#[test]
fn a_new_stdio_project_passes_its_tests() {
    generate_and_test("demo", &[]);
}

#[test]
fn a_new_http_project_passes_its_tests() {
    generate_and_test("demo-http", &["--http"]);
}
