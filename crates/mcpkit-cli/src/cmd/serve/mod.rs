//! `mcpkit serve`: the built-in reference server, on stdio or over Streamable HTTP (with the
//! legacy HTTP+SSE endpoints), optionally behind OAuth 2.1.

use std::net::SocketAddr;
use std::sync::Arc;

use mcpkit::auth::resource::{IntrospectionVerifier, JwtVerifier, ProtectedResource, TokenVerifier};
use mcpkit::server::backend::memory::MemoryTaskStore;
use mcpkit::server::backend::{Backends, TaskLimits, TaskStore};
use mcpkit::server::http::{ForwardedHeader, HttpConfig, HttpServer, IpNet};
use mcpkit::server::ClientLimits;
use mcpkit::transport::stdio::stdio;
use tokio_util::sync::CancellationToken;

use super::redis::{LayerStore, REDIS_URL_ENV};
use super::{shutdown_signal, Globals};

mod layers;
mod limits;
use crate::target::Failure;
use crate::trace::{printer, traced};
pub(crate) use layers::LayerArgs;
pub(crate) use limits::{ClientLimitArgs, TaskLimitArgs};
use limits::{ConnectionArgs, SessionLimitArgs};

/// Run the built-in reference server (every conformance fixture, plus `echo` and `add`):
/// on stdio, or with `--http ADDR` over Streamable HTTP at `http://ADDR/mcp` (with
/// `--http unix:PATH`, on a Unix domain socket).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:3000; port 0 picks one) instead
    /// of stdio, or on a Unix domain socket with `unix:PATH` (e.g. unix:/run/user/1000/mcp.sock;
    /// created with mode 0600, a stale socket file replaced, removed at exit; clients reach it
    /// as `--server unix:PATH`). The bound URL is printed on stderr.
    #[arg(long, value_name = "ADDR|unix:PATH", value_parser = parse_http_addr)]
    http: Option<HttpAddr>,
    /// Serve Prometheus text at http://ADDR/metrics (a separate address, e.g. 127.0.0.1:9464;
    /// port 0 picks one; the bound URL is printed on stderr): the MCP metrics of this server.
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
    layers: Box<layers::LayerArgs>,
}

/// How the HTTP endpoint checks Host and Origin, and its connection, session and stream
/// limits (every flag needs an address to serve on: `serve --http`, or `gateway`'s).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct HttpArgs {
    /// Accept any Host header (only behind a proxy that checks it). Origin is still checked
    /// (see --allow-origin). Default: only the loopback names localhost, 127.0.0.1 and [::1].
    #[arg(long, requires = "http")]
    allow_any_host: bool,
    /// Also accept this name (without port) in the Host header, beside the loopback names
    /// (repeatable).
    #[arg(long, requires = "http", value_name = "HOST")]
    allow_host: Vec<String>,
    /// Also accept requests a browser sends from this origin, beside the loopback names
    /// (repeatable): a full origin such as `https://app.example.com` (exact match), a host
    /// name (any scheme and port), or * (any). Requests without Origin are not checked.
    #[arg(long, requires = "http", value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Serve handshake-era requests without sessions (each POST on its own).
    #[arg(long, alias = "stateless", requires = "http")]
    sessionless: bool,
    #[command(flatten)]
    limits: ConnectionArgs,
    #[command(flatten)]
    session_limits: SessionLimitArgs,
    #[command(flatten)]
    proxies: TrustedProxyArgs,
}

impl HttpArgs {
    /// `--threads N`: the worker threads of the runtime serving the endpoint.
    pub(crate) fn threads(&self) -> Option<usize> {
        self.limits.threads()
    }

    /// The HTTP endpoint's configuration these flags describe.
    pub(crate) fn config(&self) -> HttpConfig {
        let mut config = HttpConfig {
            sessionless: self.sessionless,
            ..HttpConfig::default()
        };
        super::allow_hosts_and_origins(&mut config, self.allow_any_host, &self.allow_host, &self.allow_origin);
        self.proxies.apply(&mut config);
        self.limits.apply(&mut config);
        self.session_limits.apply(&mut config);
        config
    }
}

