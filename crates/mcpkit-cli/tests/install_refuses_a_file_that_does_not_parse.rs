//! A configuration file that is not valid JSON or TOML (or whose servers key is not a map) is
//! refused by `install`, `uninstall` and `list-installed` with its line and column; nothing is
//! written, and no backup is made.

use crate::support;

use std::path::Path;

fn run(args: &[&str], config: &Path, home: &Path) -> (Option<i32>, String) {
    let run = support::hosts::mcpkit(args, Some(config), home, home);
    (run.code, run.stderr)
}

#[test]
fn broken_files_are_refused_with_line_and_column_and_left_alone() {
    let cases: &[(&str, &str, &str, &str)] = &[
        // host, file name, content, the place the message must name
        (
            "claude-code",
            ".mcp.json",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n",
            ":3:26: not valid JSON: ",
        ),
        (
            "cursor",
            "mcp.json",
            "{\n  \"mcpServers\": {\n",
            ":3:0: not valid JSON: ",
        ),
        // VS Code's files may have comments (edited in place since), not single quotes.
        (
            "vscode",
            "mcp.json",
            "{\n\t// a comment\n\t\"servers\": {'a': {}}\n}\n",
            ":3:14: not valid JSON with comments: ",
        ),
        (
            "codex",
            "config.toml",
            "model = \"gpt-5\"\n\n[mcp_servers.a]\ncommand = \n",
            ":4:11: not valid TOML: ",
        ),
        (
            "goose",
            "config.yaml",
            "GOOSE_MODE: auto\nextensions:\n  a: [x\n  b: 1\n",
            ":4:4: not valid YAML: ",
        ),
        (
            "goose",
            "config.yaml",
            "extensions:\n- name: a\n",
            ": \"extensions\" is not a map of extensions",
        ),
        (
            "windsurf",
            "mcp_config.json",
            "{\"mcpServers\": [\"not\", \"a\", \"map\"]}",
            ": \"mcpServers\" is not an object",
        ),
    ];
    for (host, name, content, place) in cases {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join(name);
        std::fs::write(&config, content).unwrap();
        let commands: [&[&str]; 3] = [
            &["install", "demo", "--host", host, "--", "/opt/demo"],
            &["uninstall", "a", "--host", host],
            &["list-installed", "--host", host],
        ];
        for args in commands {
            let (code, stderr) = run(args, &config, dir.path());
            assert_eq!(code, Some(2), "{host} {args:?}: {stderr}");
            let expected = format!("{}{place}", config.display());
            assert!(
                stderr.contains(&expected),
                "{host} {args:?}: expected {expected:?} in {stderr}"
            );
            assert_eq!(std::fs::read_to_string(&config).unwrap(), *content, "{host}: unchanged");
        }
        assert!(
            stderr_mentions_nothing_changed(&config, host, dir.path()),
            "{host}: the install refusal says nothing was changed"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{host}: no backup or temp file: {names:?}");
    }
}

fn stderr_mentions_nothing_changed(config: &Path, host: &str, home: &Path) -> bool {
    let (_, stderr) = run(&["install", "demo", "--host", host, "--", "/opt/demo"], config, home);
    stderr.contains("nothing was changed")
}
