//! Claude Code's local scope (this project, this user only) lives in `~/.claude.json` under
//! `projects[DIR].mcpServers`, `DIR` being the project's absolute path. `mcpkit install --host
//! claude-code --scope local` writes there (with a temporary HOME and project directory): the
//! user-scope `mcpServers`, the other projects and the project's other keys stay as they were;
//! `list-installed` and `uninstall` read the same place; uninstalling gives back the file.

use crate::support;

use std::path::Path;

use serde_json::{json, Value};

fn fixture() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/claude.json")).unwrap()
}

/// Run mcpkit with HOME = `home` in the project directory `project` (no --config: the default
/// path is the one under test).
fn mcpkit(args: &[&str], home: &Path, project: &Path) -> (bool, String, String) {
    let run = support::hosts::mcpkit(args, None, home, project);
    (run.ok, run.stdout, run.stderr)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

const INSTALL: &[&str] = &[
    "install",
    "demo",
    "--host",
    "claude-code",
    "--scope",
    "local",
    "--",
    "/opt/demo/bin/demo",
    "--stdio",
];

#[test]
fn local_scope_is_the_projects_entry_of_the_user_file() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(project.path()).unwrap();
    let key = dir.to_str().unwrap();
    let file = home.path().join(".claude.json");
    // The fixture's project is this project: its other keys and its own entry must stay.
    let original = fixture().replace("/home/ada/src/app", key);
    std::fs::write(&file, &original).unwrap();
    let before = read_json(&file);

    let (ok, stdout, stderr) = mcpkit(INSTALL, home.path(), &dir);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("(claude-code, local scope)"), "{stdout}");
    let after = read_json(&file);
    let servers = &after["projects"][key]["mcpServers"];
    assert_eq!(
        servers["demo"],
        json!({"type": "stdio", "command": "/opt/demo/bin/demo", "args": ["--stdio"], "env": {}})
    );
    assert_eq!(
        servers["local-only"],
        before["projects"][key]["mcpServers"]["local-only"]
    );
    // Nothing else moved: without the new entry, the file is what it was.
    let mut without = after.clone();
    without["projects"][key]["mcpServers"]
        .as_object_mut()
        .unwrap()
        .shift_remove("demo");
    assert_eq!(without, before);

    let (ok, stdout, _) = mcpkit(INSTALL, home.path(), &dir);
    assert!(ok);
    assert!(stdout.contains("nothing changed"), "{stdout}");

    let (ok, stdout, stderr) = mcpkit(
        &["list-installed", "--host", "claude-code", "--scope", "local"],
        home.path(),
        &dir,
    );
    assert!(ok, "{stderr}");
    let names: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["local-only", "demo"], "{stdout}");
    let (ok, stdout, _) = mcpkit(
        &["list-installed", "--host", "claude-code", "--scope", "user"],
        home.path(),
        &dir,
    );
    assert!(ok);
    assert!(!stdout.contains("demo"), "the user scope does not see it: {stdout}");

    let (ok, stdout, stderr) = mcpkit(
        &["uninstall", "demo", "--host", "claude-code", "--scope", "local"],
        home.path(),
        &dir,
    );
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("uninstalled demo from "), "{stdout}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[test]
fn a_project_new_to_the_file_gets_its_entry() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(project.path()).unwrap();
    let key = dir.to_str().unwrap();
    let file = home.path().join(".claude.json");
    let original = fixture();
    std::fs::write(&file, &original).unwrap();
    let before = read_json(&file);

    let (ok, _, stderr) = mcpkit(INSTALL, home.path(), &dir);
    assert!(ok, "{stderr}");
    let after = read_json(&file);
    assert_eq!(
        after["projects"][key]["mcpServers"]["demo"]["command"],
        "/opt/demo/bin/demo"
    );
    assert_eq!(
        after["projects"]["/home/ada/src/app"],
        before["projects"]["/home/ada/src/app"]
    );
    assert_eq!(after["mcpServers"], before["mcpServers"]);
}

#[test]
fn only_claude_code_has_a_local_scope() {
    let home = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = mcpkit(
        &[
            "install",
            "demo",
            "--host",
            "cursor",
            "--scope",
            "local",
            "--",
            "/opt/demo",
        ],
        home.path(),
        home.path(),
    );
    assert!(!ok);
    assert!(
        stderr.contains("cursor has no local-scope configuration file"),
        "{stderr}"
    );
}

#[test]
fn a_local_entry_is_callable_from_its_project() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(project.path()).unwrap();
    let file = home.path().join(".claude.json");
    std::fs::write(&file, fixture()).unwrap();
    let mcpkit_bin = env!("CARGO_BIN_EXE_mcpkit");
    let install = [
        "install",
        "reference",
        "--host",
        "claude-code",
        "--scope",
        "local",
        "--",
        mcpkit_bin,
        "serve",
    ];
    let (ok, _, stderr) = mcpkit(&install, home.path(), &dir);
    assert!(ok, "{stderr}");
    let call = |cwd: &Path| {
        let config = file.to_str().unwrap();
        let args = [
            "call",
            "--server",
            "reference",
            "--config",
            config,
            "echo",
            "message=local",
        ];
        support::hosts::mcpkit(&args, None, home.path(), cwd)
    };
    let run = call(&dir);
    assert!(run.ok, "{}", run.stderr);
    assert!(run.stdout.contains("local"), "{}", run.stdout);
    // From another directory the entry is not there.
    let run = call(home.path());
    assert!(!run.ok);
    assert!(run.stderr.contains("no server named \"reference\""), "{}", run.stderr);
}
