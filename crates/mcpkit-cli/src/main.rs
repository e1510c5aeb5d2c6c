//! `mcpkit`: serve the reference MCP server; inspect, call, benchmark and bridge any MCP server.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use mcpkit::auth::resource::{IntrospectionVerifier, JwtVerifier, ProtectedResource, TokenVerifier};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::transport::stdio::stdio;
use mcpkit_cli::target::{ConnectOptions, Failure, TargetArgs};
use tokio_util::sync::CancellationToken;

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
    #[command(subcommand)]
    command: Command,
}

/// OAuth 2.1 protection of `mcpkit serve --http` (the resource-server side).
#[derive(clap::Args, Debug, Clone, Default)]
struct ServeAuthArgs {
    /// Protect the HTTP endpoint with OAuth 2.1: accept only bearer tokens issued by this
    /// authorization server (its issuer URL, advertised in the protected-resource metadata).
    /// Needs --auth-jwks or --auth-introspect.
    #[arg(long, requires = "http", value_name = "URL")]
    auth_issuer: Option<String>,
    /// The resource identifier tokens must be issued for (their audience). Default: the
    /// endpoint's own URL, http://ADDR/mcp with the bound address.
    #[arg(long, requires = "auth_issuer", value_name = "URL")]
    auth_audience: Option<String>,
    /// Verify JWT access tokens with the keys published at this JWKS URL.
    #[arg(long, requires = "auth_issuer", value_name = "URL")]
    auth_jwks: Option<String>,
    /// Verify tokens by RFC 7662 introspection at this URL (with --auth-client-id and
    /// --auth-client-secret, this server's credentials at the authorization server).
    #[arg(long, requires = "auth_issuer", conflicts_with = "auth_jwks", value_name = "URL")]
    auth_introspect: Option<String>,
    /// This server's client id at the introspection endpoint.
    #[arg(long, requires = "auth_introspect", value_name = "ID")]
    auth_client_id: Option<String>,
    /// This server's client secret at the introspection endpoint.
    #[arg(long, requires = "auth_introspect", value_name = "SECRET")]
    auth_client_secret: Option<String>,
    /// Scopes every request needs (comma-separated); named in the 401 challenge.
    #[arg(long, requires = "auth_issuer", value_delimiter = ',', value_name = "SCOPE")]
    auth_scope: Vec<String>,
    /// Extra scopes one JSON-RPC method needs, as METHOD=SCOPE[,SCOPE] (repeatable), e.g.
    /// tools/call=mcp:write. A token without them gets 403 insufficient_scope (step-up).
    #[arg(long, requires = "auth_issuer", value_name = "METHOD=SCOPES")]
    auth_method_scope: Vec<String>,
    /// The scopes advertised in the metadata (`scopes_supported`; comma-separated).
    #[arg(long, requires = "auth_issuer", value_delimiter = ',', value_name = "SCOPE")]
    auth_scopes_supported: Vec<String>,
}

