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
//! Windsurf's `serverUrl` and Codex's `config.toml` (a `.toml` file: `[mcp_servers.NAME]`
//! tables, see [`crate::hosts::codex`]). Only the entry asked for is checked: other entries may
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
    /// The server: an http(s) URL (Streamable HTTP, legacy HTTP+SSE fallback) or the NAME of an
    /// entry in the MCP configuration file.
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
    /// the browser's redirect is awaited on http://127.0.0.1:PORT/callback.
    #[arg(long)]
    pub oauth: bool,
    /// The port of the OAuth loopback redirect URI.
    #[arg(long, value_name = "PORT", default_value_t = 33418, requires = "oauth")]
    pub oauth_port: u16,
    /// Where a stdio server's stderr goes: `inherit` (mixed into mcpkit's own stderr), `quiet`
    /// (discarded) or `file:PATH` (appended to PATH).
    #[arg(long, value_name = "inherit|quiet|file:PATH", default_value = "inherit", value_parser = parse_server_stderr)]
    pub server_stderr: ServerStderr,
    /// The stdio server to launch: `-- CMD ARGS…` (default: the built-in reference server).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Where a stdio server's stderr goes (`--server-stderr`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ServerStderr {
    /// Into mcpkit's own stderr.
    #[default]
    Inherit,
    /// Discarded.
    Quiet,
    /// Appended to this file.
    File(PathBuf),
}

/// Parse `--server-stderr`: `inherit`, `quiet` or `file:PATH`.
pub fn parse_server_stderr(s: &str) -> Result<ServerStderr, String> {
    match s {
        "inherit" => Ok(ServerStderr::Inherit),
        "quiet" => Ok(ServerStderr::Quiet),
        _ => match s.strip_prefix("file:") {
            Some(path) if !path.is_empty() => Ok(ServerStderr::File(PathBuf::from(path))),
            _ => Err(format!("expected inherit, quiet or file:PATH, not {s:?}")),
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
            oauth_port: 33418,
            server_stderr: ServerStderr::Inherit,
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

/// The default configuration search, in order (`~` and `$XDG_CONFIG_HOME` expanded).
pub const DEFAULT_CONFIG_PATHS: &[&str] = &[
    "./.mcp.json",
    "./mcp.json",
    "$XDG_CONFIG_HOME/mcpkit/mcp.json",
    "~/.config/mcpkit/mcp.json",
];

fn default_config_candidates() -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from(".mcp.json"), PathBuf::from("mcp.json")];
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        out.push(PathBuf::from(x).join("mcpkit/mcp.json"));
    }
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        out.push(PathBuf::from(h).join(".config/mcpkit/mcp.json"));
    }
    out
}

/// `mcpServers` is the name most hosts use; VS Code's `.vscode/mcp.json` says `servers` (and
/// keeps its `inputs` beside it, ignored here).
#[derive(Debug, Deserialize)]
struct ConfigFile {
    #[serde(rename = "mcpServers", alias = "servers")]
    mcp_servers: Option<serde_json::Map<String, serde_json::Value>>,
    /// Claude Code's `~/.claude.json`: each project's own (local-scope) servers, which win over
    /// the user's when the current directory is that project.
    #[serde(default)]
    projects: serde_json::Map<String, serde_json::Value>,
}

