//! Claude Desktop: `claude_desktop_config.json` in the app's settings folder, servers under
//! `mcpServers` as `{"command", "args", "env"}`. The file launches stdio servers only (remote
//! servers are added in the app, under Settings → Connectors), so an HTTP server is refused
//! with the stdio bridge to use instead.

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::{Os, Places};

pub(super) const SHAPE: Shape = Shape {
    type_field: false,
    env_always: false,
    http: Http::Refused(http_refused),
};

/// macOS `~/Library/Application Support/Claude/`, Windows `%APPDATA%\Claude\`, Linux
/// `$XDG_CONFIG_HOME/Claude/` (`~/.config/Claude/`; there is no official Linux build, and that
/// is where the community builds look).
pub(super) fn path(places: &Places, os: Os) -> Result<PathBuf, String> {
    Ok(places.app_config(os)?.join("Claude").join("claude_desktop_config.json"))
}

fn http_refused(url: &str) -> String {
    format!(
        "Claude Desktop's configuration file only launches stdio servers: add {url} in the app (Settings → Connectors), \
         or install the stdio bridge instead: mcpkit install NAME --host claude-desktop -- mcpkit proxy --server {url}"
    )
}
