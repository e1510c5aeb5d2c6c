//! The configuration files of the MCP hosts `mcpkit install` writes into: where each host keeps
//! its file ([`Host::config_path`]), the shape of one server entry in it (one module per host
//! format), and the edits: add or replace an entry ([`install`]), remove one ([`uninstall`]),
//! list them ([`list`]). Every other entry and key of the file is kept, in its order; the file
//! itself is written by [`file::replace`] (a backup, then temp file + rename).
//!
//! | host | file | servers key | HTTP entry |
//! | --- | --- | --- | --- |
//! | `claude-desktop` | `claude_desktop_config.json` (user) | `mcpServers` | none (stdio only) |
//! | `claude-code` | `.mcp.json` (project), `~/.claude.json` (user; local: under `projects[DIR]`) | `mcpServers` | `type: http`, `url` |
//! | `cursor` | `.cursor/mcp.json` (project), `~/.cursor/mcp.json` (user) | `mcpServers` | `url` |
//! | `vscode` | `.vscode/mcp.json` (project), the profile's `mcp.json` (user); comments kept | `servers` | `type: http`, `url` |
//! | `windsurf` | `~/.codeium/windsurf/mcp_config.json` (user) | `mcpServers` | `serverUrl` |
//! | `codex` | `.codex/config.toml` (project), `~/.codex/config.toml` (user) | `[mcp_servers.NAME]` | `url` |
//! | `gemini` | `.gemini/settings.json` (project), `~/.gemini/settings.json` (user); comments kept | `mcpServers` | `httpUrl` |
//! | `goose` | `~/.config/goose/config.yaml` (user); comments kept | `extensions` (Goose's entry format) | `type: streamable_http`, `uri` |
//! | `zed` | `.zed/settings.json` (project), `~/.config/zed/settings.json` (user); comments kept | `context_servers` | `url` |

mod claude_code;
mod claude_desktop;
pub mod codex;
mod cursor;
pub mod file;
mod gemini;
pub mod goose;
mod json;
mod jsonc;
mod vscode;
mod windsurf;
mod zed;

use std::fmt;
use std::path::PathBuf;

use serde_json::{Map, Value};

/// A host whose configuration file `mcpkit install` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Host {
    /// Claude Desktop: `claude_desktop_config.json`, `mcpServers`, stdio servers only.
    ClaudeDesktop,
    /// Claude Code: `.mcp.json` (project) or `~/.claude.json` (user), `mcpServers`.
    ClaudeCode,
    /// Cursor: `.cursor/mcp.json` (project) or `~/.cursor/mcp.json` (user), `mcpServers`.
    Cursor,
    /// VS Code: `.vscode/mcp.json` (project) or the profile's `mcp.json` (user), `servers`.
    #[value(name = "vscode")]
    VsCode,
    /// Windsurf: `~/.codeium/windsurf/mcp_config.json`, `mcpServers`, `serverUrl` for HTTP.
    Windsurf,
    /// Codex: `~/.codex/config.toml` (user) or `.codex/config.toml` (project), `[mcp_servers.NAME]`.
    Codex,
    /// Gemini CLI: `.gemini/settings.json` (project) or `~/.gemini/settings.json` (user),
    /// `mcpServers`, `httpUrl` for HTTP.
    Gemini,
    /// Goose: `~/.config/goose/config.yaml`, `extensions`, in Goose's entry format.
    Goose,
    /// Zed: `.zed/settings.json` (project) or `~/.config/zed/settings.json` (user),
    /// `context_servers`.
    Zed,
}

/// Every host, in the order `list-installed` reports them.
pub const ALL_HOSTS: [Host; 9] = [
    Host::ClaudeDesktop,
    Host::ClaudeCode,
    Host::Cursor,
    Host::VsCode,
    Host::Windsurf,
    Host::Codex,
    Host::Gemini,
    Host::Goose,
    Host::Zed,
];

