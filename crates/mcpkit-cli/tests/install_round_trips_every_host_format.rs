//! `mcpkit install` / `uninstall` against realistic configuration files of every host, each with
//! other entries and keys in it: the entry is written in the host's own shape (exact-content
//! snapshots), a second identical install changes nothing, an update replaces the entry where it
//! is, the previous file is kept as FILE.bak, and uninstalling gives back the original bytes.

use crate::support;

use std::path::{Path, PathBuf};

struct Case {
    host: &'static str,
    /// Under tests/fixtures/hosts/.
    fixture: &'static str,
    /// False for Claude Desktop, whose file launches stdio servers only.
    http: bool,
}

const CASES: &[Case] = &[
    Case {
        host: "claude-desktop",
        fixture: "claude_desktop_config.json",
        http: false,
    },
    Case {
        host: "claude-code",
        fixture: "mcp.json",
        http: true,
    },
    Case {
        host: "claude-code",
        fixture: "claude.json",
        http: true,
    },
    Case {
        host: "cursor",
        fixture: "cursor/mcp.json",
        http: true,
    },
    Case {
        host: "vscode",
        fixture: "vscode/mcp.json",
        http: true,
    },
    Case {
        host: "windsurf",
        fixture: "mcp_config.json",
        http: true,
    },
    Case {
        host: "codex",
        fixture: "config.toml",
        http: true,
    },
    Case {
        host: "gemini",
        fixture: "gemini/settings.json",
        http: true,
    },
    Case {
        host: "goose",
        fixture: "goose/config.yaml",
        http: true,
    },
    Case {
        host: "zed",
        fixture: "zed/settings.json",
        http: true,
    },
];

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(rel)
}

/// Run mcpkit with `--config PATH` (before any `-- CMD`), in a scratch home and directory so
/// that no default path can reach a real configuration file.
fn mcpkit(args: &[&str], config: &Path) -> (bool, String, String) {
    support::hosts::mcpkit_config(args, config)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn bak(p: &Path) -> PathBuf {
    PathBuf::from(format!("{}.bak", p.display()))
}

/// A name for the snapshot: host plus fixture file, e.g. `claude-code_claude.json`.
fn snap(case: &Case, step: &str) -> String {
    format!("{}_{}_{step}", case.host, case.fixture.replace('/', "_"))
}

const STDIO: &[&str] = &[
    "--env",
    "RUST_LOG=info",
    "--env",
    "DEMO_MODE=fast",
    "--",
    "/opt/demo/bin/demo",
    "--stdio",
];

#[test]
fn every_host_format_round_trips() {
    for case in CASES {
        let dir = tempfile::tempdir().unwrap();
        let file_name = Path::new(case.fixture).file_name().unwrap();
        let config = dir.path().join(file_name);
        let original = read(&fixture(case.fixture));
        std::fs::write(&config, &original).unwrap();

        // Install: the new entry in the host's shape, every other byte as it was.
        let mut install = vec!["install", "demo", "--host", case.host];
        install.extend_from_slice(STDIO);
        let (ok, stdout, stderr) = mcpkit(&install, &config);
        assert!(ok, "{}: {stderr}", case.host);
        assert!(stdout.starts_with("installed demo in "), "{stdout}");
        let installed = read(&config);
        insta::assert_snapshot!(snap(case, "installed"), installed);
        assert_eq!(
            read(&bak(&config)),
            original,
            "{}: the backup is the file before",
            case.host
        );

        // The same install again: nothing written, the backup untouched.
        let (ok, stdout, stderr) = mcpkit(&install, &config);
        assert!(ok, "{stderr}");
        assert!(stdout.contains("nothing changed"), "{}: {stdout}", case.host);
        assert_eq!(read(&config), installed);
        assert_eq!(read(&bak(&config)), original);

        // The entry lists with the others, in the file's order.
        let (ok, stdout, stderr) = mcpkit(&["list-installed", "--host", case.host], &config);
        assert!(ok, "{stderr}");
        let words: Vec<Vec<&str>> = stdout.lines().map(|l| l.split_whitespace().collect()).collect();
        let last = words.iter().rposition(|w| w.first() == Some(&"demo"));
        assert_eq!(last, Some(words.len() - 1), "{}: listed last: {stdout}", case.host);
        assert_eq!(words[words.len() - 1], ["demo", "/opt/demo/bin/demo", "--stdio"]);

        // An update to an HTTP server: replaced where it is, the stdio keys gone.
        let previous = if case.http {
            let update = [
                "install",
                "demo",
                "--host",
                case.host,
                "--url",
                "https://demo.example.com/mcp",
                "--header",
                "Authorization=Bearer ${DEMO_TOKEN}",
            ];
            let (ok, stdout, stderr) = mcpkit(&update, &config);
            assert!(ok, "{}: {stderr}", case.host);
            assert!(stdout.starts_with("updated demo in "), "{stdout}");
            let updated = read(&config);
            insta::assert_snapshot!(snap(case, "updated_to_http"), updated);
            assert_eq!(read(&bak(&config)), installed);
            updated
        } else {
            installed
        };

        // Uninstall: the original file, byte for byte.
        let (ok, stdout, stderr) = mcpkit(&["uninstall", "demo", "--host", case.host], &config);
        assert!(ok, "{}: {stderr}", case.host);
        assert!(stdout.starts_with("uninstalled demo from "), "{stdout}");
        assert_eq!(
            read(&config),
            original,
            "{}: uninstall gives back the original",
            case.host
        );
        assert_eq!(read(&bak(&config)), previous);

        // Uninstalling what is not there: nothing to do.
        let (ok, stdout, _) = mcpkit(&["uninstall", "demo", "--host", case.host], &config);
        assert!(ok);
        assert!(stdout.contains("nothing changed"), "{stdout}");
        assert_eq!(read(&config), original);
    }
}

#[test]
fn claude_desktop_refuses_an_http_server_and_names_the_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("claude_desktop_config.json");
    let original = read(&fixture("claude_desktop_config.json"));
    std::fs::write(&config, &original).unwrap();
    let (ok, _, stderr) = mcpkit(
        &[
            "install",
            "remote",
            "--host",
            "claude-desktop",
            "--url",
            "https://example.com/mcp",
        ],
        &config,
    );
    assert!(!ok);
    assert!(
        stderr.contains("-- mcpkit proxy --server https://example.com/mcp"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert_eq!(read(&config), original);
    assert!(!bak(&config).exists());
}

#[test]
fn a_missing_file_is_created_with_only_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    for (host, name) in [
        ("vscode", "mcp.json"),
        ("codex", "config.toml"),
        ("goose", "config.yaml"),
        ("zed", "settings.json"),
    ] {
        let config = dir.path().join(host).join(name);
        let (ok, _, stderr) = mcpkit(
            &["install", "demo", "--host", host, "--", "/opt/demo/bin/demo"],
            &config,
        );
        assert!(ok, "{stderr}");
        insta::assert_snapshot!(format!("{host}_created"), read(&config));
        assert!(!bak(&config).exists());
    }
}
