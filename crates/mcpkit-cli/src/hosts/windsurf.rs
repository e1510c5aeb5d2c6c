//! Windsurf: `~/.codeium/windsurf/mcp_config.json` (`%USERPROFILE%\.codeium\windsurf\` on
//! Windows), servers under `mcpServers`: `{"command", "args", "env"}` for stdio, and
//! `{"serverUrl", "headers"}` for HTTP — Windsurf's own key, a `url` copied from another host's
//! file does not connect.

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::Places;

pub(super) const SHAPE: Shape = Shape {
    type_field: false,
    env_always: false,
    http: Http::Url("serverUrl"),
};

pub(super) fn path(places: &Places) -> Result<PathBuf, String> {
    Ok(places.home()?.join(".codeium").join("windsurf").join("mcp_config.json"))
}
