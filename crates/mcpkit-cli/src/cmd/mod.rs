//! The subcommands, one module each: an `Args` struct (clap derive) and its `run`, which returns
//! the process exit code or a [`Failure`] to print.

pub mod auth;
pub mod bench;
pub mod call;
pub mod codegen;
pub mod complete;
pub mod dev;
pub mod gateway;
pub mod inspect;
pub mod install;
pub mod interrupt;
pub mod new;
pub mod ping;
pub mod prompt;
pub mod proxy;
pub mod read;
pub mod redis;
pub mod serve;
pub mod skills;

use std::future::Future;
use std::io::IsTerminal as _;

use mcpkit::Client;

use crate::target::{ConnectOptions, Failure, TargetArgs};
use interrupt::{connect_or_interrupt, run_then_close, Interrupt, INTERRUPTED};

/// The top-level flags a command needs (`--verbose`, `--log-format` and `--otlp-endpoint` are
/// handled before any command runs, by [`crate::telemetry`]).
#[derive(Debug, Clone, Default)]
pub struct Globals {
    /// `--trace-wire`: print every JSON-RPC message to stderr.
    pub trace_wire: bool,
    /// Where servers and clients record their metrics.
    pub telemetry: mcpkit::telemetry::Telemetry,
    /// The Prometheus text of `serve --metrics`.
    pub prometheus: Option<mcpkit::telemetry::Prometheus>,
    /// `-v` given (once or more).
    pub verbose: bool,
}

impl Globals {
    /// How to connect to the server `target` names.
    pub fn connect_options(&self, target: &TargetArgs) -> ConnectOptions {
        ConnectOptions {
            timeout: target.timeout,
            trace_wire: self.trace_wire,
            mode: target.protocol,
            oauth_port: target.oauth.then_some(target.oauth_port),
            telemetry: self.telemetry.clone(),
            verbose: self.verbose,
        }
    }
}

/// Connect to `target`, run `f`, disconnect; Ctrl-C cancels what runs and disconnects (see
/// [`interrupt`]).
async fn with_client<F, Fut>(command: &str, target: &TargetArgs, globals: &Globals, f: F) -> Result<u8, Failure>
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<u8, Failure>>,
{
    let t = target.resolve()?;
    let mut interrupt = Interrupt::listen();
    let connecting = t.connect(
        Client::builder().name("mcpkit", env!("CARGO_PKG_VERSION")),
        globals.connect_options(target),
    );
    let client = match connect_or_interrupt(&mut interrupt, connecting).await {
        Ok(c) => c,
        Err(Some(failure)) => return Err(failure),
        Err(None) => return Ok(INTERRUPTED),
    };
    run_then_close(command, &client, &mut interrupt, f(client.clone())).await
}

/// Whether to draw a progress bar: only when stderr is a terminal.
fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Resolves on Ctrl-C or SIGTERM.
#[cfg(unix)]
async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Resolves on Ctrl-C (elsewhere there is no SIGTERM to wait for).
#[cfg(not(unix))]
async fn shutdown_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// `--allow-any-host`, `--allow-host` and `--allow-origin` of an HTTP endpoint: each widens only
/// its own list (accepting any Host never disables the Origin check); named hosts and origins
/// come beside the loopback defaults.
fn allow_hosts_and_origins(
    config: &mut mcpkit::server::http::HttpConfig,
    any_host: bool,
    hosts: &[String],
    origins: &[String],
) {
    if any_host {
        config.allowed_hosts = vec!["*".into()];
    } else {
        config.allowed_hosts.extend(hosts.iter().cloned());
    }
    config.allowed_origins.extend(origins.iter().cloned());
}