/// The reverse proxies whose word on the client's address `mcpkit serve --http` believes
/// (`HttpConfig::trusted_proxies`, `HttpConfig::forwarded_header`).
#[derive(clap::Args, Debug, Clone, Default)]
struct TrustedProxyArgs {
    /// Believe the client address that a reverse proxy (load balancer) at an address in this
    /// network names in --forwarded-header: CIDR (10.0.0.0/24) or one address (repeatable).
    /// The address then identifies the client for --max-sessions-per-client. Only your own
    /// balancers: anyone else trusted could name any client. Default: none, no header is read.
    #[arg(long, requires = "http", value_name = "CIDR", value_parser = parse_network)]
    trusted_proxy: Vec<IpNet>,
    /// The header the --trusted-proxy balancers name the client in [default: x-forwarded-for].
    #[arg(long, requires = "trusted_proxy", value_name = "HEADER")]
    forwarded_header: Option<ForwardedHeaderArg>,
}

impl TrustedProxyArgs {
    /// Put the proxies given into `config`.
    fn apply(&self, config: &mut HttpConfig) {
        config.trusted_proxies.clone_from(&self.trusted_proxy);
        if let Some(header) = self.forwarded_header {
            config.forwarded_header = header.into();
        }
    }
}

/// `mcpkit serve --http ADDR --redis URL`: instances sharing one Redis act as one server
/// behind a load balancer without affinity (sessions, SSE resumption, server→client traffic,
/// requestState keys and tasks are shared).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct ClusterArgs {
    /// Share the server's state with every instance using this Redis (redis://HOST:PORT/DB;
    /// Redis 6.2 or later, or Valkey). Also read from MCPKIT_REDIS_URL. Needs the `redis`
    /// feature (in `full`).
    #[arg(long, requires = "http", value_name = "URL")]
    pub(crate) redis: Option<String>,
    /// The deployment's key prefix in Redis: instances share state only with the same prefix
    /// [default: mcpkit].
    #[arg(long, value_name = "PREFIX")]
    pub(crate) redis_prefix: Option<String>,
    /// This instance's name among those sharing the Redis ([A-Za-z0-9_.-], at most 64)
    /// [default: random].
    #[arg(long, value_name = "ID")]
    pub(crate) instance_id: Option<String>,
}

impl ClusterArgs {
    /// The Redis URL, prefix and instance id to share state through; `None` for a lone
    /// instance. A prefix or an instance id without a Redis URL is a usage error.
    fn resolve(&self) -> Result<Option<(String, String, String)>, Failure> {
        let usage = |message: String| Failure { code: 2, message };
        let url = self
            .redis
            .clone()
            .or_else(|| std::env::var(REDIS_URL_ENV).ok().filter(|u| !u.trim().is_empty()));
        let Some(url) = url else {
            if self.redis_prefix.is_some() || self.instance_id.is_some() {
                return Err(usage(format!(
                    "--redis-prefix and --instance-id need --redis URL (or {REDIS_URL_ENV})"
                )));
            }
            return Ok(None);
        };
        let prefix = self.redis_prefix.clone().unwrap_or_else(|| "mcpkit".to_owned());
        if prefix.is_empty() || prefix.contains(char::is_whitespace) {
            return Err(usage(format!("--redis-prefix {prefix:?}: not a usable key prefix")));
        }
        let id = match &self.instance_id {
            Some(id) if mcpkit::server::backend::valid_instance_id(id) => id.clone(),
            Some(id) => return Err(usage(format!("--instance-id {id:?}: use 1 to 64 of [A-Za-z0-9_.-]"))),
            None => Backends::memory().instance_id.to_string(),
        };
        Ok(Some((url, prefix, id)))
    }
}

impl Args {
    /// Whether this serves on stdio (one connection) rather than HTTP.
    pub fn on_stdio(&self) -> bool {
        self.http.is_none()
    }

