//! `mcpkit install`, `mcpkit uninstall` and `mcpkit list-installed`: a server's entry in an MCP
//! host's own configuration file (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex,
//! Gemini CLI, Goose, Zed; the formats are in [`crate::hosts`]). Every other entry and key of the
//! file stays; the previous file is kept as `FILE.bak`; a file that is not valid JSON, TOML or
//! YAML is refused with its line and column, and nothing is written.

use std::path::{Path, PathBuf};

use crate::cmd::Globals;
use crate::hosts::{self, file, EditError, Entries, Host, Os, Places, Scope, ServerSpec, ALL_HOSTS};
use crate::target::Failure;

/// Which file of the host: `--config PATH`, or the host's file for `--scope`.
#[derive(Debug, Clone, clap::Args)]
pub struct FileArgs {
    /// The configuration file to edit, instead of the host's default for --scope.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The host's project file (in the current directory) or the user's own; `local` is Claude
    /// Code's entry for this project in the user's file. Default: project for claude-code and
    /// vscode, user for the others.
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
}

impl FileArgs {
    /// The file to edit, its label for messages, and the scope its entries belong to.
    fn path(&self, host: Host, places: &Places) -> Result<(PathBuf, String, Scope), Failure> {
        let scope = self.scope.unwrap_or(host.default_scope());
        // Checked with --config too: the scope says where in the file the entries are.
        let path = host.config_path(scope, places, Os::current()).map_err(Failure::usage)?;
        if let Some(p) = &self.config {
            return Ok((p.clone(), format!("{}, --config", host.name()), scope));
        }
        Ok((path, format!("{}, {scope} scope", host.name()), scope))
    }
}

/// `mcpkit install NAME --host HOST [--env K=V…] -- CMD ARGS…` or `… --url URL [--header K=V…]`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "EXAMPLES:\n  \
    mcpkit install demo --host claude-code -- /abs/path/target/release/demo\n  \
    mcpkit install demo --host codex --env RUST_LOG=info -- demo-server --stdio\n  \
    mcpkit install remote --host vscode --url https://example.com/mcp --header 'Authorization=Bearer TOKEN'\n\n\
Run it again to update the entry (it is replaced where it is; nothing changes when it is already as given).")]
pub struct InstallArgs {
    /// The entry's name in the host's file (letters, digits, '-' and '_').
    pub name: String,
    /// The host whose configuration file to edit.
    #[arg(long, value_enum)]
    pub host: Host,
    /// `--config PATH` or `--scope`.
    #[command(flatten)]
    pub file: FileArgs,
    /// An environment variable for the stdio server, KEY=VALUE (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// The Streamable HTTP endpoint of a server the host connects to (instead of `-- CMD ARGS…`).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// A header the host sends to the HTTP server, KEY=VALUE (repeatable).
    #[arg(long = "header", value_name = "KEY=VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// The stdio server the host launches: `-- CMD ARGS…`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl InstallArgs {
    /// Add or update the entry.
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        let spec = self.spec()?;
        let places = Places::from_env();
        let (path, label, scope) = self.file.path(self.host, &places)?;
        let at = Entries {
            host: self.host,
            scope,
            places: &places,
        };
        let old = read(&path)?;
        let new = hosts::install(at, old.as_deref(), &self.name, &spec).map_err(|e| refused(&path, &e))?;
        if old.as_deref() == Some(new.as_str()) {
            println!(
                "{} is already installed as given in {} ({label}); nothing changed",
                self.name,
                path.display()
            );
            return Ok(0);
        }
        let backup = write(&path, &new)?;
        let verb = if old
            .as_deref()
            .is_some_and(|t| hosts::list(at, t).is_ok_and(|l| l.iter().any(|i| i.name == self.name)))
        {
            "updated"
        } else {
            "installed"
        };
        println!("{verb} {} in {} ({label})", self.name, path.display());
        if let Some(b) = backup {
            println!("the previous file is saved as {}", b.display());
        }
        Ok(0)
    }

    fn spec(&self) -> Result<ServerSpec, Failure> {
        if let Some(url) = &self.url {
            if !self.env.is_empty() {
                return Err(Failure::usage(
                    "--env sets a stdio server's environment; an HTTP server gets --header KEY=VALUE",
                ));
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Failure::usage(format!(
                    "--url {url:?}: expected an http:// or https:// URL"
                )));
            }
            return Ok(ServerSpec::Http {
                url: url.clone(),
                headers: pairs("--header", &self.headers)?,
            });
        }
        let Some((program, args)) = self.command.split_first() else {
            return Err(Failure::usage(
                "which server? give `-- CMD ARGS…` (a stdio server the host launches) or --url URL (an HTTP server)",
            ));
        };
        Ok(ServerSpec::Stdio {
            command: absolute_program(program),
            args: args.to_vec(),
            env: pairs("--env", &self.env)?,
        })
    }
}

/// A program given as a relative path (`./target/release/demo`) made absolute: hosts start
/// servers from a working directory of their own. Bare names (`npx`) are looked up on PATH by
/// the host and stay as they are.
fn absolute_program(program: &str) -> String {
    let p = Path::new(program);
    let has_dir = p.components().count() > 1;
    if !has_dir || p.is_absolute() {
        return program.to_owned();
    }
    match std::fs::canonicalize(p) {
        Ok(abs) => {
            eprintln!(
                "mcpkit install: {program} is written as {} (hosts start servers elsewhere)",
                abs.display()
            );
            abs.to_string_lossy().into_owned()
        }
        Err(_) => program.to_owned(),
    }
}