/// Which of a host's files: the one in the current project or the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The file in the current directory (shared with the project, e.g. `.mcp.json`).
    Project,
    /// The file in the user's home or profile (every project).
    User,
    /// Claude Code only: this project's entry in the user's `~/.claude.json`
    /// (`projects[DIR].mcpServers`): this project, and private to this user.
    Local,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Local => "local",
        })
    }
}

/// The operating system whose default paths apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and the other Unix systems (XDG paths).
    Linux,
    /// macOS (`~/Library/Application Support`).
    MacOs,
    /// Windows (`%APPDATA%`, `%USERPROFILE%`).
    Windows,
}

impl Os {
    /// The system this binary runs on.
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// The directories default paths are made of, read from the environment once (and set by hand
/// in tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// The current directory (project-scope files live here).
    pub cwd: PathBuf,
    /// `$HOME` (`%USERPROFILE%` on Windows).
    pub home: Option<PathBuf>,
    /// `%APPDATA%` (Windows).
    pub appdata: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (Linux; `~/.config` when unset).
    pub xdg_config_home: Option<PathBuf>,
    /// `$CODEX_HOME` (Codex's own override of `~/.codex`).
    pub codex_home: Option<PathBuf>,
}

impl Places {
    /// Read the directories from the environment.
    pub fn from_env() -> Places {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Places {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            home: var("HOME").or_else(|| var("USERPROFILE")),
            appdata: var("APPDATA"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            codex_home: var("CODEX_HOME"),
        }
    }

    fn home(&self) -> Result<PathBuf, String> {
        self.home
            .clone()
            .ok_or_else(|| "cannot tell the home directory (HOME is not set); pass --config PATH".to_owned())
    }

    /// `~/.config` or `$XDG_CONFIG_HOME` (Linux), `~/Library/Application Support` (macOS),
    /// `%APPDATA%` (Windows): where desktop applications keep their settings.
    fn app_config(&self, os: Os) -> Result<PathBuf, String> {
        match os {
            Os::Linux => match &self.xdg_config_home {
                Some(x) => Ok(x.clone()),
                None => Ok(self.home()?.join(".config")),
            },
            Os::MacOs => Ok(self.home()?.join("Library/Application Support")),
            Os::Windows => match &self.appdata {
                Some(a) => Ok(a.clone()),
                None => Ok(self.home()?.join("AppData").join("Roaming")),
            },
        }
    }
}

/// The server an entry starts or reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A stdio server the host launches.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables, in the order given.
        env: Vec<(String, String)>,
    },
    /// A Streamable HTTP server the host connects to.
    Http {
        /// Its MCP endpoint.
        url: String,
        /// Headers sent with every request, in the order given.
        headers: Vec<(String, String)>,
    },
}

/// A configuration file that could not be read: where and why. Nothing is written then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Why an edit could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The file is not valid JSON or TOML (with its place).
    Parse(ParseError),
    /// The file parses but has the wrong shape (`mcpServers` is not an object…), or the entry
    /// cannot be written for this host.
    Invalid(String),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Parse(p) => write!(f, "line {}, column {}: {}", p.line, p.column, p.message),
            EditError::Invalid(m) => f.write_str(m),
        }
    }
}

/// One entry found in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Installed {
    /// The entry's name.
    pub name: String,
    /// `command args…` for a stdio server, the URL for an HTTP one.
    pub server: String,
}