impl ConfigFile {
    /// The servers, with the current project's local-scope ones over the top-level ones;
    /// `None` when the file has neither.
    fn servers(self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let local = std::env::current_dir()
            .ok()
            .and_then(|dir| self.projects.get(&*dir.to_string_lossy()).cloned())
            .and_then(|project| {
                project
                    .get("mcpServers")
                    .and_then(serde_json::Value::as_object)
                    .cloned()
            });
        match (self.mcp_servers, local) {
            (None, None) => None,
            (top, local) => {
                let mut all = top.unwrap_or_default();
                all.extend(local.unwrap_or_default());
                Some(all)
            }
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    /// `serverUrl` is Windsurf's name for it.
    #[serde(alias = "serverUrl")]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `stdio`, `http`, `streamable-http` or `sse`; inferred when absent.
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Some hosts keep extra per-server fields; accepted and ignored.
    #[serde(default, rename = "disabled")]
    _disabled: Option<bool>,
    #[serde(default, rename = "description")]
    _description: Option<String>,
}

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
                stderr: ServerStderr::Inherit,
            });
        }
        let Some(server) = &self.server else {
            return Ok(Target {
                endpoint: Endpoint::Builtin,
                label: "builtin".to_owned(),
                stderr: ServerStderr::Inherit,
            });
        };
        if server.starts_with("http://") || server.starts_with("https://") {
            return Ok(Target {
                endpoint: Endpoint::Url {
                    url: server.clone(),
                    headers: BTreeMap::new(),
                    legacy: false,
                },
                label: server.clone(),
                stderr: ServerStderr::Inherit,
            });
        }
        if server.contains("://") {
            return Err(Failure::usage(format!(
                "--server {server:?}: only http:// and https:// URLs are supported (use `-- CMD ARGS…` for a stdio server)"
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

fn load_config(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!(
            "cannot read the MCP configuration file {}: {e}",
            path.display()
        ))
    })?;
    if path.extension().is_some_and(|e| e == "toml") {
        return crate::hosts::codex::servers(&text).map_err(|e| {
            Failure::usage(format!(
                "the MCP configuration file {} is invalid: {e} (expected [mcp_servers.NAME] tables as Codex writes them)",
                path.display()
            ))
        });
    }
    // VS Code's files may have comments: read as JSON with comments when plain JSON fails.
    let parsed = serde_json::from_str::<ConfigFile>(&text).or_else(|e| {
        crate::hosts::read_json_with_comments(&text)
            .ok()
            .and_then(|value| serde_json::from_value(value).ok())
            .ok_or(e)
    });
    let invalid = |e: &dyn fmt::Display| {
        Failure::usage(format!(
            "the MCP configuration file {} is invalid: {e} (expected {{\"mcpServers\": {{\"name\": {{\"command\": …}} | {{\"url\": …}}}}}}, or \"servers\" as in VS Code)",
            path.display()
        ))
    };
    let file: ConfigFile = parsed.map_err(|e| invalid(&e))?;
    file.servers().ok_or_else(|| invalid(&"missing field `mcpServers`"))
}

fn entry_target(name: &str, e: &ServerEntry, path: &Path) -> Result<Target, Failure> {
    let bad = |what: &str| Failure::usage(format!("server {name:?} in {}: {what}", path.display()));
    let kind = e.kind.as_deref();
    match (&e.command, &e.url) {
        (Some(_), Some(_)) => Err(bad("has both \"command\" and \"url\"; keep one")),
        (None, None) => Err(bad("needs \"command\" (a stdio server) or \"url\" (an HTTP server)")),
        (Some(command), None) => {
            if !matches!(kind, None | Some("stdio")) {
                return Err(bad(&format!("\"type\": {kind:?} does not go with \"command\"")));
            }
            Ok(Target {
                endpoint: Endpoint::Command {
                    program: command.clone(),
                    args: e.args.clone(),
                    env: e.env.clone(),
                    cwd: e.cwd.clone(),
                },
                label: name.to_owned(),
                stderr: ServerStderr::Inherit,
            })
        }
        (None, Some(url)) => {
            let legacy = match kind {
                None | Some("http") | Some("streamable-http") | Some("streamableHttp") => false,
                Some("sse") => true,
                Some(other) => return Err(bad(&format!("unknown \"type\": {other:?} (use http or sse)"))),
            };
            Ok(Target {
                endpoint: Endpoint::Url {
                    url: url.clone(),
                    headers: e.headers.clone(),
                    legacy,
                },
                label: name.to_owned(),
                stderr: ServerStderr::Inherit,
            })
        }
    }
}

/// How to connect: the timeout and whether to trace the wire.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Connect and per-request timeout.
    pub timeout: Duration,
    /// Print every JSON-RPC message to stderr.
    pub trace_wire: bool,
    /// How to pick the protocol era.
    pub mode: ConnectMode,
    /// OAuth 2.1 with a loopback redirect on this port, when an HTTP server asks.
    pub oauth_port: Option<u16>,
    /// Where the client records its metrics.
    pub telemetry: mcpkit::telemetry::Telemetry,
}

