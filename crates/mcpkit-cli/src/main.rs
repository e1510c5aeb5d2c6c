//! `mcpkit`: serve the reference MCP server; inspect, call, benchmark and bridge any MCP server.
//!
//! This file holds only the top-level flags, the list of subcommands and the dispatch; each
//! subcommand is a module of `mcpkit_cli::cmd`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mcpkit_cli::cmd::{self, Globals};
use mcpkit_cli::telemetry::{LogFormat, Options as TelemetryOptions};

#[derive(Parser)]
#[command(
    name = "mcpkit",
    version,
    about = "Model Context Protocol toolkit: serve, inspect, call, benchmark and bridge MCP servers",
    after_help = "TARGETS (every command but serve): --server URL (Streamable HTTP, legacy HTTP+SSE fallback), \
--server NAME (an entry of an MCP configuration file, see --config), or `-- CMD ARGS…` (a stdio server). \
With none, the built-in reference server."
)]
struct Cli {
    /// Log to stderr (-v: info, -vv: debug, -vvv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Print every JSON-RPC message sent and received to stderr, timestamped.
    #[arg(long, global = true)]
    trace_wire: bool,
    /// How logs are written to stderr: text lines or one JSON object per line.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Export spans and metrics over OTLP/HTTP (protobuf) to this base URL, e.g.
    /// http://127.0.0.1:4318 (`/v1/traces` and `/v1/metrics` are appended). Without it, the
    /// standard OTEL_EXPORTER_OTLP_* variables are honoured; OTEL_SERVICE_NAME names the
    /// service (default mcpkit). Needs the `otlp` feature (in `full`).
    #[arg(long, global = true, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// Print what the server sends as sent. Without it, control characters in the server's
    /// text (escape sequences, C1 controls, bidi overrides) are shown escaped on a terminal.
    #[arg(long, global = true)]
    raw: bool,
    #[command(subcommand)]
    command: Command,
}

/// `mcpkit serve …` parsed on its own: clap builds the whole command tree before it parses, and
/// the tree of every other subcommand was ~20 % of the instructions from `exec` to the
/// `initialize` answer of a stdio server. The same flags as `Cli` + `Serve` (global flags after
/// `serve`; before it, `mcpkit -v serve`, the full parser runs).
#[derive(Parser)]
#[command(
    name = "mcpkit",
    bin_name = "mcpkit serve",
    version,
    about = "Run the built-in reference server (every conformance fixture, plus `echo` and `add`): \
on stdio, or with `--http ADDR` over Streamable HTTP at `http://ADDR/mcp`."
)]
struct ServeCli {
    /// Log to stderr (-v: info, -vv: debug, -vvv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Print every JSON-RPC message sent and received to stderr, timestamped.
    #[arg(long)]
    trace_wire: bool,
    /// How logs are written to stderr: text lines or one JSON object per line.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Export spans and metrics over OTLP/HTTP (protobuf) to this base URL (see `mcpkit --help`).
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    #[command(flatten)]
    args: cmd::serve::Args,
}

