//! `mcpkit`: serve the reference MCP server, or inspect any MCP server.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::transport::stdio::stdio;

#[derive(Parser)]
#[command(
    name = "mcpkit",
    version,
    about = "Model Context Protocol toolkit: serve, inspect and call MCP servers"
)]
struct Cli {
    /// Log to stderr (-v: info, -vv: debug, -vvv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the built-in reference server (every conformance fixture, plus `echo` and `add`) on stdio.
    Serve,
    /// Connect to a server and print what it offers.
    ///
    /// With `-- CMD ARGS…` it spawns that stdio server; with nothing, the built-in reference server.
    Inspect {
        /// Print the raw JSON results instead of tables.
        #[arg(long)]
        json: bool,
        /// The stdio server to launch.
        #[arg(last = true)]
        command: Vec<String>,
    },
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Logs go to stderr only: stdout carries the protocol when serving on stdio.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(run(cli.command))
}

async fn run(command: Command) -> ExitCode {
    match command {
        Command::Serve => match mcpkit_cli::reference::server().serve(stdio()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcpkit serve: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Inspect { json, command } => {
            let transport = match spawn_target(&command) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("mcpkit inspect: {e}");
                    return ExitCode::from(2);
                }
            };
            match mcpkit_cli::inspect::run(transport, json).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcpkit inspect: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// The stdio server to talk to: `CMD ARGS…`, or this binary's own reference server.
fn spawn_target(command: &[String]) -> Result<ChildTransport, String> {
    let mut cmd = match command.split_first() {
        Some((program, args)) => {
            let mut c = tokio::process::Command::new(program);
            c.args(args);
            c
        }
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("cannot find the mcpkit binary: {e}"))?;
            let mut c = tokio::process::Command::new(exe);
            c.arg("serve");
            c
        }
    };
    cmd.stdin(std::process::Stdio::piped());
    let what = command.first().map_or("mcpkit serve", String::as_str).to_owned();
    ChildTransport::from_command(cmd, Stderr::Inherit).map_err(|e| format!("cannot start {what}: {e}"))
}
