//! Which server a command talks to, the same on every command:
//!
//! - `--server URL`: Streamable HTTP (falling back to the legacy HTTP+SSE transport);
//! - `--server NAME`: an entry of an MCP configuration file (`--config PATH`, or the first of
//!   [`DEFAULT_CONFIG_PATHS`] that exists);
//! - `-- CMD ARGS…`: a stdio server launched as a child process;
//! - nothing: the built-in reference server (`mcpkit serve`) launched as a child.
//!
//! The configuration file has the format hosts already use:
//!
//! ```json
//! { "mcpServers": {
//!     "local":  { "command": "python", "args": ["server.py"], "env": { "DEBUG": "1" } },
//!     "remote": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer …" } }
//! } }
//! ```
//!
//! VS Code's `.vscode/mcp.json`, which names the same map `servers` (and may have comments), is read as well, and so are
//! Zed's `context_servers`, Windsurf's `serverUrl`, Gemini's `httpUrl`, Codex's `config.toml` (a
//! `.toml` file: `[mcp_servers.NAME]` tables, see [`crate::hosts::codex`]) and Goose's
//! `config.yaml` (a `.yaml` file, [`crate::hosts::goose`]). Only the entry asked for is checked: other entries may
//! carry keys of their host's own.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcpkit::client::ConnectMode;
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::transport::{BoxTransport, Transport};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, ClientBuilder, PeerOptions};
use serde::Deserialize;

use crate::trace::traced;

mod config;
mod connect;
// Prefixing reads the server's stderr through a Unix socket pair: unused elsewhere.
#[cfg_attr(not(unix), allow(dead_code))]
pub mod server_log;

use config::{default_config_candidates, entry_target, load_config, ServerEntry};
pub use connect::ConnectOptions;

/// A command-line failure: what to print (one line) and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The process exit code (2 for usage and protocol errors).
    pub code: u8,
    /// One line naming the problem and what to do.
    pub message: String,
}

impl Failure {
    /// A usage or protocol error: exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// `what` needs the cargo feature `feature`, which this build was made without (exit 2).
    pub fn not_built(what: &str, feature: &str) -> Self {
        Failure::usage(format!(
            "{what} needs the `{feature}` feature, which this mcpkit was built without: \
             cargo install --path crates/mcpkit-cli --features {feature} (or --features full)"
        ))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<mcpkit::Error> for Failure {
    fn from(e: mcpkit::Error) -> Self {
        Failure::usage(one_line(&e.to_string()))
    }
}

/// Collapse a multi-line message onto one line.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The target options every command shares.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// The server: an http(s) URL (Streamable HTTP, legacy HTTP+SSE fallback), Streamable HTTP
    /// on a Unix domain socket (`unix:/path/to.sock` for its `/mcp`, or
    /// `http+unix://%2Fpath%2Fto.sock/PATH`), or the NAME of an entry in the MCP configuration
    /// file.
    #[arg(long, value_name = "URL|NAME", conflicts_with = "command")]
    pub server: Option<String>,
    /// The MCP configuration file for `--server NAME` (default: ./.mcp.json, ./mcp.json,
    /// $XDG_CONFIG_HOME/mcpkit/mcp.json, ~/.config/mcpkit/mcp.json — the first that exists).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Give up on connecting, and on each request, after this long (e.g. 30s, 500ms, 2m). The
    /// timer of a `call` restarts whenever the server reports progress on it, so a tool that keeps
    /// reporting progress may run longer.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// The protocol era: `handshake` (the initialize handshake, every server speaks it), `auto`
    /// (probe with server/discover; 2026-07-28 when the server speaks it, else the handshake) or
    /// a stateless revision such as `2026-07-28`.
    #[arg(long, value_name = "handshake|auto|VERSION", default_value = "handshake", value_parser = parse_mode)]
    pub protocol: ConnectMode,
    /// Authorize with OAuth 2.1 when an HTTP server asks: the authorization URL is printed, and
    /// the browser's redirect is awaited on http://127.0.0.1:PORT/callback. The login is kept
    /// (OS keyring, else a 0600 file; see `mcpkit auth list`) and reused, refreshed when it
    /// expires, by later runs.
    #[arg(long)]
    pub oauth: bool,
    /// The port of the OAuth loopback redirect URI.
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_OAUTH_PORT, requires = "oauth")]
    pub oauth_port: u16,
    /// Where a stdio server's stderr goes: `prefix` (the default: each line shown on mcpkit's
    /// stderr as `server: LINE`, escaped on a terminal; with `--protocol auto`, what the server
    /// wrote while refusing the probe is kept for -v), `inherit` or `show` (passed through as
    /// written), `quiet` or `hide` (discarded), or `file:PATH` (appended to PATH).
    #[arg(long, value_name = "prefix|inherit|quiet|file:PATH", default_value = "prefix", value_parser = parse_server_stderr)]
    pub server_stderr: ServerStderr,
    /// The stdio server to launch: `-- CMD ARGS…` (default: the built-in reference server).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Where a stdio server's stderr goes (`--server-stderr`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ServerStderr {
    /// Into mcpkit's own stderr, each line as `server: LINE` (escaped on a terminal). On
    /// Windows, passed through as written.
    #[default]
    Prefix,
    /// Into mcpkit's own stderr, as written.
    Inherit,
    /// Discarded.
    Quiet,
    /// Appended to this file.
    File(PathBuf),
}