    /// `--metrics ADDR`.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics
    }

    /// `--threads N`.
    pub fn threads(&self) -> Option<usize> {
        self.endpoint.threads()
    }

    /// Serve until stdin ends (stdio), or until Ctrl-C or SIGTERM (HTTP).
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        if let (Some(addr), Some(prometheus)) = (self.metrics, globals.prometheus.clone()) {
            serve_metrics(addr, prometheus).await?;
        }
        let task_limits = self.task_limits();
        let Some(addr) = self.http.clone() else {
            let tasks: Arc<dyn TaskStore> = Arc::new(MemoryTaskStore::new(task_limits));
            let layers = self.layers.layers(None);
            let server =
                crate::reference::server_for(globals.telemetry.clone(), Some(tasks), self.client_limits(), &layers);
            let outcome = if globals.trace_wire {
                server.serve(traced(stdio(), "client")).await
            } else {
                server.serve(stdio()).await
            };
            // Stdin has ended and every answer is written: the process exits next and takes the
            // server with it, rather than dropping its catalogue piece by piece (~0.18 M
            // instructions of Arc drops, BENCHMARKS.md "The release binary and start-up").
            std::mem::forget(server);
            return outcome.map(|()| 0).map_err(|e| Failure {
                code: 1,
                message: e.to_string(),
            });
        };
        let config = self.http_config();
        let (shared, layer_redis) = share(&self.cluster, self.layers.shares_state(), task_limits, "serve").await?;
        let (limits, layers) = (self.client_limits(), self.layers.layers(layer_redis.as_ref()));
        let telemetry = globals.telemetry.clone();
        let tasks = match &shared {
            Some(b) => b.tasks.clone(),
            None => Arc::new(MemoryTaskStore::new(task_limits)),
        };
        let server = crate::reference::server_for(telemetry, Some(tasks), limits, &layers);
        let mut http = HttpServer::new(server).config(config).sse_legacy(true);
        if let Some(backends) = shared {
            http = http.scale_out(backends);
        }
        serve_http(addr, http, &self.auth, globals, "serve").await.map(|()| 0)
    }

    /// The task store's bounds these flags describe.
    pub fn task_limits(&self) -> TaskLimits {
        self.task_limits.limits()
    }

    /// What one client may keep on its session, as the flags say.
    pub fn client_limits(&self) -> ClientLimits {
        self.client_limits.limits()
    }

    /// The HTTP endpoint's configuration these flags describe.
    pub fn http_config(&self) -> HttpConfig {
        self.endpoint.config()
    }
}

/// A `--trusted-proxy` network: `ADDR/PREFIX`, or one address (all its bits).
fn parse_network(text: &str) -> Result<IpNet, String> {
    match text.parse::<IpNet>() {
        Ok(net) => Ok(net.trunc()),
        Err(_) => text
            .parse::<std::net::IpAddr>()
            .map(IpNet::from)
            .map_err(|_| format!("{text:?} is neither a network (10.0.0.0/24, fd00::/8) nor an address")),
    }
}