impl Host {
    /// The name on the command line (`claude-code`).
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::ClaudeCode => "claude-code",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
            Host::Windsurf => "windsurf",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Goose => "goose",
            Host::Zed => "zed",
        }
    }

    /// The scopes the host has a file for.
    pub fn scopes(self) -> &'static [Scope] {
        match self {
            Host::ClaudeDesktop | Host::Windsurf | Host::Goose => &[Scope::User],
            Host::ClaudeCode => &[Scope::Project, Scope::Local, Scope::User],
            Host::VsCode | Host::Cursor | Host::Codex | Host::Gemini | Host::Zed => &[Scope::Project, Scope::User],
        }
    }

    /// The scope used when `--scope` is not given: the project for the hosts whose project file
    /// is the usual place (Claude Code's `.mcp.json`, VS Code's `.vscode/mcp.json`), else the user.
    pub fn default_scope(self) -> Scope {
        match self {
            Host::ClaudeCode | Host::VsCode => Scope::Project,
            _ => Scope::User,
        }
    }

    /// The host's configuration file for `scope` on `os`.
    pub fn config_path(self, scope: Scope, places: &Places, os: Os) -> Result<PathBuf, String> {
        if !self.scopes().contains(&scope) {
            return Err(format!(
                "{} has no {scope}-scope configuration file (it has: {})",
                self.name(),
                self.scopes()
                    .iter()
                    .map(Scope::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        match self {
            Host::ClaudeDesktop => claude_desktop::path(places, os),
            Host::ClaudeCode => claude_code::path(scope, places),
            Host::Cursor => cursor::path(scope, places),
            Host::VsCode => vscode::path(scope, places, os),
            Host::Windsurf => windsurf::path(places),
            Host::Codex => codex::path(scope, places),
            Host::Gemini => gemini::path(scope, places),
            Host::Goose => goose::path(places, os),
            Host::Zed => zed::path(scope, places, os),
        }
    }

    /// The host's JSON format for `scope` (`None` for Codex's TOML and Goose's YAML).
    fn json_format(self, scope: Scope, places: &Places) -> Option<json::Format> {
        use json::Format;
        match self {
            Host::ClaudeDesktop => Some(Format::top("mcpServers", &claude_desktop::SHAPE)),
            Host::ClaudeCode => Some(Format {
                servers_at: claude_code::servers_at(scope, places),
                ..Format::top("mcpServers", &claude_code::SHAPE)
            }),
            Host::Cursor => Some(Format::top("mcpServers", &cursor::SHAPE)),
            Host::VsCode => Some(Format {
                comments: true,
                ..Format::top("servers", &vscode::SHAPE)
            }),
            Host::Windsurf => Some(Format::top("mcpServers", &windsurf::SHAPE)),
            Host::Gemini => Some(Format {
                comments: true,
                ..Format::top("mcpServers", &gemini::SHAPE)
            }),
            Host::Zed => Some(Format {
                comments: true,
                ..Format::top("context_servers", &zed::SHAPE)
            }),
            Host::Codex | Host::Goose => None,
        }
    }
}

/// Which entries of a host's file an edit reads: the scope (only Claude Code's local scope
/// lives at another place in its file) and the directories it is relative to.
#[derive(Debug, Clone, Copy)]
pub struct Entries<'a> {
    /// The host.
    pub host: Host,
    /// The scope the file belongs to.
    pub scope: Scope,
    /// The directories (the current one names the project of the local scope).
    pub places: &'a Places,
}

impl Entries<'_> {
    fn json_format(&self) -> Option<json::Format> {
        self.host.json_format(self.scope, self.places)
    }
}

/// The text of the file with `name` set to `spec` (added at the end, or replaced where it is,
/// keeping the keys of the old entry that say nothing about the transport). `text` is `None`
/// when the file does not exist yet.
pub fn install(at: Entries<'_>, text: Option<&str>, name: &str, spec: &ServerSpec) -> Result<String, EditError> {
    check_name(name)?;
    match (at.json_format(), at.host) {
        (Some(format), _) => json::install(&format, text, name, spec),
        (None, Host::Goose) => goose::install(text, name, spec),
        (None, _) => codex::install(text, name, spec),
    }
}

/// The text of the file without `name`, or `None` when it has no such entry.
pub fn uninstall(at: Entries<'_>, text: &str, name: &str) -> Result<Option<String>, EditError> {
    match (at.json_format(), at.host) {
        (Some(format), _) => json::uninstall(&format, text, name),
        (None, Host::Goose) => goose::uninstall(text, name),
        (None, _) => codex::uninstall(text, name),
    }
}

/// The entries of the file, in its order.
pub fn list(at: Entries<'_>, text: &str) -> Result<Vec<Installed>, EditError> {
    match (at.json_format(), at.host) {
        (Some(format), _) => json::list(&format, text),
        (None, Host::Goose) => goose::list(text),
        (None, _) => codex::list(text),
    }
}

/// Entry names every host accepts (Codex and Claude Code refuse others): letters, digits, `-`, `_`.
fn check_name(name: &str) -> Result<(), EditError> {
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(EditError::Invalid(format!(
            "{name:?} cannot name a server entry: use letters, digits, '-' and '_' (some hosts refuse anything else)"
        )))
    }
}

