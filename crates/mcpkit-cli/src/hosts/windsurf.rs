//! Windsurf: `~/.codeium/windsurf/mcp_config.json` (`%USERPROFILE%\.codeium\windsurf\` on
//! Windows), servers under `mcpServers`: `{"command", "args", "env"}` for stdio, and
//! `{"serverUrl", "headers"}` for HTTP — Windsurf's own key, a `url` copied from another host's
//! file does not connect.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::json::Format;
use super::{string_map, Places, ServerSpec};

pub(super) const FORMAT: Format = Format {
    servers_key: "mcpServers",
    entry,
};

pub(super) fn path(places: &Places) -> Result<PathBuf, String> {
    Ok(places.home()?.join(".codeium").join("windsurf").join("mcp_config.json"))
}

fn entry(spec: &ServerSpec) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    match spec {
        ServerSpec::Stdio { command, args, env } => {
            m.insert("command".into(), Value::String(command.clone()));
            m.insert("args".into(), args.iter().cloned().map(Value::String).collect());
            if !env.is_empty() {
                m.insert("env".into(), string_map(env));
            }
        }
        ServerSpec::Http { url, headers } => {
            m.insert("serverUrl".into(), Value::String(url.clone()));
            if !headers.is_empty() {
                m.insert("headers".into(), string_map(headers));
            }
        }
    }
    Ok(m)
}
