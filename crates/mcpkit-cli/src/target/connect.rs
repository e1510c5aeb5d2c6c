//! Connecting a [`Target`]: the transport for its endpoint, the wire trace, OAuth when an HTTP
//! server asks for it.

use super::*;

/// How to connect: the timeout and whether to trace the wire.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Connect and per-request timeout.
    pub timeout: Duration,
    /// Print every JSON-RPC message to stderr.
    pub trace_wire: bool,
    /// How to pick the protocol era.
    pub mode: ConnectMode,
    /// OAuth 2.1 with a loopback redirect on this port, when an HTTP server asks.
    pub oauth_port: Option<u16>,
    /// Where the client records its metrics.
    pub telemetry: mcpkit::telemetry::Telemetry,
}

impl Target {
    /// The command that starts a stdio target (`None` for an HTTP server).
    pub fn command(&self) -> Result<Option<tokio::process::Command>, Failure> {
        match &self.endpoint {
            Endpoint::Url { .. } => Ok(None),
            Endpoint::Command {
                program,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).envs(env);
                if let Some(d) = cwd {
                    cmd.current_dir(d);
                }
                Ok(Some(cmd))
            }
            Endpoint::Builtin => {
                let exe = std::env::current_exe()
                    .map_err(|e| Failure::usage(format!("cannot find the mcpkit binary: {e}")))?;
                let mut cmd = tokio::process::Command::new(exe);
                cmd.arg("serve");
                Ok(Some(cmd))
            }
        }
    }

    /// Open the transport (spawn the child, or prepare the HTTP client).
    pub fn open(&self, timeout: Duration, oauth_port: Option<u16>) -> Result<BoxTransport, Failure> {
        match &self.endpoint {
            Endpoint::Url { .. } => self.open_http(timeout, oauth_port).map(Transport::boxed),
            Endpoint::Command { program, .. } => {
                let cmd = self.command()?.ok_or_else(|| Failure::usage("not a stdio server"))?;
                self.spawn(cmd)
                    .map(Transport::boxed)
                    .map_err(|e| Failure::usage(format!("cannot start {program}: {e}")))
            }
            Endpoint::Builtin => {
                let cmd = self.command()?.ok_or_else(|| Failure::usage("not a stdio server"))?;
                self.spawn(cmd)
                    .map(Transport::boxed)
                    .map_err(|e| Failure::usage(format!("cannot start the built-in server: {e}")))
            }
        }
    }

    /// Spawn a stdio server, its stderr sent where `--server-stderr` says.
    fn spawn(&self, mut cmd: tokio::process::Command) -> std::io::Result<ChildTransport> {
        let stderr = match &self.stderr {
            ServerStderr::Inherit => Stderr::Inherit,
            ServerStderr::Quiet => Stderr::Null,
            ServerStderr::File(path) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| std::io::Error::new(e.kind(), format!("--server-stderr {}: {e}", path.display())))?;
                cmd.stderr(file);
                Stderr::AsConfigured
            }
        };
        ChildTransport::from_command(cmd, stderr)
    }

    /// Prepare the HTTP client transport of an HTTP target.
    pub fn open_http(&self, timeout: Duration, oauth_port: Option<u16>) -> Result<HttpClientTransport, Failure> {
        let Endpoint::Url { url, headers, legacy } = &self.endpoint else {
            return Err(Failure::usage(format!("{} is not an HTTP server", self.label)));
        };
        let mut b = HttpClientTransport::builder(url.clone())
            .sse_legacy(*legacy)
            .connect_timeout(Some(timeout));
        for (k, v) in headers {
            b = b.header(k, v);
        }
        if let Some(port) = oauth_port {
            b = b.auth(oauth_client(url, port)?);
        }
        b.build().map_err(|e| Failure::usage(e.to_string()))
    }

    /// Connect a client (built by `builder`) and run the handshake, within the timeout.
    pub async fn connect(&self, builder: ClientBuilder, options: ConnectOptions) -> Result<Client, Failure> {
        let transport = self.open(options.timeout, options.oauth_port)?;
        self.connect_over(builder, options, transport).await
    }

    /// Connect a client (built by `builder`) over an opened `transport` and run the handshake,
    /// within the timeout.
    pub async fn connect_over<T: Transport>(
        &self,
        builder: ClientBuilder,
        options: ConnectOptions,
        transport: T,
    ) -> Result<Client, Failure> {
        let builder = builder
            .peer_options(PeerOptions {
                request_timeout: Some(options.timeout),
                ..PeerOptions::default()
            })
            .telemetry(options.telemetry.clone())
            .mode(options.mode);
        let connecting = connect_traced(builder, transport, options.trace_wire);
        match tokio::time::timeout(options.timeout, connecting).await {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(Failure::usage(format!(
                "cannot connect to {}: {}",
                self.label,
                one_line(&e.to_string())
            ))),
            Err(_) => Err(Failure::usage(format!(
                "{} did not answer the handshake within {:?} (raise --timeout?)",
                self.label, options.timeout
            ))),
        }
    }
}

async fn connect_traced<T: Transport>(builder: ClientBuilder, t: T, trace: bool) -> mcpkit::Result<Client> {
    if trace {
        builder.connect(traced(t, "server")).await
    } else {
        builder.connect(t).await
    }
}

/// An OAuth 2.1 client for `url` that prints the authorization URL and awaits the browser's
/// redirect on the loopback `port`.
fn oauth_client(url: &str, port: u16) -> Result<std::sync::Arc<mcpkit::auth::OAuthClient>, Failure> {
    let authorizer = mcpkit::auth::LoopbackAuthorizer::new(|url| {
        // The URL is the authorization server's: shown escaped on a terminal.
        eprintln!(
            "Open this URL in a browser to authorize mcpkit:\n  {}",
            crate::terminal::err(url.as_str())
        );
        Ok(())
    });
    mcpkit::auth::OAuthClient::builder(url)
        .client_name("mcpkit")
        .redirect_uri(format!("http://127.0.0.1:{port}/callback"))
        .authorizer(std::sync::Arc::new(authorizer))
        .build()
        .map(std::sync::Arc::new)
        .map_err(|e| Failure::usage(format!("cannot set up OAuth for {url}: {e}")))
}
