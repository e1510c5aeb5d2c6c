//! VS Code reads `mcp.json` as JSON with comments. `mcpkit install` edits such a file in place:
//! the entry is added (or replaced, or removed) and every comment, blank line and trailing
//! comma of the rest stays; a second identical install changes nothing; uninstalling gives
//! back the original bytes; `list-installed` and `mcpkit call --config` read it. What is not
//! valid even as JSON with comments (single quotes, unquoted keys) is still refused.

use crate::support;

use std::path::Path;

use assert_cmd::Command;

fn fixture() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/vscode-jsonc/mcp.json"))
        .unwrap()
}

fn mcpkit(args: &[&str], config: &Path) -> (bool, String, String) {
    support::hosts::mcpkit_config(args, config)
}

#[test]
fn a_file_with_comments_is_edited_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    let original = fixture();
    std::fs::write(&config, &original).unwrap();

    let install = [
        "install",
        "demo",
        "--host",
        "vscode",
        "--env",
        "RUST_LOG=info",
        "--",
        "/opt/demo/bin/demo",
        "--stdio",
    ];
    let (ok, stdout, stderr) = mcpkit(&install, &config);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("installed demo in "), "{stdout}");
    let installed = std::fs::read_to_string(&config).unwrap();
    let entry = "\t\t\"demo\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"/opt/demo/bin/demo\",\n\t\t\t\"args\": [\"--stdio\"],\n\t\t\t\"env\": {\n\t\t\t\t\"RUST_LOG\": \"info\",\n\t\t\t},\n\t\t},\n";
    // Exactly the original with the entry added after the last one, in the file's style.
    let at = original.find("\t},\n}").unwrap();
    let expected = format!("{}{entry}{}", &original[..at], &original[at..]);
    assert_eq!(installed, expected);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mcp.json.bak")).unwrap(),
        original
    );

    let (ok, stdout, _) = mcpkit(&install, &config);
    assert!(ok);
    assert!(stdout.contains("nothing changed"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), installed);

    let (ok, stdout, stderr) = mcpkit(&["list-installed", "--host", "vscode"], &config);
    assert!(ok, "{stderr}");
    let names: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["github", "memory", "demo"], "{stdout}");

    // An update to HTTP replaces the entry where it is; the comments above the others stay.
    let update = [
        "install",
        "demo",
        "--host",
        "vscode",
        "--url",
        "https://demo.example.com/mcp",
    ];
    let (ok, stdout, stderr) = mcpkit(&update, &config);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("updated demo in "), "{stdout}");
    let updated = std::fs::read_to_string(&config).unwrap();
    assert!(
        updated.contains("\"url\": \"https://demo.example.com/mcp\""),
        "{updated}"
    );
    assert!(!updated.contains("/opt/demo/bin/demo"), "{updated}");
    for kept in [
        "// Servers for this workspace.",
        "/* The hosted GitHub server. */",
        "// kept in the OS keychain",
        "\n\n\t\t// Local memory",
    ] {
        assert!(updated.contains(kept), "{kept:?} lost: {updated}");
    }

    let (ok, stdout, stderr) = mcpkit(&["uninstall", "demo", "--host", "vscode"], &config);
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("uninstalled demo from "), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        original,
        "uninstall gives back the original"
    );
}

#[test]
fn a_file_with_comments_is_readable_by_call_config() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(&config, fixture()).unwrap();
    let mcpkit_bin = env!("CARGO_BIN_EXE_mcpkit");
    let (ok, _, stderr) = mcpkit(
        &["install", "reference", "--host", "vscode", "--", mcpkit_bin, "serve"],
        &config,
    );
    assert!(ok, "{stderr}");
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .args(["call", "--server", "reference", "--config"])
        .arg(&config)
        .args(["echo", "message=hello"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("hello"), "{stdout}");
}

#[test]
fn what_is_not_json_with_comments_is_still_refused() {
    for (content, place) in [
        ("{\n\t// c\n\t\"servers\": {'a': {}}\n}\n", ":3:14: "),
        ("{\n\tservers: {}\n}\n", ":2:2: "),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("mcp.json");
        std::fs::write(&config, content).unwrap();
        let (ok, _, stderr) = mcpkit(&["install", "demo", "--host", "vscode", "--", "/opt/demo"], &config);
        assert!(!ok);
        let expected = format!("{}{place}not valid JSON with comments: ", config.display());
        assert!(stderr.contains(&expected), "expected {expected:?} in {stderr}");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), content);
    }
}
