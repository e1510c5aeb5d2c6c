//! VS Code: `.vscode/mcp.json` in the workspace or `mcp.json` in the user profile (Linux
//! `~/.config/Code/User/`, macOS `~/Library/Application Support/Code/User/`, Windows
//! `%APPDATA%\Code\User\`). The map is `servers` (beside `inputs`, kept as it is), and every
//! entry says its `type`: `{"type": "stdio", "command", "args", "env"}` or `{"type": "http",
//! "url", "headers"}`.

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::{Os, Places, Scope};

pub(super) const SHAPE: Shape = Shape {
    type_field: true,
    env_always: false,
    http: Http::Url("url"),
};

pub(super) fn path(scope: Scope, places: &Places, os: Os) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".vscode").join("mcp.json")),
        Scope::Local => Err(super::only_claude_code_has_local()),
        Scope::User => Ok(places.app_config(os)?.join("Code").join("User").join("mcp.json")),
    }
}
