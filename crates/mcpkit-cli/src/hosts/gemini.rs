//! Gemini CLI: `.gemini/settings.json` in the project or `~/.gemini/settings.json` (every
//! project), servers under `mcpServers`: `{"command", "args", "env"}` for stdio and
//! `{"httpUrl", "headers"}` for Streamable HTTP — Gemini's `url` is its HTTP+SSE transport, so
//! an HTTP entry must say `httpUrl`. Gemini reads the file with comments allowed, so a file that
//! has them is edited in place.

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::{Places, Scope};

pub(super) const SHAPE: Shape = Shape {
    type_field: false,
    env_always: false,
    http: Http::Url("httpUrl"),
};

pub(super) fn path(scope: Scope, places: &Places) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".gemini").join("settings.json")),
        Scope::Local => Err(super::only_claude_code_has_local()),
        Scope::User => Ok(places.home()?.join(".gemini").join("settings.json")),
    }
}