impl Cli {
    /// The command line, with the `serve` fast path.
    fn from_args() -> Cli {
        if std::env::args_os().nth(1).is_some_and(|a| a == "serve") {
            // argv[0] for this parser is `serve` itself.
            let s = ServeCli::parse_from(std::env::args_os().skip(1));
            return Cli {
                verbose: s.verbose,
                trace_wire: s.trace_wire,
                log_format: s.log_format,
                otlp_endpoint: s.otlp_endpoint,
                raw: false,
                command: Command::Serve(s.args),
            };
        }
        Cli::parse()
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the built-in reference server (every conformance fixture, plus `echo` and `add`):
    /// on stdio, or with `--http ADDR` over Streamable HTTP at `http://ADDR/mcp`.
    Serve(cmd::serve::Args),
    /// Connect to a server and print what it offers: server info, negotiated revision,
    /// capabilities, declared extensions, tools, resources, templates, prompts and skills.
    Inspect(cmd::inspect::Args),
    /// Call a tool: `mcpkit call echo message=hi`. Values are typed by the tool's input schema
    /// and checked before the call. Exit code 0 on success, 1 when the tool reports an error
    /// (isError), 2 on usage or protocol errors, 130 after Ctrl-C (which cancels the call and
    /// ends the session).
    Call(cmd::call::Args),
    /// Read a resource: `mcpkit read test://static-text`.
    Read(cmd::read::Args),
    /// Get a prompt: `mcpkit prompt test_prompt_with_arguments arg1=a arg2=b`.
    Prompt(cmd::prompt::Args),
    /// Complete an argument: `mcpkit complete --prompt NAME ARG=PARTIAL` or
    /// `mcpkit complete --resource TEMPLATE ARG=PARTIAL`.
    Complete(cmd::complete::Args),
    /// Check the server answers: prints `ok` (and the round-trip time on stderr).
    Ping(cmd::ping::Args),
    /// Develop a server in the browser: `mcpkit dev -- cargo run`. A page on loopback (its URL,
    /// with the access token, is the first line on stdout) lists tools, resources and prompts,
    /// calls tools through generated forms, answers sampling and elicitation in dialogs and
    /// shows every JSON-RPC message; a Cargo server is rebuilt and restarted when its `src/`
    /// changes.
    Dev(cmd::dev::Args),
    /// The server's skills (Skills extension): `mcpkit skills` lists them, `mcpkit skills get
    /// NAME` downloads one into ./NAME, every file verified against the skill's digests.
    Skills(cmd::skills::Args),
    /// Bridge transports. `--listen ADDR -- CMD ARGS…` exposes a stdio server over Streamable
    /// HTTP at http://ADDR/mcp (one child per session, stopped when the session ends);
    /// `--server URL` speaks stdio on stdin/stdout and forwards to a remote HTTP server.
    Proxy(cmd::proxy::Args),
    /// Serve many MCP servers behind one endpoint (`--config FILE`, TOML): their tools and
    /// prompts as NAME_<name>, with the limits, authorization and scale-out of `serve`;
    /// upstreams reconnected with backoff, reloaded on SIGHUP or a change of the file.
    Gateway(cmd::gateway::Args),
    /// Load-test one tool: N callers on one connection (pipelined over stdio, concurrent POSTs
    /// on one HTTP session); prints requests/s and latency percentiles.
    Bench(cmd::bench::Args),
    /// Start a new server project: `mcpkit new NAME` writes a cargo project with a stdio server
    /// (or `--http`: Streamable HTTP) built with the macros, a test over the in-memory pair, and a
    /// README with the commands to run, inspect and install it.
    New(cmd::new::Args),
    /// Add or update a server in an MCP host's configuration file: `mcpkit install NAME --host
    /// HOST -- CMD ARGS…` (or `--url URL`) for claude-desktop, claude-code, cursor, vscode,
    /// windsurf, codex, gemini, goose or zed. Other entries stay as they are; the previous file is kept as FILE.bak.
    Install(cmd::install::InstallArgs),
    /// Remove a server from an MCP host's configuration file.
    Uninstall(cmd::install::UninstallArgs),
    /// The servers in the MCP hosts' configuration files (every host, or --host HOST).
    ListInstalled(cmd::install::ListArgs),
    /// Write a typed Rust client for the server's tools: one async method per tool, argument
    /// and result types from their JSON Schemas, and a fingerprint of the tools; `--check`
    /// exits 1 when the file no longer matches the server. Needs the `codegen` feature (in
    /// `full`).
    Codegen(cmd::codegen::Args),
    /// Operate a deployment whose instances share one Redis: `mcpkit redis rotate-keys --redis
    /// URL [--redis-prefix P]` rotates the requestState key ring (the new key seals on every
    /// instance at once, the previous one still opens) and prints the new key's id. Needs the
    /// `redis` feature (in `full`).
    Redis(cmd::redis::Args),
    /// The OAuth logins `--oauth` remembers (in the OS keyring, else a 0600 file under the
    /// user's configuration folder): `mcpkit auth list`, `mcpkit auth logout [SERVER]`.
    Auth(cmd::auth::Args),
}

impl Command {
    /// The name failures are prefixed with (`mcpkit NAME: …`).
    fn name(&self) -> &'static str {
        match self {
            Command::Serve(_) => "serve",
            Command::Inspect(_) => "inspect",
            Command::Bench(_) => "bench",
            Command::Call(_) => "call",
            Command::Read(_) => "read",
            Command::Prompt(_) => "prompt",
            Command::Complete(_) => "complete",
            Command::Ping(_) => "ping",
            Command::Dev(_) => "dev",
            Command::Skills(_) => "skills",
            Command::Proxy(_) => "proxy",
            Command::Gateway(_) => "gateway",
            Command::New(_) => "new",
            Command::Install(_) => "install",
            Command::Uninstall(_) => "uninstall",
            Command::ListInstalled(_) => "list-installed",
            Command::Codegen(_) => "codegen",
            Command::Redis(_) => "redis",
            Command::Auth(_) => "auth",
        }
    }

