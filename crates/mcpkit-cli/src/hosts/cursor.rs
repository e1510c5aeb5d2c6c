//! Cursor: `.cursor/mcp.json` in the project or `~/.cursor/mcp.json` (every project), servers
//! under `mcpServers`: `{"command", "args", "env"}` for stdio, `{"url", "headers"}` for
//! Streamable HTTP (Cursor tells the transports apart by `command` vs `url`).

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::json::Format;
use super::{string_map, Places, Scope, ServerSpec};

pub(super) const FORMAT: Format = Format {
    servers_key: "mcpServers",
    entry,
};

pub(super) fn path(scope: Scope, places: &Places) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".cursor").join("mcp.json")),
        Scope::User => Ok(places.home()?.join(".cursor").join("mcp.json")),
    }
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
            m.insert("url".into(), Value::String(url.clone()));
            if !headers.is_empty() {
                m.insert("headers".into(), string_map(headers));
            }
        }
    }
    Ok(m)
}
