//! VS Code: `.vscode/mcp.json` in the workspace or `mcp.json` in the user profile (Linux
//! `~/.config/Code/User/`, macOS `~/Library/Application Support/Code/User/`, Windows
//! `%APPDATA%\Code\User\`). The map is `servers` (beside `inputs`, kept as it is), and every
//! entry says its `type`: `{"type": "stdio", "command", "args", "env"}` or `{"type": "http",
//! "url", "headers"}`.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::json::Format;
use super::{string_map, Os, Places, Scope, ServerSpec};

pub(super) const FORMAT: Format = Format {
    servers_key: "servers",
    entry,
};

pub(super) fn path(scope: Scope, places: &Places, os: Os) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".vscode").join("mcp.json")),
        Scope::User => Ok(places.app_config(os)?.join("Code").join("User").join("mcp.json")),
    }
}

fn entry(spec: &ServerSpec) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    match spec {
        ServerSpec::Stdio { command, args, env } => {
            m.insert("type".into(), Value::String("stdio".into()));
            m.insert("command".into(), Value::String(command.clone()));
            m.insert("args".into(), args.iter().cloned().map(Value::String).collect());
            if !env.is_empty() {
                m.insert("env".into(), string_map(env));
            }
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