impl ServeAuthArgs {
    /// The resource-server layer these flags describe (`None` without --auth-issuer), for the
    /// endpoint at `endpoint` (used when --auth-audience is not given).
    fn protection(&self, endpoint: &str) -> Result<Option<ProtectedResource>, Failure> {
        let Some(issuer) = &self.auth_issuer else {
            return Ok(None);
        };
        let usage = |message: String| Failure { code: 2, message };
        let audience = self.auth_audience.clone().unwrap_or_else(|| endpoint.to_owned());
        let verifier: Arc<dyn TokenVerifier> = match (&self.auth_jwks, &self.auth_introspect) {
            (Some(jwks), None) => {
                Arc::new(JwtVerifier::new(issuer.clone(), jwks, audience.clone()).map_err(|e| usage(e.to_string()))?)
            }
            (None, Some(endpoint)) => {
                let (Some(id), Some(secret)) = (&self.auth_client_id, &self.auth_client_secret) else {
                    return Err(usage(
                        "--auth-introspect needs --auth-client-id and --auth-client-secret".into(),
                    ));
                };
                Arc::new(
                    IntrospectionVerifier::new(endpoint, id.clone(), secret.clone(), audience.clone())
                        .map_err(|e| usage(e.to_string()))?,
                )
            }
            _ => return Err(usage("--auth-issuer needs --auth-jwks or --auth-introspect".into())),
        };
        let mut rs = ProtectedResource::new(&audience, [issuer.clone()], verifier).map_err(|e| usage(e.to_string()))?;
        if !self.auth_scopes_supported.is_empty() {
            rs = rs.scopes_supported(self.auth_scopes_supported.iter().cloned());
        }
        if !self.auth_scope.is_empty() {
            rs = rs.required_scopes(self.auth_scope.iter().cloned());
        }
        for entry in &self.auth_method_scope {
            let Some((method, scopes)) = entry.split_once('=') else {
                return Err(usage(format!(
                    "--auth-method-scope {entry:?}: expected METHOD=SCOPE[,SCOPE]"
                )));
            };
            let scopes: Vec<&str> = scopes.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
            if method.is_empty() || scopes.is_empty() {
                return Err(usage(format!(
                    "--auth-method-scope {entry:?}: expected METHOD=SCOPE[,SCOPE]"
                )));
            }
            rs = rs.method_scopes(method, scopes);
        }
        Ok(Some(rs))
    }
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
        /// Serve handshake-era requests without sessions (each POST on its own).
        #[arg(long, alias = "stateless", requires = "http")]
        sessionless: bool,
        #[command(flatten)]
        auth: ServeAuthArgs,
    },
    /// Connect to a server and print what it offers: server info, negotiated revision,
    /// capabilities, tools, resources, templates and prompts.
    Inspect {
        /// Print the raw JSON results instead of tables.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Call a tool: `mcpkit call echo message=hi`. Values are typed by the tool's input schema
    /// and checked before the call. Exit code 0 on success, 1 when the tool reports an error
    /// (isError), 2 on usage or protocol errors.
    Call {
        /// The tool.
        tool: String,
        /// Arguments as key=value (numbers, booleans, arrays and objects as JSON).
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        /// Arguments as a JSON object (key=value pairs override its members).
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
        /// Print the raw JSON result.
        #[arg(long)]
        json: bool,
        /// Save images, audio and binary resources here (default: a new temporary directory).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Read a resource: `mcpkit read test://static-text`.
    Read {
        /// The resource URI.
        uri: String,
        /// Print the raw JSON result.
        #[arg(long)]
        json: bool,
        /// Save binary contents here (default: a new temporary directory).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Get a prompt: `mcpkit prompt test_prompt_with_arguments arg1=a arg2=b`.
    Prompt {
        /// The prompt.
        name: String,
        /// Arguments as key=value.
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        /// Print the raw JSON result.
        #[arg(long)]
        json: bool,
        /// Save images and audio here (default: a new temporary directory).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Complete an argument: `mcpkit complete --prompt NAME ARG=PARTIAL` or
    /// `mcpkit complete --resource TEMPLATE ARG=PARTIAL`.
    Complete {
        /// The prompt whose argument to complete.
        #[arg(
            long,
            value_name = "NAME",
            conflicts_with = "resource",
            required_unless_present = "resource"
        )]
        prompt: Option<String>,
        /// The resource template whose variable to complete.
        #[arg(long, value_name = "TEMPLATE")]
        resource: Option<String>,
        /// The argument and what is typed so far.
        #[arg(value_name = "ARG=PARTIAL")]
        pair: String,
        /// Print the raw JSON result.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Check the server answers: prints `ok` (and the round-trip time on stderr).
    Ping {
        #[command(flatten)]
        target: TargetArgs,
    },
    /// Bridge transports. `--listen ADDR -- CMD ARGS…` exposes a stdio server over Streamable
    /// HTTP at http://ADDR/mcp (one child per session, stopped when the session ends);
    /// `--server URL` speaks stdio on stdin/stdout and forwards to a remote HTTP server.
    Proxy {
        /// Serve Streamable HTTP on this address (port 0 picks one; the URL is printed on stderr).
        #[arg(
            long,
            value_name = "ADDR",
            conflicts_with = "server",
            required_unless_present = "server"
        )]
        listen: Option<std::net::SocketAddr>,
        /// The remote server: an http(s) URL, or the NAME of a URL entry in the configuration file.
        #[arg(long, value_name = "URL|NAME")]
        server: Option<String>,
        /// The MCP configuration file for `--server NAME` (default search as for other commands).
        #[arg(long, value_name = "PATH", requires = "server")]
        config: Option<std::path::PathBuf>,
        /// Accept any Host/Origin on the listening side (default: loopback names only).
        #[arg(long, requires = "listen")]
        allow_any_host: bool,
        /// End (and stop the child of) sessions idle this long.
        #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = mcpkit_cli::target::parse_duration)]
        session_timeout: std::time::Duration,
        /// The stdio server to expose with --listen.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Load-test one tool: N callers on one connection (pipelined over stdio, concurrent POSTs
    /// on one HTTP session); prints requests/s and latency percentiles.
    Bench {
        /// The tool to call.
        #[arg(long, value_name = "NAME")]
        tool: String,
        /// Its arguments as a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
        /// Calls in flight at once.
        #[arg(long, short = 'c', default_value_t = 16)]
        concurrency: usize,
        /// Recorded calls (default 10000 unless --duration is given).
        #[arg(long, short = 'n', conflicts_with = "duration")]
        requests: Option<u64>,
        /// Run for this long instead of a number of calls (e.g. 10s).
        #[arg(long, short = 'd', value_parser = mcpkit_cli::target::parse_duration)]
        duration: Option<std::time::Duration>,
        /// Unrecorded calls first.
        #[arg(long, default_value_t = 200)]
        warmup: u64,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
        /// How calls are sent: `wire` (the bench writes them on the connection the client
        /// opened, and parses only what it checks in the replies) or `client` (each through
        /// mcpkit's client). Over https and the legacy HTTP+SSE transport, always `client`.
        #[arg(long, value_enum, default_value_t = mcpkit_cli::bench::Driver::Wire)]
        driver: mcpkit_cli::bench::Driver,
        #[command(flatten)]
        target: TargetArgs,
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
    // Serving stdio is one connection: a current-thread runtime answers a call without waking
    // another thread (reader, handler and writer run on this one) and starts faster.
    let stdio_server = matches!(cli.command, Command::Serve { http: None, .. });
    let mut builder = if stdio_server {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let name = command_name(&cli.command);
    match runtime.block_on(run(cli.command, cli.trace_wire)) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("mcpkit {name}: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Serve { .. } => "serve",
        Command::Inspect { .. } => "inspect",
        Command::Bench { .. } => "bench",
        Command::Call { .. } => "call",
        Command::Read { .. } => "read",
        Command::Prompt { .. } => "prompt",
        Command::Complete { .. } => "complete",
        Command::Ping { .. } => "ping",
        Command::Proxy { .. } => "proxy",
    }
}

fn options(target: &TargetArgs, trace_wire: bool) -> ConnectOptions {
    ConnectOptions {
        timeout: target.timeout,
        trace_wire,
        mode: target.protocol,
        oauth_port: target.oauth.then_some(target.oauth_port),
    }
}

async fn run(command: Command, trace_wire: bool) -> Result<u8, Failure> {
    match command {
        Command::Serve { http: None, .. } => {
            let outcome = if trace_wire {
                mcpkit_cli::reference::server()
                    .serve(mcpkit_cli::wire::Traced::new(stdio(), "client"))
                    .await
            } else {
                mcpkit_cli::reference::server().serve(stdio()).await
            };
            outcome.map(|()| 0).map_err(|e| Failure {
                code: 1,
                message: e.to_string(),
            })
        }
        Command::Serve {
            http: Some(addr),
            allow_any_host,
            sessionless,
            auth,
        } => {
            let mut config = HttpConfig {
                sessionless,
                ..HttpConfig::default()
            };
            if allow_any_host {
                config.allowed_hosts = vec!["*".into()];
                config.allowed_origins = vec!["*".into()];
            }
            serve_http(addr, config, &auth).await.map(|()| 0)
        }
        Command::Inspect { json, target } => {
            let t = target.resolve()?;
            mcpkit_cli::inspect::run(&t, options(&target, trace_wire), json).await?;
            Ok(0)
        }
        Command::Call {
            tool,
            pairs,
            args,
            json,
            out,
            target,
        } => {
            let base = match args.as_deref().map(serde_json::from_str::<serde_json::Value>) {
                None => serde_json::Map::new(),
                Some(Ok(serde_json::Value::Object(m))) => m,
                Some(Ok(_)) => {
                    return Err(Failure::usage(
                        "--args must be a JSON object, e.g. '{\"message\":\"hi\"}'",
                    ))
                }
                Some(Err(e)) => return Err(Failure::usage(format!("--args is not valid JSON: {e}"))),
            };
            let t = target.resolve()?;
            let bar = mcpkit_cli::call::progress_bar();
            let builder = mcpkit_cli::interact::install(
                mcpkit::Client::builder().name("mcpkit-call", env!("CARGO_PKG_VERSION")),
                mcpkit_cli::interact::interactive(),
                bar.clone(),
            );
            let client = t.connect(builder, options(&target, trace_wire)).await?;
            let plan = mcpkit_cli::call::CallPlan {
                tool,
                pairs,
                base,
                json,
                out_dir: out,
                timeout: target.timeout,
            };
            let outcome = mcpkit_cli::call::call(&client, &plan, &bar).await;
            let _ = client.close().await;
            outcome
        }
        Command::Read { uri, json, out, target } => {
            with_client(&target, trace_wire, |c| async move {
                mcpkit_cli::call::read(&c, &uri, json, out).await
            })
            .await
        }
        Command::Prompt {
            name,
            pairs,
            json,
            out,
            target,
        } => {
            with_client(&target, trace_wire, |c| async move {
                mcpkit_cli::call::prompt(&c, &name, &pairs, json, out).await
            })
            .await
        }
        Command::Complete {
            prompt,
            resource,
            pair,
            json,
            target,
        } => {
            let reference = match (prompt, resource) {
                (Some(p), _) => mcpkit_cli::call::CompleteRef::Prompt(p),
                (None, Some(r)) => mcpkit_cli::call::CompleteRef::Resource(r),
                (None, None) => return Err(Failure::usage("give --prompt NAME or --resource TEMPLATE")),
            };
            with_client(&target, trace_wire, |c| async move {
                mcpkit_cli::call::complete(&c, &reference, &pair, json).await
            })
            .await
        }
        Command::Ping { target } => {
            with_client(&target, trace_wire, |c| async move { mcpkit_cli::call::ping(&c).await }).await
        }
        Command::Proxy {
            listen: Some(addr),
            allow_any_host,
            session_timeout,
            command,
            ..
        } => {
            let mut config = HttpConfig {
                session_idle_timeout: session_timeout,
                ..HttpConfig::default()
            };
            if allow_any_host {
                config.allowed_hosts = vec!["*".into()];
                config.allowed_origins = vec!["*".into()];
            }
            mcpkit_cli::proxy::listen(addr, &command, config, trace_wire, shutdown_signal()).await?;
            Ok(0)
        }
        Command::Proxy {
            listen: None,
            server,
            config,
            command,
            ..
        } => {
            if !command.is_empty() {
                return Err(Failure::usage(
                    "`-- CMD` goes with --listen; --server forwards to a URL",
                ));
            }
            let target = TargetArgs {
                server,
                config,
                ..TargetArgs::default()
            }
            .resolve()?;
            if !matches!(target.endpoint, mcpkit_cli::target::Endpoint::Url { .. }) {
                return Err(Failure::usage(format!(
                    "{} is not an HTTP server; `proxy --server` forwards to a URL",
                    target.label
                )));
            }
            let remote = match target.open(std::time::Duration::from_secs(30), None)? {
                mcpkit_cli::target::AnyTransport::Http(h) => h,
                mcpkit_cli::target::AnyTransport::Child(_) => {
                    return Err(Failure::usage(format!(
                        "{} is a stdio server; `proxy --server` forwards to an HTTP server",
                        target.label
                    )))
                }
            };
            if trace_wire {
                mcpkit_cli::proxy::to_remote(stdio(), mcpkit_cli::wire::Traced::new(remote, "server")).await?;
            } else {
                mcpkit_cli::proxy::to_remote(stdio(), remote).await?;
            }
            Ok(0)
        }
        Command::Bench {
            tool,
            args,
            concurrency,
            requests,
            duration,
            warmup,
            json,
            driver,
            target,
        } => {
            let args = match serde_json::from_str::<serde_json::Value>(&args) {
                Ok(serde_json::Value::Object(m)) => m,
                Ok(_) => {
                    return Err(Failure::usage(
                        "--args must be a JSON object, e.g. '{\"message\":\"hi\"}'",
                    ))
                }
                Err(e) => return Err(Failure::usage(format!("--args is not valid JSON: {e}"))),
            };
            if concurrency == 0 {
                return Err(Failure::usage("--concurrency must be at least 1"));
            }
            let amount = match (requests, duration) {
                (_, Some(d)) => mcpkit_cli::bench::Amount::Duration(d),
                (Some(n), None) => mcpkit_cli::bench::Amount::Requests(n),
                (None, None) => mcpkit_cli::bench::Amount::Requests(10_000),
            };
            let plan = mcpkit_cli::bench::Plan {
                tool,
                args,
                concurrency,
                amount,
                warmup,
                progress: !json && mcpkit_cli::bench::stderr_is_terminal(),
                timeout: target.timeout,
            };
            let t = target.resolve()?;
            let bench = mcpkit_cli::bench::Bench::connect(
                &t,
                mcpkit::Client::builder().name("mcpkit-bench", env!("CARGO_PKG_VERSION")),
                options(&target, trace_wire),
                driver,
            )
            .await?;
            let outcome = mcpkit_cli::bench::run(&bench, &t.label, &plan).await;
            bench.close().await;
            let (report, first_error) = outcome?;
            if json {
                println!("{}", serde_json::to_string(&report).unwrap_or_default());
            } else {
                print!("{}", report.render());
            }
            if let Some(e) = first_error {
                eprintln!(
                    "mcpkit bench: {} of {} calls failed; the first: {e}",
                    report.errors, report.requests
                );
            }
            Ok(0)
        }
    }
}

/// Connect, run `f`, disconnect.
async fn with_client<F, Fut>(target: &TargetArgs, trace_wire: bool, f: F) -> Result<u8, Failure>
where
    F: FnOnce(mcpkit::Client) -> Fut,
    Fut: std::future::Future<Output = Result<u8, Failure>>,
{
    let t = target.resolve()?;
    let client = t
        .connect(
            mcpkit::Client::builder().name("mcpkit", env!("CARGO_PKG_VERSION")),
            options(target, trace_wire),
        )
        .await?;
    let outcome = f(client.clone()).await;
    let _ = client.close().await;
    outcome
}

async fn serve_http(addr: std::net::SocketAddr, config: HttpConfig, auth: &ServeAuthArgs) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure {
        code: 1,
        message: e.to_string(),
    };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(io)?;
    let endpoint = format!("http://{}/mcp", listener.local_addr().map_err(io)?);
    let stop = CancellationToken::new();
    let http = HttpServer::new(mcpkit_cli::reference::server())
        .config(config)
        .sse_legacy(true)
        .shutdown(stop.clone());
    // Every route (Streamable HTTP and the legacy HTTP+SSE endpoints) behind the layer.
    let http = match auth.protection(&endpoint)? {
        Some(protection) => {
            eprintln!("mcpkit serve: listening on {endpoint} (OAuth 2.1 protected)");
            http.layer(protection)
        }
        None => {
            eprintln!("mcpkit serve: listening on {endpoint}");
            http
        }
    };
    tokio::spawn(async move {
        shutdown_signal().await;
        stop.cancel();
    });
    http.serve(listener).await.map_err(io)
}

/// Resolves on Ctrl-C or SIGTERM.
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