/// `command args…` or the URL of an entry read back as JSON (`command`/`args`, `url`,
/// `serverUrl` or `httpUrl`).
fn summary(entry: &Value) -> String {
    let Some(obj) = entry.as_object() else {
        return "(not an object)".to_owned();
    };
    if let Some(url) = obj
        .get("url")
        .or_else(|| obj.get("serverUrl"))
        .or_else(|| obj.get("httpUrl"))
        .and_then(Value::as_str)
    {
        return url.to_owned();
    }
    let mut parts: Vec<String> = obj
        .get("command")
        .and_then(Value::as_str)
        .map(|c| vec![c.to_owned()])
        .unwrap_or_default();
    if let Some(args) = obj.get("args").and_then(Value::as_array) {
        parts.extend(
            args.iter()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned)),
        );
    }
    if parts.is_empty() {
        "(no command or url)".to_owned()
    } else {
        parts.join(" ")
    }
}

/// What a host without a local scope says (`config_path` refuses it before asking the host).
fn only_claude_code_has_local() -> String {
    "only claude-code has a local scope".to_owned()
}

/// A JSON configuration file read as JSON with comments (VS Code's files may have them), for
/// `--config PATH` targets: the value, or the error with its line and column.
pub fn read_json_with_comments(text: &str) -> Result<Value, String> {
    jsonc::parse(text).map(Value::Object).map_err(|e| e.to_string())
}

