//! Claude Code: `.mcp.json` at the project root (project scope) or `~/.claude.json` (user scope,
//! the top-level `mcpServers` beside the app's many other keys), written as `claude mcp add`
//! writes them: `{"type": "stdio", "command", "args", "env"}` and `{"type": "http", "url",
//! "headers"}`.

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
        Scope::Project => Ok(places.cwd.join(".mcp.json")),
        Scope::User => Ok(places.home()?.join(".claude.json")),
    }
}

fn entry(spec: &ServerSpec) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    match spec {
        ServerSpec::Stdio { command, args, env } => {
            m.insert("type".into(), Value::String("stdio".into()));
            m.insert("command".into(), Value::String(command.clone()));
            m.insert("args".into(), args.iter().cloned().map(Value::String).collect());
            // `claude mcp add` always writes the env object, empty or not.
            m.insert("env".into(), string_map(env));
        }
        ServerSpec::Http { url, headers } => {
            m.insert("type".into(), Value::String("http".into()));
            m.insert("url".into(), Value::String(url.clone()));
            if !headers.is_empty() {
                m.insert("headers".into(), string_map(headers));
            }
        }
    }
    Ok(m)
}
