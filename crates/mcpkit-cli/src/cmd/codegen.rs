//! `mcpkit codegen`: write a typed Rust client for a server's tools (see the `mcpkit-codegen`
//! crate), or with `--check` tell whether a file written earlier still matches them. Built with
//! the `codegen` feature (in `full`); without it the command says so.

#[cfg(feature = "codegen")]
use std::path::Path;
use std::path::PathBuf;

#[cfg(feature = "codegen")]
use mcpkit::Client;

#[cfg(feature = "codegen")]
use super::with_client;
use super::Globals;
#[cfg(feature = "codegen")]
use crate::target::one_line;
use crate::target::{Failure, TargetArgs};

/// Write a typed Rust client for the server's tools: `mcpkit codegen --out src/calc.rs -- CMD`.
/// With `--check`, exit 1 when FILE no longer matches the server's tools.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The Rust file to write (with --check: to check).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Do not write: compare FILE's fingerprint with the server's tools; exit code 0 when
    /// they match, 1 (naming the tools added, removed and changed) when they drifted.
    #[arg(long)]
    check: bool,
    /// The client type's name (default: from the server's name, `calc` → `CalcClient`).
    #[arg(long, value_name = "NAME")]
    client_name: Option<String>,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, list every tool (all pages), then write or check the file.
    #[cfg(not(feature = "codegen"))]
    pub async fn run(self, _globals: &Globals) -> Result<u8, Failure> {
        Err(Failure::not_built("this command", "codegen"))
    }

    /// Connect, list every tool (all pages), then write or check the file.
    #[cfg(feature = "codegen")]
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        if self.check {
            // Read the file first: a missing file fails without starting the server.
            let source = read(&self.out)?;
            let target = self.target.clone();
            with_client("codegen", &target, globals, |c| self.check(c, source)).await
        } else {
            let target = self.target.clone();
            with_client("codegen", &target, globals, |c| self.write(c)).await
        }
    }
}

#[cfg(feature = "codegen")]
impl Args {
    async fn write(self, client: Client) -> Result<u8, Failure> {
        let tools = client.list_all_tools().await?;
        let info = client.server_info();
        let mut options = mcpkit_codegen::Options::for_server(&info.name, &info.version);
        if let Some(name) = &self.client_name {
            options.client_name = name.clone();
        }
        quiet_generator_panics();
        let generated = mcpkit_codegen::generate(&tools, &options).map_err(|e| Failure::usage(e.to_string()))?;
        for w in &generated.warnings {
            eprintln!("warning: {w}");
        }
        write_atomically(&self.out, &generated.source)?;
        eprintln!(
            "wrote {}: {} tools, fingerprint {}",
            self.out.display(),
            tools.len(),
            generated.fingerprint
        );
        Ok(0)
    }

    async fn check(self, client: Client, source: String) -> Result<u8, Failure> {
        let Some(stamp) = mcpkit_codegen::read_stamp(&source) else {
            return Err(Failure::usage(format!(
                "{} has no fingerprint: it was not written by `mcpkit codegen` (or was edited); regenerate it with `mcpkit codegen --out {}`",
                self.out.display(),
                self.out.display()
            )));
        };
        let tools = client.list_all_tools().await?;
        match mcpkit_codegen::drift(&stamp, &tools) {
            None => {
                eprintln!("{} matches the server's {} tools", self.out.display(), tools.len());
                Ok(0)
            }
            Some(how) => Err(Failure {
                code: 1,
                message: format!(
                    "{} is out of date: the server's tools changed ({how}); regenerate it with `mcpkit codegen --out {}` and the same target",
                    self.out.display(),
                    self.out.display()
                ),
            }),
        }
    }
}

#[cfg(feature = "codegen")]
fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!(
            "cannot read {}: {}; generate it with `mcpkit codegen --out {}`",
            path.display(),
            one_line(&e.to_string()),
            path.display()
        ))
    })
}

/// Write beside the destination, then rename: a failed run never leaves half a file.
#[cfg(feature = "codegen")]
fn write_atomically(path: &Path, text: &str) -> Result<(), Failure> {
    let fail =
        |e: std::io::Error| Failure::usage(format!("cannot write {}: {}", path.display(), one_line(&e.to_string())));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.mcpkit-codegen.tmp"));
    std::fs::write(&tmp, text).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}

/// The type generator panics on a few schemas it does not support; the codegen crate catches
/// that and falls back to `serde_json::Value` with a warning, so the panic message itself is
/// noise. Every other panic is still reported.
#[cfg(feature = "codegen")]
fn quiet_generator_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.location().is_some_and(|l| l.file().contains("typify")) {
            return;
        }
        previous(info);
    }));
}