impl Target {
    /// The command that starts a stdio target (`None` for an HTTP server).
    pub fn command(&self) -> Result<Option<tokio::process::Command>, Failure> {
        match &self.endpoint {
            Endpoint::Url { .. } => Ok(None),
            Endpoint::Command {
                program,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).envs(env);
                if let Some(d) = cwd {
                    cmd.current_dir(d);
                }
                Ok(Some(cmd))
            }
            Endpoint::Builtin => {
                let exe = std::env::current_exe()
                    .map_err(|e| Failure::usage(format!("cannot find the mcpkit binary: {e}")))?;
                let mut cmd = tokio::process::Command::new(exe);
                cmd.arg("serve");
                Ok(Some(cmd))
            }
        }
    }

    /// Open the transport (spawn the child, or prepare the HTTP client).
    pub fn open(&self, timeout: Duration, oauth_port: Option<u16>) -> Result<BoxTransport, Failure> {
        match &self.endpoint {
            Endpoint::Url { .. } => self.open_http(timeout, oauth_port).map(Transport::boxed),
            Endpoint::Command { program, .. } => {
                let cmd = self.command()?.ok_or_else(|| Failure::usage("not a stdio server"))?;
                self.spawn(cmd)
                    .map(Transport::boxed)
                    .map_err(|e| Failure::usage(format!("cannot start {program}: {e}")))
            }
            Endpoint::Builtin => {
                let cmd = self.command()?.ok_or_else(|| Failure::usage("not a stdio server"))?;
                self.spawn(cmd)
                    .map(Transport::boxed)
                    .map_err(|e| Failure::usage(format!("cannot start the built-in server: {e}")))
            }
        }
    }

    /// Spawn a stdio server, its stderr sent where `--server-stderr` says.
    fn spawn(&self, mut cmd: tokio::process::Command) -> std::io::Result<ChildTransport> {
        let stderr = match &self.stderr {
            ServerStderr::Inherit => Stderr::Inherit,
            ServerStderr::Quiet => Stderr::Null,
            ServerStderr::File(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| std::io::Error::new(e.kind(), format!("--server-stderr {}: {e}", path.display())))?;
                cmd.stderr(file);
                Stderr::AsConfigured
            }
        };
        ChildTransport::from_command(cmd, stderr)
    }

    /// Prepare the HTTP client transport of an HTTP target.
    pub fn open_http(&self, timeout: Duration, oauth_port: Option<u16>) -> Result<HttpClientTransport, Failure> {
        let Endpoint::Url { url, headers, legacy } = &self.endpoint else {
            return Err(Failure::usage(format!("{} is not an HTTP server", self.label)));
        };
        let mut b = HttpClientTransport::builder(url.clone())
            .force_legacy(*legacy)
            .connect_timeout(Some(timeout));
        for (k, v) in headers {
            b = b.header(k, v);
        }
        if let Some(port) = oauth_port {
            b = b.auth(oauth_client(url, port)?);
        }
        b.build().map_err(|e| Failure::usage(e.to_string()))
    }

    /// Connect a client (built by `builder`) and run the handshake, within the timeout.
    pub async fn connect(&self, builder: ClientBuilder, options: ConnectOptions) -> Result<Client, Failure> {
        let transport = self.open(options.timeout, options.oauth_port)?;
        self.connect_over(builder, options, transport).await
    }

    /// Connect a client (built by `builder`) over an opened `transport` and run the handshake,
    /// within the timeout.
    pub async fn connect_over<T: Transport>(
        &self,
        builder: ClientBuilder,
        options: ConnectOptions,
        transport: T,
    ) -> Result<Client, Failure> {
        let builder = builder
            .peer_options(PeerOptions {
                request_timeout: Some(options.timeout),
                ..PeerOptions::default()
            })
            .telemetry(options.telemetry.clone())
            .mode(options.mode);
        let connecting = connect_traced(builder, transport, options.trace_wire);
        match tokio::time::timeout(options.timeout, connecting).await {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(Failure::usage(format!(
                "cannot connect to {}: {}",
                self.label,
                one_line(&e.to_string())
            ))),
            Err(_) => Err(Failure::usage(format!(
                "{} did not answer the handshake within {:?} (raise --timeout?)",
                self.label, options.timeout
            ))),
        }
    }
}

async fn connect_traced<T: Transport>(builder: ClientBuilder, t: T, trace: bool) -> mcpkit::Result<Client> {
    if trace {
        builder.connect(traced(t, "server")).await
    } else {
        builder.connect(t).await
    }
}

/// An OAuth 2.1 client for `url` that prints the authorization URL and awaits the browser's
/// redirect on the loopback `port`.
fn oauth_client(url: &str, port: u16) -> Result<std::sync::Arc<mcpkit::auth::OAuthClient>, Failure> {
    let authorizer = mcpkit::auth::LoopbackAuthorizer::new(|url| {
        eprintln!("Open this URL in a browser to authorize mcpkit:\n  {url}");
        Ok(())
    });
    mcpkit::auth::OAuthClient::builder(url)
        .client_name("mcpkit")
        .redirect_uri(format!("http://127.0.0.1:{port}/callback"))
        .authorizer(std::sync::Arc::new(authorizer))
        .build()
        .map(std::sync::Arc::new)
        .map_err(|e| Failure::usage(format!("cannot set up OAuth for {url}: {e}")))
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
