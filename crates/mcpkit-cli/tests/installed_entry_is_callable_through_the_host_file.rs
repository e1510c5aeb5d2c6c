//! What `mcpkit install` writes, `mcpkit call --server NAME --config PATH` reads back: the
//! reference server installed into a realistic file of every host format (stdio), and an HTTP
//! entry in each format that has one (`url`, Windsurf's `serverUrl`, Gemini's `httpUrl`, Codex's
//! TOML, Goose's YAML `uri`), each called for real.

use crate::support;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

const FORMATS: &[(&str, &str)] = &[
    ("claude-desktop", "claude_desktop_config.json"),
    ("claude-code", "mcp.json"),
    ("claude-code", "claude.json"),
    ("cursor", "cursor/mcp.json"),
    ("vscode", "vscode/mcp.json"),
    ("windsurf", "mcp_config.json"),
    ("codex", "config.toml"),
    ("gemini", "gemini/settings.json"),
    ("goose", "goose/config.yaml"),
    ("zed", "zed/settings.json"),
];

fn copy_fixture(rel: &str, dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(rel);
    let to = dir.join(Path::new(rel).file_name().unwrap());
    std::fs::copy(from, &to).unwrap();
    to
}

fn mcpkit(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("mcpkit").unwrap();
    c.env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir)
        .env("CODEX_HOME", dir)
        .env_remove("RUST_LOG")
        .current_dir(dir)
        .timeout(std::time::Duration::from_secs(60));
    c
}

fn call_echo(dir: &Path, config: &Path, name: &str, message: &str) -> String {
    let out = mcpkit(dir)
        .args(["call", "echo"])
        .arg(format!("message={message}"))
        .args(["--server", name, "--config"])
        .arg(config)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn an_installed_stdio_entry_is_called_in_every_format() {
    for (host, fixture) in FORMATS {
        let dir = tempfile::tempdir().unwrap();
        let config = copy_fixture(fixture, dir.path());
        mcpkit(dir.path())
            .args(["install", "reference", "--host", host, "--config"])
            .arg(&config)
            .args(["--env", "MCPKIT_EXAMPLE=1", "--"])
            .arg(env!("CARGO_BIN_EXE_mcpkit"))
            .arg("serve")
            .assert()
            .success();
        let said = call_echo(dir.path(), &config, "reference", &format!("through {host}"));
        assert_eq!(said, format!("through {host}\n"), "{host} {fixture}");
    }
}

#[test]
fn an_installed_http_entry_is_called_in_every_format_that_has_one() {
    let server = support::HttpServer::start();
    let url = format!("{}/mcp", server.base);
    for (host, fixture) in FORMATS.iter().filter(|(h, _)| *h != "claude-desktop") {
        let dir = tempfile::tempdir().unwrap();
        let config = copy_fixture(fixture, dir.path());
        mcpkit(dir.path())
            .args(["install", "remote", "--host", host, "--config"])
            .arg(&config)
            .args(["--url", &url, "--header", "X-Installed-By=mcpkit"])
            .assert()
            .success();
        let said = call_echo(dir.path(), &config, "remote", &format!("over http via {host}"));
        assert_eq!(said, format!("over http via {host}\n"), "{host} {fixture}");
    }
}

#[test]
fn list_installed_reads_every_format_of_a_home() {
    let dir = tempfile::tempdir().unwrap();
    for (host, _) in FORMATS {
        mcpkit(dir.path())
            .args(["install", "reference", "--host", host, "--"])
            .arg(env!("CARGO_BIN_EXE_mcpkit"))
            .arg("serve")
            .assert()
            .success();
    }
    let out = mcpkit(dir.path()).args(["list-installed", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut hosts: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"] == "reference")
        .map(|r| r["host"].as_str().unwrap())
        .collect();
    hosts.dedup();
    assert_eq!(
        hosts,
        [
            "claude-desktop",
            "claude-code",
            "cursor",
            "vscode",
            "windsurf",
            "codex",
            "gemini",
            "goose",
            "zed"
        ]
    );
}
