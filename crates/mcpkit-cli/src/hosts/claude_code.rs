//! Claude Code: `.mcp.json` at the project root (project scope), or `~/.claude.json`: its
//! top-level `mcpServers` beside the app's many other keys (user scope), or the project's own
//! `projects[DIR].mcpServers` there (local scope: this project, this user only; `DIR` is the
//! project's absolute path). Entries are written as `claude mcp add` writes them:
//! `{"type": "stdio", "command", "args", "env"}` and `{"type": "http", "url", "headers"}`.

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::{Places, Scope};

/// As `claude mcp add` writes them: the `env` object always, empty or not.
pub(super) const SHAPE: Shape = Shape {
    type_field: true,
    env_always: true,
    http: Http::Url("url"),
};

pub(super) fn path(scope: Scope, places: &Places) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".mcp.json")),
        Scope::User | Scope::Local => Ok(places.home()?.join(".claude.json")),
    }
}

/// The keys leading to the servers object of `scope` in its file.
pub(super) fn servers_at(scope: Scope, places: &Places) -> Vec<String> {
    match scope {
        Scope::Local => vec![
            "projects".to_owned(),
            places.cwd.to_string_lossy().into_owned(),
            "mcpServers".to_owned(),
        ],
        Scope::Project | Scope::User => vec!["mcpServers".to_owned()],
    }
}
