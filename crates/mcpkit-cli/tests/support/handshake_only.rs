//! The handshake-only stdio server of the CLI output tests (`tests/fixtures/servers/
//! handshake_only.sh`: refuses the `server/discover` probe with pages of stderr, as the Python
//! SDK v1 does), reached through a configuration file so that mcpkit names it by a short label.

use std::path::PathBuf;

/// A configuration file naming the server twice: `notes` (with its tool `tag`) and `bare`
/// (the same server declaring no `tools` capability). Keep the folder while it is used.
pub(crate) fn config() -> (tempfile::TempDir, PathBuf) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/servers/handshake_only.sh");
    let script = script.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    let config = serde_json::json!({"mcpServers": {
        "notes": {"command": "sh", "args": [script]},
        "bare": {"command": "sh", "args": [script], "env": {"NO_TOOLS": "1"}},
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    (dir, path)
}

/// What a terminal got, with its line endings (CR LF on a terminal) as `\n`.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", "\n")
}