/// `--forwarded-header`: the header trusted proxies name the client in.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum ForwardedHeaderArg {
    /// `X-Forwarded-For: client, proxy…` (HAProxy `option forwardfor`, nginx
    /// `$proxy_add_x_forwarded_for`).
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy…`.
    Forwarded,
}

impl From<ForwardedHeaderArg> for ForwardedHeader {
    fn from(arg: ForwardedHeaderArg) -> ForwardedHeader {
        match arg {
            ForwardedHeaderArg::XForwardedFor => ForwardedHeader::XForwardedFor,
            ForwardedHeaderArg::Forwarded => ForwardedHeader::Forwarded,
        }
    }
}

/// OAuth 2.1 protection of `mcpkit serve --http` (the resource-server side).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct AuthArgs {
    /// Protect the HTTP endpoint with OAuth 2.1: accept only bearer tokens issued by this
    /// authorization server (its issuer URL, advertised in the protected-resource metadata).
    /// Needs --auth-jwks or --auth-introspect.
    #[arg(long, requires = "http", value_name = "URL")]
    pub(crate) auth_issuer: Option<String>,
    /// The resource identifier tokens must be issued for (their audience). Default: the
    /// endpoint's own URL, http://ADDR/mcp with the bound address.
    #[arg(long, requires = "auth_issuer", value_name = "URL")]
    pub(crate) auth_audience: Option<String>,
    /// Verify JWT access tokens with the keys published at this JWKS URL.
    #[arg(long, requires = "auth_issuer", value_name = "URL")]
    pub(crate) auth_jwks: Option<String>,
    /// Verify tokens by RFC 7662 introspection at this URL (with --auth-client-id and
    /// --auth-client-secret, this server's credentials at the authorization server).
    #[arg(long, requires = "auth_issuer", conflicts_with = "auth_jwks", value_name = "URL")]
    pub(crate) auth_introspect: Option<String>,
    /// This server's client id at the introspection endpoint.
    #[arg(long, requires = "auth_introspect", value_name = "ID")]
    pub(crate) auth_client_id: Option<String>,
    /// This server's client secret at the introspection endpoint.
    #[arg(long, requires = "auth_introspect", value_name = "SECRET")]
    pub(crate) auth_client_secret: Option<String>,
    /// Scopes every request needs (comma-separated); named in the 401 challenge.
    #[arg(long, requires = "auth_issuer", value_delimiter = ',', value_name = "SCOPE")]
    pub(crate) auth_scope: Vec<String>,
    /// Extra scopes one JSON-RPC method needs, as METHOD=SCOPE[,SCOPE] (repeatable), e.g.
    /// tools/call=mcp:write. A token without them gets 403 insufficient_scope (step-up).
    #[arg(long, requires = "auth_issuer", value_name = "METHOD=SCOPES")]
    pub(crate) auth_method_scope: Vec<String>,
    /// The scopes advertised in the metadata (`scopes_supported`; comma-separated).
    #[arg(long, requires = "auth_issuer", value_delimiter = ',', value_name = "SCOPE")]
    pub(crate) auth_scopes_supported: Vec<String>,
}

impl AuthArgs {
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

/// With `--redis` (or its variable): the backends instances share, and the Redis connection
/// for the middleware that keeps state there (`layers_share`: a rate limit or a cache).
/// `command` names the process in what it prints.
#[cfg(feature = "redis")]
pub(crate) async fn share(
    cluster: &ClusterArgs,
    layers_share: bool,
    task_limits: TaskLimits,
    command: &str,
) -> Result<(Option<Backends>, Option<LayerStore>), Failure> {
    let Some((url, prefix, id)) = cluster.resolve()? else {
        return Ok((None, None));
    };
    let unreachable = |e: mcpkit_redis::Error| Failure {
        code: 1,
        message: format!("--redis {url}: {e}"),
    };
    let layer_redis = match layers_share {
        true => Some(mcpkit_redis::Redis::connect(&url, &prefix).await.map_err(unreachable)?),
        false => None,
    };
    let backends = mcpkit_redis::RedisBackends::connect_with(&url, &prefix, &id, task_limits)
        .await
        .map_err(unreachable)?;
    eprintln!("mcpkit {command}: sharing state through Redis (prefix {prefix}, instance {id})");
    Ok((Some(backends), layer_redis))
}

/// Built without the `redis` feature: `--redis` (or its variable) is refused, naming it.
#[cfg(not(feature = "redis"))]
pub(crate) async fn share(
    cluster: &ClusterArgs,
    _layers_share: bool,
    _task_limits: TaskLimits,
    _command: &str,
) -> Result<(Option<Backends>, Option<LayerStore>), Failure> {
    match cluster.resolve()? {
        None => Ok((None, None)),
        Some(_) => Err(Failure::not_built("--redis", "redis")),
    }
}

/// Where `--http` serves: a TCP address, or a Unix domain socket's path (`unix:PATH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HttpAddr {
    Tcp(SocketAddr),
    Unix(std::path::PathBuf),
}

