//! `mcpkit`: serve the reference MCP server, or inspect any MCP server.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::transport::http::client::HttpClientTransport;
use mcpkit::transport::http::server::{serve_listener, HttpConfig};
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
    /// Run the built-in reference server (every conformance fixture, plus `echo` and `add`):
    /// on stdio, or with `--http ADDR` over Streamable HTTP at `http://ADDR/mcp`.
    Serve {
        /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:3000; port 0 picks one) instead
        /// of stdio. The bound URL is printed on stderr.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Accept any Host/Origin (only behind a proxy that checks them; default: loopback names).
        #[arg(long, requires = "http")]
        allow_any_host: bool,
        /// Serve without sessions (each POST on its own).
        #[arg(long, requires = "http")]
        stateless: bool,
    },
    /// Connect to a server and print what it offers.
    ///
    /// `--server URL` connects over Streamable HTTP (falling back to legacy HTTP+SSE);
    /// `-- CMD ARGS…` spawns that stdio server; with neither, the built-in reference server.
    Inspect {
        /// Print the raw JSON results instead of tables.
        #[arg(long)]
        json: bool,
        /// The URL of an HTTP server, e.g. http://127.0.0.1:3000/mcp.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        server: Option<String>,
        /// Authorize with OAuth 2.1 when the HTTP server asks: the authorization URL is printed,
        /// and the browser's redirect is awaited on http://127.0.0.1:PORT/callback.
        #[arg(long, requires = "server")]
        oauth: bool,
        /// The port of the OAuth loopback redirect URI.
        #[arg(long, value_name = "PORT", default_value_t = 33418, requires = "oauth")]
        oauth_port: u16,
        /// The stdio server to launch.
        #[arg(last = true)]
        command: Vec<String>,
    },
}

/// The HTTP client transport for `url`, with an OAuth client using a loopback redirect on
/// `oauth_port` when asked for.
fn http_transport(url: &str, oauth_port: Option<u16>) -> std::io::Result<HttpClientTransport> {
    let mut builder = HttpClientTransport::builder(url);
    if let Some(port) = oauth_port {
        let authorizer = mcpkit::auth::LoopbackAuthorizer::new(|url| {
            eprintln!("Open this URL in a browser to authorize mcpkit:\n  {url}");
            Ok(())
        });
        let oauth = mcpkit::auth::OAuthClient::builder(url)
            .client_name("mcpkit")
            .redirect_uri(format!("http://127.0.0.1:{port}/callback"))
            .authorizer(std::sync::Arc::new(authorizer))
            .build()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        builder = builder.auth(std::sync::Arc::new(oauth));
    }
    builder.build()
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
        Command::Serve { http: None, .. } => match mcpkit_cli::reference::server().serve(stdio()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mcpkit serve: {e}");
                ExitCode::FAILURE
            }
        },
        Command::Serve {
            http: Some(addr),
            allow_any_host,
            stateless,
        } => {
            let mut config = HttpConfig {
                stateless,
                ..HttpConfig::default()
            };
            if allow_any_host {
                config.allowed_hosts = vec!["*".into()];
                config.allowed_origins = vec!["*".into()];
            }
            match serve_http(addr, config).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("mcpkit serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Inspect {
            json,
            server: Some(url),
            oauth,
            oauth_port,
            ..
        } => {
            let outcome = match http_transport(&url, oauth.then_some(oauth_port)) {
                Ok(t) => mcpkit_cli::inspect::run(t, json).await,
                Err(e) => Err(e.into()),
            };
            finish("inspect", outcome)
        }
        Command::Inspect {
            json,
            server: None,
            command,
            ..
        } => match spawn_target(&command) {
            Ok(t) => finish("inspect", mcpkit_cli::inspect::run(t, json).await),
            Err(e) => {
                eprintln!("mcpkit inspect: {e}");
                ExitCode::from(2)
            }
        },
    }
}

/// Exit code 0 on success; 2 with the error on stderr otherwise.
fn finish(command: &str, outcome: mcpkit::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpkit {command}: {e}");
            ExitCode::from(2)
        }
    }
}

async fn serve_http(addr: std::net::SocketAddr, config: HttpConfig) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("mcpkit serve: listening on http://{}/mcp", listener.local_addr()?);
    let shutdown = async {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    };
    serve_listener(mcpkit_cli::reference::server(), listener, config, shutdown).await
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