    async fn run(self, globals: Globals) -> Result<u8, mcpkit_cli::target::Failure> {
        match self {
            Command::Serve(a) => a.run(&globals).await,
            Command::Inspect(a) => a.run(&globals).await,
            Command::Call(a) => a.run(&globals).await,
            Command::Read(a) => a.run(&globals).await,
            Command::Prompt(a) => a.run(&globals).await,
            Command::Complete(a) => a.run(&globals).await,
            Command::Ping(a) => a.run(&globals).await,
            Command::Dev(a) => a.run(&globals).await,
            Command::Skills(a) => a.run(&globals).await,
            Command::Proxy(a) => a.run(&globals).await,
            Command::Gateway(a) => a.run(&globals).await,
            Command::Bench(a) => a.run(&globals).await,
            Command::New(a) => a.run(&globals).await,
            Command::Install(a) => a.run(&globals).await,
            Command::Uninstall(a) => a.run(&globals).await,
            Command::ListInstalled(a) => a.run(&globals).await,
            Command::Codegen(a) => a.run(&globals).await,
            Command::Redis(a) => a.run(&globals).await,
            Command::Auth(a) => a.run(&globals).await,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::from_args();
    mcpkit_cli::terminal::set_raw(cli.raw);
    let telemetry = mcpkit_cli::telemetry::init(&TelemetryOptions {
        verbose: cli.verbose,
        log_format: cli.log_format,
        otlp_endpoint: cli.otlp_endpoint.clone(),
        prometheus: match &cli.command {
            Command::Serve(a) => a.metrics_addr().is_some(),
            Command::Gateway(a) => a.metrics_addr().is_some(),
            _ => false,
        },
        print_trace: matches!(&cli.command, Command::Call(a) if a.print_trace()),
    });
    // Serving stdio is one connection: a current-thread runtime answers a call without waking
    // another thread (reader, handler and writer run on this one) and starts faster.
    // `--threads 1` is the same for an HTTP endpoint: a forwarded call crosses several tasks,
    // and on a multi-thread runtime each hop may wake a parked thread.
    let stdio_server = matches!(&cli.command, Command::Serve(a) if a.on_stdio());
    let threads = match &cli.command {
        Command::Serve(a) => a.threads(),
        Command::Gateway(a) => a.threads(),
        _ => None,
    };
    let mut builder = if stdio_server || threads == Some(1) {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        if let Some(n) = threads {
            builder.worker_threads(n);
        }
        builder
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let name = cli.command.name();
    let globals = Globals {
        trace_wire: cli.trace_wire,
        telemetry: telemetry.telemetry.clone(),
        prometheus: telemetry.prometheus.clone(),
        verbose: cli.verbose > 0,
    };
    // One span around the whole command: its requests (and the server spans they cause) are
    // one trace.
    let span = telemetry.command_span(name);
    let outcome = runtime.block_on(tracing::Instrument::instrument(cli.command.run(globals), span));
    // Export what is left before the runtime and the process go.
    drop(runtime);
    telemetry.shutdown();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            // Failures carry the server's error messages.
            eprintln!("mcpkit {name}: {}", mcpkit_cli::terminal::err(&f.message));
            ExitCode::from(f.code)
        }
    }
}