impl From<SocketAddr> for HttpAddr {
    fn from(addr: SocketAddr) -> HttpAddr {
        HttpAddr::Tcp(addr)
    }
}

/// `--http`'s value: `unix:PATH` or an IP:port.
fn parse_http_addr(s: &str) -> Result<HttpAddr, String> {
    if let Some(path) = s.strip_prefix("unix:") {
        if path.is_empty() {
            return Err("write unix:PATH, the path of the socket file to create".to_owned());
        }
        return Ok(HttpAddr::Unix(path.into()));
    }
    s.parse()
        .map(HttpAddr::Tcp)
        .map_err(|e| format!("{e} (write IP:PORT such as 127.0.0.1:3000, or unix:PATH)"))
}

/// A listener bound where `--http` says.
enum Bound {
    Tcp(tokio::net::TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener),
}

/// Serve `http` on `addr` until Ctrl-C or SIGTERM; with `trace_wire`, every JSON-RPC message
/// in and out (both eras, the legacy endpoints too) is printed to stderr. `command` names the
/// process in what it prints.
pub(crate) async fn serve_http(
    addr: impl Into<HttpAddr>,
    http: HttpServer,
    auth: &AuthArgs,
    globals: &Globals,
    command: &str,
) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure {
        code: 1,
        message: e.to_string(),
    };
    // `endpoint` is the URL the server is reached at (OAuth's default audience too); `shown`
    // is what the listening line names.
    let (bound, endpoint, shown) = match addr.into() {
        HttpAddr::Tcp(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(io)?;
            let endpoint = format!("http://{}/mcp", listener.local_addr().map_err(io)?);
            (Bound::Tcp(listener), endpoint.clone(), endpoint)
        }
        #[cfg(unix)]
        HttpAddr::Unix(path) => {
            let listener = mcpkit::server::http::bind_unix(&path).await.map_err(|e| Failure {
                code: 1,
                message: format!("cannot listen on unix:{}: {e}", path.display()),
            })?;
            let shown = format!("unix:{}", path.display());
            (Bound::Unix(listener), "http://localhost/mcp".to_owned(), shown)
        }
        #[cfg(not(unix))]
        HttpAddr::Unix(path) => {
            return Err(Failure::usage(format!(
                "--http unix:{}: Unix domain sockets are not supported on this OS",
                path.display()
            )))
        }
    };
    let stop = CancellationToken::new();
    let http = http.shutdown(stop.clone());
    let http = if globals.trace_wire {
        http.inspect(printer("client"))
    } else {
        http
    };
    // Every route (Streamable HTTP and the legacy HTTP+SSE endpoints) behind the layer.
    let http = match auth.protection(&endpoint)? {
        Some(protection) => {
            eprintln!("mcpkit {command}: listening on {shown} (OAuth 2.1 protected)");
            http.layer(protection)
        }
        None => {
            eprintln!("mcpkit {command}: listening on {shown}");
            http
        }
    };
    tokio::spawn(async move {
        shutdown_signal().await;
        stop.cancel();
    });
    match bound {
        Bound::Tcp(listener) => http.serve(listener).await.map_err(io),
        #[cfg(unix)]
        Bound::Unix(listener) => http.serve_unix(listener).await.map_err(io),
    }
}

/// Serve `prometheus` at `http://addr/metrics` on a task of its own, for as long as the process
/// runs.
pub(crate) async fn serve_metrics(addr: SocketAddr, prometheus: mcpkit::telemetry::Prometheus) -> Result<(), Failure> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| Failure {
        code: 1,
        message: format!("cannot listen for --metrics on {addr}: {e}"),
    })?;
    let bound = listener.local_addr().map_err(|e| Failure {
        code: 1,
        message: e.to_string(),
    })?;
    eprintln!("mcpkit: metrics on http://{bound}/metrics");
    let app = mcpkit::telemetry::metrics_router(prometheus);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!("the metrics endpoint stopped: {e}");
        }
    });
    Ok(())
}
