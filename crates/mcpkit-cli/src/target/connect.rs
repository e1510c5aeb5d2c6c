//! Connecting a [`Target`]: the transport for its endpoint, the wire trace, OAuth when an HTTP
//! server asks for it.

use super::server_log::ServerLog;
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
    /// `-v`: show what a stdio server wrote on its stderr while refusing the `--protocol auto`
    /// probe.
    pub verbose: bool,
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
        self.open_logged(timeout, oauth_port, false).map(|(t, _)| t)
    }

    /// [`Target::open`], and the handle on a stdio server's prefixed stderr (its lines held
    /// back until released when `hold`).
    fn open_logged(
        &self,
        timeout: Duration,
        oauth_port: Option<u16>,
        hold: bool,
    ) -> Result<(BoxTransport, Option<ServerLog>), Failure> {
        let what = match &self.endpoint {
            Endpoint::Url { .. } => return Ok((self.open_http(timeout, oauth_port)?.boxed(), None)),
            Endpoint::Command { program, .. } => program.clone(),
            Endpoint::Builtin => "the built-in server".to_owned(),
        };
        let cmd = self.command()?.ok_or_else(|| Failure::usage("not a stdio server"))?;
        self.spawn(cmd, hold)
            .map(|(t, log)| (t.boxed(), log))
            .map_err(|e| Failure::usage(format!("cannot start {what}: {e}")))
    }

    /// Spawn a stdio server, its stderr sent where `--server-stderr` says.
    fn spawn(
        &self,
        mut cmd: tokio::process::Command,
        hold: bool,
    ) -> std::io::Result<(ChildTransport, Option<ServerLog>)> {
        #[cfg(unix)]
        if self.stderr == ServerStderr::Prefix {
            // A socket pair rather than a pipe: std makes it close-on-exec (no other child
            // inherits our end) on every Unix, within the crate's minimum Rust.
            let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
            ours.shutdown(std::net::Shutdown::Write)?;
            cmd.stderr(std::process::Stdio::from(std::os::fd::OwnedFd::from(theirs)));
            // `cmd`, and with it our copy of the child's end, is gone once spawned: the reader
            // sees the end of the stream when the server exits.
            let child = ChildTransport::from_command(cmd, Stderr::AsConfigured)?;
            return Ok((child, Some(ServerLog::start(ours, hold)?)));
        }
        // Only a prefixed stderr is held.
        let _ = hold;
        let stderr = match &self.stderr {
            ServerStderr::Inherit | ServerStderr::Prefix => Stderr::Inherit,
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
        ChildTransport::from_command(cmd, stderr).map(|c| (c, None))
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
        let probing = options.mode == ConnectMode::Auto;
        let (transport, log) = self.open_logged(options.timeout, options.oauth_port, probing)?;
        self.connect_logged(builder, options, transport, log).await
    }

    /// Connect a client (built by `builder`) over an opened `transport` and run the handshake,
    /// within the timeout.
    pub async fn connect_over<T: Transport>(
        &self,
        builder: ClientBuilder,
        options: ConnectOptions,
        transport: T,
    ) -> Result<Client, Failure> {
        self.connect_logged(builder, options, transport, None).await
    }

    /// [`Target::connect_over`]; `log`, a stdio server's stderr held while probing, is
    /// released once connected: shown unless the server refused the probe (then it is most
    /// likely the server's complaint about it), and always with -v or when connecting failed.
    async fn connect_logged<T: Transport>(
        &self,
        builder: ClientBuilder,
        options: ConnectOptions,
        transport: T,
        log: Option<ServerLog>,
    ) -> Result<Client, Failure> {
        let builder = builder
            .peer_options(PeerOptions {
                request_timeout: Some(options.timeout),
                ..PeerOptions::default()
            })
            .telemetry(options.telemetry.clone())
            .mode(options.mode);
        let connecting = connect_traced(builder, transport, options.trace_wire);
        let auto = options.mode == ConnectMode::Auto;
        let connected = tokio::time::timeout(options.timeout, connecting).await;
        let fell_back = matches!(&connected, Ok(Ok(c)) if auto && !c.is_stateless());
        let hidden = match log {
            Some(log) => log.release(options.verbose || !fell_back).await,
            None => 0,
        };
        match connected {
            Ok(Ok(c)) => {
                if fell_back {
                    let hidden = match hidden {
                        0 => String::new(),
                        n => format!("; the {n} lines it wrote on its stderr meanwhile are hidden (-v shows them)"),
                    };
                    eprintln!(
                        "mcpkit: {} does not take the {} probe (server/discover); fell back to {} (the initialize handshake){hidden}",
                        crate::terminal::err(&self.label),
                        ProtocolVersion::LATEST,
                        c.protocol_version()
                    );
                }
                Ok(c)
            }
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
    // Logins are remembered between runs (the OS keyring, else a 0600 file).
    let store = crate::auth_store::CliTokenStore::open().map_err(Failure::usage)?;
    mcpkit::auth::OAuthClient::builder(url)
        .client_name("mcpkit")
        .store(std::sync::Arc::new(store))
        .redirect_uri(format!("http://127.0.0.1:{port}/callback"))
        .authorizer(std::sync::Arc::new(authorizer))
        .build()
        .map(std::sync::Arc::new)
        .map_err(|e| Failure::usage(format!("cannot set up OAuth for {url}: {e}")))
}