/// Parse `--server-stderr`: `prefix`, `inherit` (or `show`), `quiet` (or `hide`) or `file:PATH`.
pub fn parse_server_stderr(s: &str) -> Result<ServerStderr, String> {
    match s {
        "prefix" => Ok(ServerStderr::Prefix),
        "inherit" | "show" => Ok(ServerStderr::Inherit),
        "quiet" | "hide" => Ok(ServerStderr::Quiet),
        _ => match s.strip_prefix("file:") {
            Some(path) if !path.is_empty() => Ok(ServerStderr::File(PathBuf::from(path))),
            _ => Err(format!("expected prefix, inherit, quiet or file:PATH, not {s:?}")),
        },
    }
}

impl Default for TargetArgs {
    fn default() -> Self {
        TargetArgs {
            server: None,
            config: None,
            timeout: Duration::from_secs(30),
            protocol: ConnectMode::Handshake,
            oauth: false,
            oauth_port: DEFAULT_OAUTH_PORT,
            server_stderr: ServerStderr::Prefix,
            command: Vec::new(),
        }
    }
}

/// Where a resolved target lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// An HTTP server.
    Url {
        /// Its MCP endpoint.
        url: String,
        /// Extra headers sent with every request.
        headers: BTreeMap<String, String>,
        /// Speak the legacy HTTP+SSE transport from the start (`"type": "sse"` in a config).
        legacy: bool,
    },
    /// A stdio server process.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// This binary's own reference server (`mcpkit serve`).
    Builtin,
}

/// A resolved target: where, plus a short label for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Where it is.
    pub endpoint: Endpoint,
    /// The URL, the configured name, the command line, or `builtin`.
    pub label: String,
    /// Where a stdio server's stderr goes.
    pub stderr: ServerStderr,
}

/// The loopback port of the OAuth redirect (`--oauth-port`): registered clients remember it.
pub const DEFAULT_OAUTH_PORT: u16 = 33418;

/// The default configuration search, in order (`~` and `$XDG_CONFIG_HOME` expanded).
pub const DEFAULT_CONFIG_PATHS: &[&str] = &[
    "./.mcp.json",
    "./mcp.json",
    "$XDG_CONFIG_HOME/mcpkit/mcp.json",
    "~/.config/mcpkit/mcp.json",
];

impl TargetArgs {
    /// Work out the target from the flags (reads the configuration file for `--server NAME`).
    pub fn resolve(&self) -> Result<Target, Failure> {
        let mut target = self.resolve_endpoint()?;
        target.stderr = self.server_stderr.clone();
        Ok(target)
    }