fn pairs(flag: &str, raw: &[String]) -> Result<Vec<(String, String)>, Failure> {
    raw.iter()
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
            _ => Err(Failure::usage(format!("{flag} {p:?}: expected KEY=VALUE"))),
        })
        .collect()
}

fn read(path: &Path) -> Result<Option<String>, Failure> {
    file::read(path).map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))
}

fn write(path: &Path, text: &str) -> Result<Option<PathBuf>, Failure> {
    file::replace(path, text).map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))
}

fn refused(path: &Path, e: &EditError) -> Failure {
    match e {
        EditError::Parse(p) => Failure::usage(format!(
            "{}:{}:{}: {}; nothing was changed (fix the file, or pass --config PATH for another one)",
            path.display(),
            p.line,
            p.column,
            p.message
        )),
        EditError::Invalid(m) => Failure::usage(format!("{}: {m}; nothing was changed", path.display())),
    }
}

/// `mcpkit uninstall NAME --host HOST`.
#[derive(Debug, Clone, clap::Args)]
pub struct UninstallArgs {
    /// The entry's name in the host's file.
    pub name: String,
    /// The host whose configuration file to edit.
    #[arg(long, value_enum)]
    pub host: Host,
    /// `--config PATH` or `--scope`.
    #[command(flatten)]
    pub file: FileArgs,
}

impl UninstallArgs {
    /// Remove the entry (nothing to do, exit code 0, when it is not there).
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        let places = Places::from_env();
        let (path, label, scope) = self.file.path(self.host, &places)?;
        let Some(old) = read(&path)? else {
            println!("{} does not exist; nothing to uninstall", path.display());
            return Ok(0);
        };
        let at = Entries {
            host: self.host,
            scope,
            places: &places,
        };
        match hosts::uninstall(at, &old, &self.name).map_err(|e| refused(&path, &e))? {
            None => println!("{} is not in {} ({label}); nothing changed", self.name, path.display()),
            Some(new) => {
                let backup = write(&path, &new)?;
                println!("uninstalled {} from {} ({label})", self.name, path.display());
                if let Some(b) = backup {
                    println!("the previous file is saved as {}", b.display());
                }
            }
        }
        Ok(0)
    }
}

/// `mcpkit list-installed [--host HOST]`.
#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    /// Only this host (default: every host, each of its files that exists).
    #[arg(long, value_enum)]
    pub host: Option<Host>,
    /// `--config PATH` or `--scope`.
    #[command(flatten)]
    pub file: FileArgs,
    /// Print one JSON array of {host, scope, file, name, server}.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Row {
    host: &'static str,
    scope: String,
    file: String,
    name: String,
    server: String,
}

impl ListArgs {
    /// List the entries of the hosts' files.
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        let places = Places::from_env();
        let files = self.files(&places)?;
        let mut rows = Vec::new();
        let mut failed = false;
        for (host, entries_scope, scope, path) in files {
            let Some(text) = read(&path)? else { continue };
            let at = Entries {
                host,
                scope: entries_scope,
                places: &places,
            };
            match hosts::list(at, &text) {
                Ok(entries) => {
                    if !self.json {
                        println!("{} ({scope}): {}", host.name(), path.display());
                        if entries.is_empty() {
                            println!("  (no servers)");
                        }
                        let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
                        for e in &entries {
                            println!("  {:width$}  {}", e.name, e.server);
                        }
                    }
                    rows.extend(entries.into_iter().map(|e| Row {
                        host: host.name(),
                        scope: scope.clone(),
                        file: path.display().to_string(),
                        name: e.name,
                        server: e.server,
                    }));
                }
                Err(e) => {
                    failed = true;
                    eprintln!("mcpkit list-installed: {}", refused(&path, &e).message);
                }
            }
        }
        if self.json {
            let text = serde_json::to_string_pretty(&rows).map_err(|e| Failure::usage(e.to_string()))?;
            println!("{text}");
        } else if rows.is_empty() && !failed {
            println!("no servers installed in the files looked at");
        }
        Ok(if failed { 2 } else { 0 })
    }

    /// Each file to read: the host, the scope of the entries, the scope's label, the path.
    fn files(&self, places: &Places) -> Result<Vec<(Host, Scope, String, PathBuf)>, Failure> {
        if let Some(p) = &self.file.config {
            let Some(host) = self.host else {
                return Err(Failure::usage("--config needs --host: the host says the file's format"));
            };
            let (_, _, scope) = self.file.path(host, places)?;
            return Ok(vec![(host, scope, "--config".to_owned(), p.clone())]);
        }
        let hosts: Vec<Host> = self.host.map_or_else(|| ALL_HOSTS.to_vec(), |h| vec![h]);
        let mut out = Vec::new();
        for host in hosts {
            for &scope in host.scopes() {
                if self.file.scope.is_some_and(|s| s != scope) {
                    continue;
                }
                if let Ok(path) = host.config_path(scope, places, Os::current()) {
                    out.push((host, scope, scope.to_string(), path));
                }
            }
        }
        Ok(out)
    }
}
