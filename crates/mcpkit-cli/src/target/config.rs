//! The configuration files a `--server NAME` is looked up in: the hosts' `mcpServers` map (and
//! VS Code's `servers`, Zed's `context_servers`, Windsurf's `serverUrl`, Gemini's `httpUrl`,
//! Codex's TOML, Goose's YAML) and the entry asked for.

use super::*;

pub(super) fn default_config_candidates() -> Vec<PathBuf> {
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
/// keeps its `inputs` beside it, ignored here), Zed's `settings.json` `context_servers`.
#[derive(Debug, Deserialize)]
pub(super) struct ConfigFile {
    #[serde(rename = "mcpServers", alias = "servers", alias = "context_servers")]
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
pub(super) struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    /// `serverUrl` is Windsurf's name for it, `httpUrl` Gemini's (whose `url` is HTTP+SSE,
    /// which the fallback reaches too).
    #[serde(alias = "serverUrl", alias = "httpUrl")]
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

pub(super) fn load_config(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>, Failure> {
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
    if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
        return crate::hosts::goose::servers(&text).map_err(|e| {
            Failure::usage(format!(
                "the MCP configuration file {} is invalid: {e} (expected Goose's `extensions` map)",
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

pub(super) fn entry_target(name: &str, e: &ServerEntry, path: &Path) -> Result<Target, Failure> {
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
                stderr: ServerStderr::default(),
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
                stderr: ServerStderr::default(),
            })
        }
    }
}
