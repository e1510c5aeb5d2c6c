//! Zed: `.zed/settings.json` in the project or the user's `settings.json` (`~/.config/zed/` on
//! Linux — `$XDG_CONFIG_HOME/zed/` when set — and on macOS, `%APPDATA%\Zed\` on Windows),
//! servers under `context_servers` in the flat form Zed documents today: `{"command", "args",
//! "env"}` for stdio, `{"url", "headers"}` for a remote server. (Older Zed releases nested the
//! command as `{"command": {"path", "args", "env"}}`; an entry written that way is replaced
//! whole, as its `command` is mcpkit's to write.) Zed's settings allow comments and trailing
//! commas, so a file with them is edited in place.

use std::path::PathBuf;

use super::json::{Http, Shape};
use super::{Os, Places, Scope};

pub(super) const SHAPE: Shape = Shape {
    type_field: false,
    // Zed's own example writes `"env": {}`; some releases required the key.
    env_always: true,
    http: Http::Url("url"),
};

pub(super) fn path(scope: Scope, places: &Places, os: Os) -> Result<PathBuf, String> {
    match scope {
        Scope::Project => Ok(places.cwd.join(".zed").join("settings.json")),
        Scope::Local => Err(super::only_claude_code_has_local()),
        Scope::User => {
            let dir = match (os, &places.xdg_config_home) {
                (Os::Windows, _) => places.app_config(os)?.join("Zed"),
                (Os::Linux, Some(xdg)) => xdg.join("zed"),
                // Zed keeps ~/.config/zed on macOS too, not ~/Library.
                _ => places.home()?.join(".config").join("zed"),
            };
            Ok(dir.join("settings.json"))
        }
    }
}
