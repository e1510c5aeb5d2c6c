//! Cursor: `.cursor/mcp.json` in the project or `~/.cursor/mcp.json` (every project), servers
//! under `mcpServers`: `{"command", "args", "env"}` for stdio, `{"url", "headers"}` for
//! Streamable HTTP (Cursor tells the transports apart by `command` vs `url`).

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::{Places, Scope};

pub(super) const SHAPE: Shape = Shape {
    type_field: false,
    env_always: false,
    http: Http::Url("url"),
};

pub(super) fn path(scope: Scope, places: &Places) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".cursor").join("mcp.json")),
        Scope::Local => Err(super::only_claude_code_has_local()),
        Scope::User => Ok(places.home()?.join(".cursor").join("mcp.json")),
    }
}
