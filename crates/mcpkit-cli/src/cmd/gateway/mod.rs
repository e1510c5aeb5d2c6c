//! `mcpkit gateway --config FILE`: many MCP servers behind one endpoint. Each upstream of the
//! file (a stdio command or an HTTP URL) is connected, kept connected, and served under its
//! name (`NAME_<tool>`) by one server, with the limits, authorization and scale-out of
//! `mcpkit serve`.

use std::net::SocketAddr;
use std::path::PathBuf;

use mcpkit::server::http::HttpServer;
use mcpkit::transport::stdio::stdio;
use mcpkit::Server;
use tokio_util::sync::CancellationToken;

use super::serve::{self, AuthArgs, ClientLimitArgs, ClusterArgs, HttpArgs, LayerArgs, TaskLimitArgs};
use super::Globals;
use crate::target::Failure;

mod config;
mod upstreams;

use config::Config;
use upstreams::Upstreams;

/// What the gateway tells its clients (`initialize`, `server/discover`): how its names are made.
const INSTRUCTIONS: &str = "A gateway to several MCP servers: the tools and prompts of the server \
    named NAME are NAME_<its name for them>; resources keep their URIs.";

/// Serve the upstreams a TOML file names behind one endpoint: Streamable HTTP at
/// `http://LISTEN/mcp` (or stdio with `--stdio`). Tools and prompts of upstream NAME appear as
/// `NAME_<name>`; resources keep their URIs. Upstreams that fail are restarted with backoff;
/// SIGHUP or a change of the file reloads the upstreams. See guide/gateway.md.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The gateway's configuration (TOML: listen, redis, [upstreams.NAME], [rate_limit],
    /// [auth]).
    // Its id is "http": the endpoint flags shared with `serve` need an address to serve on,
    // and a gateway always has one (the file's, or --listen).
    #[arg(long, id = "http", value_name = "FILE")]
    config: PathBuf,
    /// Serve Streamable HTTP on this address instead of the file's `listen` (port 0 picks one;
    /// the bound URL is printed on stderr).
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    listen: Option<SocketAddr>,
    /// Serve one client on stdio instead of HTTP.
    #[arg(long)]
    stdio: bool,
    /// Serve Prometheus text at http://ADDR/metrics (a separate address; port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    // Boxed: the command enum's variants stay of similar size.
    #[command(flatten)]
    endpoint: Box<HttpArgs>,
    #[command(flatten)]
    auth: Box<AuthArgs>,
    #[command(flatten)]
    task_limits: TaskLimitArgs,
    #[command(flatten)]
    cluster: Box<ClusterArgs>,
    #[command(flatten)]
    client_limits: ClientLimitArgs,
    #[command(flatten)]
    layers: Box<LayerArgs>,
}

impl Args {
    /// `--metrics ADDR`.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
    }

    /// `--threads N`.
    pub fn threads(&self) -> Option<usize> {
        self.endpoint.threads()
    }

    /// Whether this serves one client on stdio.
    pub fn on_stdio(&self) -> bool {
        self.stdio
    }

    /// Connect the upstreams and serve them until Ctrl-C or SIGTERM (HTTP) or the end of stdin.
    pub async fn run(mut self, globals: &Globals) -> Result<u8, Failure> {
        let config = Config::load(&self.config).map_err(Failure::usage)?;
        self.merge(&config)?;
        if let (Some(addr), Some(prometheus)) = (self.metrics, globals.prometheus.clone()) {
            serve::serve_metrics(addr, prometheus).await?;
        }
        let task_limits = self.task_limits.limits();
        let (shared, layer_redis) = match self.stdio {
            true => (None, None),
            false => serve::share(&self.cluster, self.layers.shares_state(), task_limits, "gateway").await?,
        };
        let mut builder = Server::builder()
            .name("mcpkit-gateway", env!("CARGO_PKG_VERSION"))
            .instructions(INSTRUCTIONS)
            .telemetry(globals.telemetry.clone())
            .client_limits(self.client_limits.limits());
        for layer in self.layers.layers(layer_redis.as_ref()) {
            builder = builder.middleware(layer);
        }
        let upstreams = Upstreams::new(globals.clone());
        // Innermost: what passed the limits and names a tool or prompt of an upstream that is
        // down is answered at once, naming it and why.
        builder = builder.middleware(upstreams.down_layer());
        let server = builder.try_build().map_err(|e| Failure::usage(e.to_string()))?;
        upstreams.start(&server, &config).await.map_err(Failure::usage)?;
        let stop = CancellationToken::new();
        upstreams.reload_on_change(&server, self.config.clone(), stop.clone());

        if self.stdio {
            let outcome = server.serve(stdio()).await;
            stop.cancel();
            upstreams.stop().await;
            return outcome.map(|()| 0).map_err(|e| Failure {
                code: 1,
                message: e.to_string(),
            });
        }
        let addr = self.listen.unwrap_or_else(|| config.listen());
        let ready = upstreams.clone();
        let mut http = HttpServer::new(server)
            .config(self.endpoint.config())
            .sse_legacy(true)
            .readiness(move || {
                let ready = ready.clone();
                async move { ready.readiness() }
            });
        if let Some(backends) = shared {
            http = http.scale_out(backends);
        }
        let served = serve::serve_http(addr, http, &self.auth, globals, "gateway").await;
        stop.cancel();
        upstreams.stop().await;
        served.map(|()| 0)
    }

    /// The file's settings where no flag gave them: the Redis URL, the `[auth]` options, the
    /// `[rate_limit]` rates (beside any `--rate-limit`).
    fn merge(&mut self, config: &Config) -> Result<(), Failure> {
        if self.cluster.redis.is_none() {
            self.cluster.redis.clone_from(&config.redis);
        }
        let (a, c) = (&mut self.auth, &config.auth);
        let fill = |flag: &mut Option<String>, file: &Option<String>| {
            if flag.is_none() {
                flag.clone_from(file);
            }
        };
        fill(&mut a.auth_issuer, &c.issuer);
        fill(&mut a.auth_audience, &c.audience);
        fill(&mut a.auth_jwks, &c.jwks);
        fill(&mut a.auth_introspect, &c.introspect);
        fill(&mut a.auth_client_id, &c.client_id);
        fill(&mut a.auth_client_secret, &c.client_secret);
        if a.auth_scope.is_empty() {
            a.auth_scope.clone_from(&c.scopes);
        }
        if a.auth_scopes_supported.is_empty() {
            a.auth_scopes_supported.clone_from(&c.scopes_supported);
        }
        if a.auth_method_scope.is_empty() {
            a.auth_method_scope = c
                .method_scopes
                .iter()
                .map(|(method, scopes)| format!("{method}={}", scopes.join(",")))
                .collect();
        }
        if a.auth_issuer.is_none() && *c != config::AuthConfig::default() {
            return Err(Failure::usage("[auth] needs issuer"));
        }
        let rates = config.rates().map_err(Failure::usage)?;
        self.layers.add_rates(rates.per_client, &rates.tools, rates.global);
        Ok(())
    }
}