/// A string map as a JSON object, in the order given.
fn string_map(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<String, Value>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn places() -> Places {
        Places {
            cwd: PathBuf::from("/work/app"),
            home: Some(PathBuf::from("/home/ada")),
            appdata: Some(PathBuf::from(r"C:\Users\ada\AppData\Roaming")),
            xdg_config_home: None,
            codex_home: None,
        }
    }

    fn path(host: Host, scope: Scope, os: Os) -> PathBuf {
        host.config_path(scope, &places(), os).unwrap()
    }

    #[test]
    fn default_paths_per_host_and_os() {
        use Host::*;
        use Scope::*;
        let home = Path::new("/home/ada");
        let appdata = Path::new(r"C:\Users\ada\AppData\Roaming");
        let mac = home.join("Library/Application Support");
        assert_eq!(
            path(ClaudeDesktop, User, Os::Linux),
            home.join(".config/Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClaudeDesktop, User, Os::MacOs),
            mac.join("Claude/claude_desktop_config.json")
        );
        assert_eq!(
            path(ClaudeDesktop, User, Os::Windows),
            appdata.join("Claude").join("claude_desktop_config.json")
        );
        assert_eq!(path(ClaudeCode, Project, Os::Linux), Path::new("/work/app/.mcp.json"));
        assert_eq!(path(ClaudeCode, User, Os::Windows), home.join(".claude.json"));
        assert_eq!(
            path(Cursor, Project, Os::MacOs),
            Path::new("/work/app/.cursor/mcp.json")
        );
        assert_eq!(path(Cursor, User, Os::Linux), home.join(".cursor/mcp.json"));
        assert_eq!(
            path(VsCode, Project, Os::Linux),
            Path::new("/work/app/.vscode/mcp.json")
        );
        assert_eq!(path(VsCode, User, Os::Linux), home.join(".config/Code/User/mcp.json"));
        assert_eq!(path(VsCode, User, Os::MacOs), mac.join("Code/User/mcp.json"));
        assert_eq!(
            path(VsCode, User, Os::Windows),
            appdata.join("Code").join("User").join("mcp.json")
        );
        assert_eq!(
            path(Windsurf, User, Os::Windows),
            home.join(".codeium/windsurf/mcp_config.json")
        );
        assert_eq!(path(Codex, User, Os::Linux), home.join(".codex/config.toml"));
        assert_eq!(
            path(Codex, Project, Os::Linux),
            Path::new("/work/app/.codex/config.toml")
        );
        assert_eq!(path(Gemini, User, Os::Windows), home.join(".gemini/settings.json"));
        assert_eq!(
            path(Gemini, Project, Os::Linux),
            Path::new("/work/app/.gemini/settings.json")
        );
        assert_eq!(path(Goose, User, Os::Linux), home.join(".config/goose/config.yaml"));
        assert_eq!(path(Goose, User, Os::MacOs), home.join(".config/goose/config.yaml"));
        assert_eq!(
            path(Goose, User, Os::Windows),
            appdata.join("Block").join("goose").join("config").join("config.yaml")
        );
        assert_eq!(path(Zed, User, Os::Linux), home.join(".config/zed/settings.json"));
        assert_eq!(path(Zed, User, Os::MacOs), home.join(".config/zed/settings.json"));
        assert_eq!(path(Zed, User, Os::Windows), appdata.join("Zed").join("settings.json"));
        assert_eq!(path(Zed, Project, Os::Linux), Path::new("/work/app/.zed/settings.json"));
        let codex_home = Places {
            codex_home: Some(PathBuf::from("/opt/codex")),
            xdg_config_home: Some(PathBuf::from("/xdg")),
            ..places()
        };
        assert_eq!(
            Codex.config_path(User, &codex_home, Os::Linux).unwrap(),
            Path::new("/opt/codex/config.toml")
        );
        assert_eq!(
            VsCode.config_path(User, &codex_home, Os::Linux).unwrap(),
            Path::new("/xdg/Code/User/mcp.json")
        );
        assert_eq!(
            Goose.config_path(User, &codex_home, Os::Linux).unwrap(),
            Path::new("/xdg/goose/config.yaml")
        );
        assert_eq!(
            Zed.config_path(User, &codex_home, Os::Linux).unwrap(),
            Path::new("/xdg/zed/settings.json")
        );
    }

    #[test]
    fn scopes_a_host_does_not_have_are_refused() {
        let e = Host::Windsurf
            .config_path(Scope::Project, &places(), Os::Linux)
            .unwrap_err();
        assert_eq!(e, "windsurf has no project-scope configuration file (it has: user)");
        let e = Host::ClaudeDesktop
            .config_path(Scope::Project, &places(), Os::Linux)
            .unwrap_err();
        assert!(e.contains("claude-desktop has no project-scope"), "{e}");
        let no_home = Places { home: None, ..places() };
        assert!(Host::Cursor
            .config_path(Scope::User, &no_home, Os::Linux)
            .unwrap_err()
            .contains("--config"));
    }

    #[test]
    fn entry_names_are_checked() {
        let spec = ServerSpec::Stdio {
            command: "x".into(),
            args: vec![],
            env: vec![],
        };
        let places = places();
        let at = |host| Entries {
            host,
            scope: Scope::User,
            places: &places,
        };
        for bad in ["", "my server", "a.b", "ünï"] {
            assert!(
                matches!(install(at(Host::Cursor), None, bad, &spec), Err(EditError::Invalid(_))),
                "{bad:?}"
            );
        }
        assert!(install(at(Host::Codex), None, "my-server_2", &spec).is_ok());
    }
}
