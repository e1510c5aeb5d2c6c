//! Claude Desktop: `claude_desktop_config.json` in the app's settings folder, servers under
//! `mcpServers` as `{"command", "args", "env"}`. The file launches stdio servers only (remote
//! servers are added in the app, under Settings → Connectors), so an HTTP server is refused
//! with the stdio bridge to use instead.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::json::Format;
use super::{string_map, Os, Places, ServerSpec};

pub(super) const FORMAT: Format = Format {
    servers_key: "mcpServers",
    entry,
};

/// macOS `~/Library/Application Support/Claude/`, Windows `%APPDATA%\Claude\`, Linux
/// `$XDG_CONFIG_HOME/Claude/` (`~/.config/Claude/`; there is no official Linux build, and that
/// is where the community builds look).
pub(super) fn path(places: &Places, os: Os) -> Result<PathBuf, String> {
    Ok(places.app_config(os)?.join("Claude").join("claude_desktop_config.json"))
}

fn entry(spec: &ServerSpec) -> Result<Map<String, Value>, String> {
    match spec {
        ServerSpec::Stdio { command, args, env } => {
            let mut m = Map::new();
            m.insert("command".into(), Value::String(command.clone()));
            m.insert("args".into(), args.iter().cloned().map(Value::String).collect());
            if !env.is_empty() {
                m.insert("env".into(), string_map(env));
            }
            Ok(m)
        }
        ServerSpec::Http { url, .. } => Err(format!(
            "Claude Desktop's configuration file only launches stdio servers: add {url} in the app (Settings → Connectors), \
             or install the stdio bridge instead: mcpkit install NAME --host claude-desktop -- mcpkit proxy --server {url}"
        )),
    }
}
