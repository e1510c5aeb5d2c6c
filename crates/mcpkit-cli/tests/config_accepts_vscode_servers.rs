//! An MCP configuration file in VS Code's `.vscode/mcp.json` shape (the map is `servers`, with
//! `inputs` beside it) names servers just as one with `mcpServers` does.

use assert_cmd::Command;

#[test]
fn config_file_with_top_level_servers_as_vscode_writes_it_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mcp.json");
    std::fs::write(
        &cfg,
        serde_json::json!({
            "inputs": [],
            "servers": {
                "ref": {"type": "stdio", "command": env!("CARGO_BIN_EXE_mcpkit"), "args": ["serve"]}
            }
        })
        .to_string(),
    )
    .unwrap();
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .args(["call", "echo", "message=from vscode", "--server", "ref", "--config"])
        .arg(&cfg)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from vscode\n");
}