    fn resolve_endpoint(&self) -> Result<Target, Failure> {
        if let Some((program, args)) = self.command.split_first() {
            return Ok(Target {
                endpoint: Endpoint::Command {
                    program: program.clone(),
                    args: args.to_vec(),
                    env: BTreeMap::new(),
                    cwd: None,
                },
                label: self.command.join(" "),
                stderr: ServerStderr::default(),
            });
        }
        let Some(server) = &self.server else {
            return Ok(Target {
                endpoint: Endpoint::Builtin,
                label: "builtin".to_owned(),
                stderr: ServerStderr::default(),
            });
        };
        let on_a_socket = server.starts_with("unix:") || server.starts_with("http+unix://");
        if server.starts_with("http://") || server.starts_with("https://") || on_a_socket {
            return Ok(Target {
                endpoint: Endpoint::Url {
                    url: server.clone(),
                    headers: BTreeMap::new(),
                    legacy: false,
                },
                label: server.clone(),
                stderr: ServerStderr::default(),
            });
        }
        if server.contains("://") {
            return Err(Failure::usage(format!(
                "--server {server:?}: only http://, https://, unix: and http+unix:// URLs are supported (use `-- CMD ARGS…` for a stdio server)"
            )));
        }
        let path = match &self.config {
            Some(p) => p.clone(),
            None => {
                let candidates = default_config_candidates();
                match candidates.iter().find(|p| p.is_file()) {
                    Some(p) => p.clone(),
                    None => {
                        return Err(Failure::usage(format!(
                            "--server {server:?} is not a URL and no MCP configuration file was found (looked in {}); pass --config PATH or an http(s) URL",
                            DEFAULT_CONFIG_PATHS.join(", ")
                        )))
                    }
                }
            }
        };
        let entries = load_config(&path)?;
        let Some(entry) = entries.get(server) else {
            let known: Vec<&str> = entries.keys().map(String::as_str).collect();
            return Err(Failure::usage(format!(
                "no server named {server:?} in {} (it has: {})",
                path.display(),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        };
        let entry: ServerEntry = serde_json::from_value(entry.clone())
            .map_err(|e| Failure::usage(format!("server {server:?} in {}: {e}", path.display())))?;
        entry_target(server, &entry, &path)
    }
}

/// Parse `--protocol`: `handshake`, `auto` or a stateless-era revision (`legacy`, its former
/// name, is still accepted).
pub fn parse_mode(s: &str) -> Result<ConnectMode, String> {
    match s {
        "handshake" | "legacy" => Ok(ConnectMode::Handshake),
        "auto" => Ok(ConnectMode::Auto),
        v => match v.parse::<ProtocolVersion>() {
            Ok(v) if v.era() == mcpkit::types::Era::Stateless => Ok(ConnectMode::Pinned(v)),
            Ok(v) => Err(format!(
                "{v} is a handshake-era revision: use --protocol handshake (the handshake negotiates it)"
            )),
            Err(_) => Err(format!(
                "expected handshake, auto or a revision such as 2026-07-28, not {v:?}"
            )),
        },
    }
}

/// Parse `30s`, `500ms`, `2m`, `1h` or a plain number of seconds (fractions allowed).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (e.g. 30s, 500ms, 2m)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" | "sec" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("{s:?} is not a valid duration"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("3 parsecs").is_err());
    }

    fn resolve_in(config: &str, name: &str) -> Result<Target, Failure> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, config).unwrap();
        TargetArgs {
            server: Some(name.to_owned()),
            config: Some(path),
            ..TargetArgs::default()
        }
        .resolve()
    }

    #[test]
    fn config_entries() {
        let cfg = r#"{"mcpServers": {
            "a": {"command": "python", "args": ["s.py"], "env": {"X": "1"}},
            "b": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer t"}},
            "c": {"type": "sse", "url": "http://127.0.0.1:1/sse"}
        }}"#;
        let a = resolve_in(cfg, "a").unwrap();
        assert!(
            matches!(&a.endpoint, Endpoint::Command { program, args, .. } if program == "python" && args == &["s.py"])
        );
        let b = resolve_in(cfg, "b").unwrap();
        assert!(matches!(&b.endpoint, Endpoint::Url { legacy: false, headers, .. } if headers.len() == 1));
        let c = resolve_in(cfg, "c").unwrap();
        assert!(matches!(&c.endpoint, Endpoint::Url { legacy: true, .. }));
        let missing = resolve_in(cfg, "zz").unwrap_err();
        assert!(missing.message.contains("it has: a, b, c"), "{}", missing.message);
    }

    #[test]
    fn bad_configs_name_the_problem() {
        let e = resolve_in("{", "a").unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("is invalid"), "{}", e.message);
        let e = resolve_in(r#"{"mcpServers": {"a": {}}}"#, "a").unwrap_err();
        assert!(e.message.contains("needs \"command\""), "{}", e.message);
        let e = resolve_in(r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#, "a").unwrap_err();
        assert!(e.message.contains("both"), "{}", e.message);
        let e = resolve_in(r#"{"mcpServers": {"a": {"command": "x", "bogus": 1}}}"#, "a").unwrap_err();
        assert!(e.message.contains("bogus"), "{}", e.message);
    }
}
