//! `mcpkit proxy`: bridge a stdio server and an HTTP client, or a stdio host and an HTTP server.
//!
//! Both directions forward JSON-RPC frames unchanged over the public transport API; nothing is
//! re-serialized.
//!
//! - `--listen ADDR -- CMD ARGS…`: a Streamable HTTP endpoint at `http://ADDR/mcp`; each
//!   session gets its own child process (started at `initialize`, stopped when the session ends
//!   by DELETE, idle expiry or shutdown; at most `--max-sessions`, `--max-sessions-per-client`
//!   per client address). Frames from the child are routed back by kind: a
//!   response answers its request's POST; progress goes on the stream of the request that asked
//!   for it; other messages from the child go on the stream of the newest request in flight, or
//!   the GET stream when none is.
//! - `--server URL`: speaks stdio on this process's stdin/stdout and forwards to the HTTP server
//!   (Streamable HTTP, legacy HTTP+SSE fallback), for hosts that only launch stdio servers.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use mcpkit::server::http::{HttpConfig, HttpServer, SessionFactory, SessionTransport};
use mcpkit::transport::child::{ChildTransport, Stderr};
use mcpkit::transport::stdio::stdio;
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Route, Transport};
use mcpkit::types::jsonrpc::{self, MessageRef, OutgoingError};
use mcpkit::types::method::{Cancelled, Progress};
use mcpkit::types::schema::{CancelledParams, ProgressToken};
use mcpkit::types::NotificationMethod as _;
use mcpkit::types::{ErrorCode, ErrorObject, RequestId};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{shutdown_signal, Globals};
use crate::target::{Endpoint, Failure, TargetArgs};
use crate::trace::traced;

/// Bridge transports. `--listen ADDR -- CMD ARGS…` exposes a stdio server over Streamable
/// HTTP at http://ADDR/mcp (one child per session, stopped when the session ends);
/// `--server URL` speaks stdio on stdin/stdout and forwards to a remote HTTP server.
#[derive(clap::Args, Debug)]
pub struct Args {
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
    /// Accept any Host header on the listening side (only behind a proxy that checks it).
    /// Origin is still checked (see --allow-origin). Default: loopback names only.
    #[arg(long, requires = "listen")]
    allow_any_host: bool,
    /// Also accept this name (without port) in the Host header (repeatable).
    #[arg(long, requires = "listen", value_name = "HOST")]
    allow_host: Vec<String>,
    /// Also accept requests a browser sends from this origin (repeatable): a full origin
    /// (exact match), a host name (any scheme and port), or * (any).
    #[arg(long, requires = "listen", value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// End (and stop the child of) sessions idle this long.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = crate::target::parse_duration)]
    session_timeout: std::time::Duration,
    /// At most this many sessions (each one child process); more get 503.
    #[arg(long, requires = "listen", value_name = "N", default_value_t = 100)]
    max_sessions: usize,
    /// At most this many sessions (children) per client IP address; more get 503.
    #[arg(long, requires = "listen", value_name = "N", default_value_t = 20)]
    max_sessions_per_client: usize,
    /// The stdio server to expose with --listen.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

impl Args {
    /// `--listen`: serve until Ctrl-C or SIGTERM; `--server`: forward until stdin or the server
    /// ends.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let Some(addr) = self.listen else {
            return self.bridge_stdio(globals).await.map(|()| 0);
        };
        let mut config = HttpConfig {
            session_idle_timeout: self.session_timeout,
            // One child process per session: caps far below an in-process server's.
            max_sessions: self.max_sessions,
            max_sessions_per_client: self.max_sessions_per_client,
            ..HttpConfig::default()
        };
        super::allow_hosts_and_origins(&mut config, self.allow_any_host, &self.allow_host, &self.allow_origin);
        listen(addr, &self.command, config, globals.trace_wire, shutdown_signal()).await?;
        Ok(0)
    }

    /// `--server URL|NAME`: forward this process's stdin/stdout to that HTTP server.
    async fn bridge_stdio(self, globals: &Globals) -> Result<(), Failure> {
        if !self.command.is_empty() {
            return Err(Failure::usage(
                "`-- CMD` goes with --listen; --server forwards to a URL",
            ));
        }
        let target = TargetArgs {
            server: self.server,
            config: self.config,
            ..TargetArgs::default()
        }
        .resolve()?;
        if !matches!(target.endpoint, Endpoint::Url { .. }) {
            return Err(Failure::usage(format!(
                "{} is not an HTTP server; `proxy --server` forwards to a URL",
                target.label
            )));
        }
        let remote = target.open_http(std::time::Duration::from_secs(30), None)?;
        if globals.trace_wire {
            forward(stdio(), traced(remote, "server")).await
        } else {
            forward(stdio(), remote).await
        }
    }
}

/// Spawns one child per session.
struct ChildFactory {
    program: String,
    args: Vec<String>,
    trace_wire: bool,
}

impl SessionFactory for ChildFactory {
    fn start(&self, id: &str, transport: SessionTransport) -> CancellationToken {
        let stop = CancellationToken::new();
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args);
        let session = id.to_owned();
        let token = stop.clone();
        match ChildTransport::from_command(cmd, Stderr::Inherit) {
            Ok(child) => {
                tracing::info!("session {session}: started {}", self.program);
                let trace = self.trace_wire;
                tokio::spawn(async move {
                    if trace {
                        forward_session(transport, traced(child, "child"), token).await;
                    } else {
                        forward_session(transport, child, token).await;
                    }
                    tracing::info!("session {session}: ended, child stopped");
                });
            }
            Err(e) => {
                let message = format!("cannot start {}: {e}", self.program);
                eprintln!("mcpkit proxy: {message}");
                tokio::spawn(refuse_session(transport, message, token));
            }
        }
        stop
    }
}

/// The child could not start: answer every request with an error until the session ends.
async fn refuse_session(transport: SessionTransport, message: String, stop: CancellationToken) {
    let (mut reader, mut writer) = transport.split();
    loop {
        let frame = tokio::select! {
            _ = stop.cancelled() => return,
            f = reader.read_frame() => f,
        };
        let Ok(Some(Frame::Message(bytes))) = frame else { return };
        if let Ok(MessageRef::Request(r)) = jsonrpc::parse(&bytes) {
            let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, message.clone());
            if let Ok(reply) = serde_json::to_vec(&OutgoingError::new(Some(&r.id), &error)) {
                let _ = writer.write_routed(&reply, &Route::Reply(r.id.clone())).await;
            }
        }
    }
}

#[derive(Deserialize)]
struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Option<ProgressMeta>,
}

#[derive(Deserialize)]
struct ProgressMeta {
    #[serde(rename = "progressToken", default)]
    progress_token: Option<ProgressToken>,
}

#[derive(Deserialize)]
struct ProgressOnly {
    #[serde(rename = "progressToken")]
    progress_token: ProgressToken,
}

/// The client's requests in flight, to route the child's traffic.
#[derive(Default)]
struct Inflight {
    /// In arrival order (the newest last).
    order: Vec<RequestId>,
    progress: HashMap<ProgressToken, RequestId>,
}

impl Inflight {
    fn add(&mut self, id: RequestId, params: Option<&RawValue>) {
        if let Some(token) = params
            .and_then(|p| serde_json::from_str::<MetaOnly>(p.get()).ok())
            .and_then(|m| m.meta)
            .and_then(|m| m.progress_token)
        {
            self.progress.insert(token, id.clone());
        }
        self.order.push(id);
    }
    fn remove(&mut self, id: &RequestId) -> bool {
        let before = self.order.len();
        self.order.retain(|r| r != id);
        self.progress.retain(|_, r| r != id);
        before != self.order.len()
    }
    /// Where a frame from the child goes.
    fn route(&mut self, frame: &[u8]) -> Route {
        match jsonrpc::parse(frame) {
            Ok(MessageRef::Response(r)) => {
                self.remove(&r.id);
                Route::Reply(r.id)
            }
            Ok(MessageRef::Notification(n)) if n.method == Progress::NAME => {
                let owner = n
                    .params
                    .and_then(|p| serde_json::from_str::<ProgressOnly>(p.get()).ok())
                    .and_then(|p| self.progress.get(&p.progress_token).cloned());
                match owner {
                    Some(id) => Route::Related(id),
                    None => self.newest(),
                }
            }
            _ => self.newest(),
        }
    }
    fn newest(&self) -> Route {
        self.order.last().cloned().map_or(Route::Standalone, Route::Related)
    }
}

/// Pump frames between an HTTP session and a child until either ends or `stop` fires.
async fn forward_session<C: Transport>(session: SessionTransport, child: C, stop: CancellationToken) {
    let (session_reader, mut session_writer) = session.split();
    let (child_reader, mut child_writer) = child.split();
    let (from_client, mut client_rx) = mpsc::unbounded_channel();
    let (from_child, mut child_rx) = mpsc::unbounded_channel();
    let a = tokio::spawn(pump(session_reader, from_client));
    let b = tokio::spawn(pump(child_reader, from_child));
    let mut inflight = Inflight::default();
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            frame = client_rx.recv() => {
                let Some(frame) = frame else { break };
                match jsonrpc::parse(&frame) {
                    Ok(MessageRef::Request(r)) => inflight.add(r.id, r.params),
                    Ok(MessageRef::Notification(n)) if n.method == Cancelled::NAME => {
                        let id = n
                            .params
                            .and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok())
                            .and_then(|p| p.request_id);
                        if let Some(id) = id {
                            if inflight.remove(&id) {
                                // The child will not answer: release the request's stream.
                                session_writer.end_unanswered(&id);
                            }
                        }
                    }
                    _ => {}
                }
                if child_writer.write_frame(&frame).await.is_err() || child_writer.flush().await.is_err() {
                    break;
                }
            }
            frame = child_rx.recv() => {
                let Some(frame) = frame else { break };
                let route = inflight.route(&frame);
                if session_writer.write_routed(&frame, &route).await.is_err() {
                    break;
                }
            }
        }
    }
    a.abort();
    b.abort();
    let _ = session_writer.close().await;
    let _ = child_writer.close().await;
}

/// Read frames into a channel until the end of the stream (oversized frames are skipped).
async fn pump<R: FrameReader>(mut reader: R, tx: mpsc::UnboundedSender<Vec<u8>>) {
    loop {
        match reader.read_frame().await {
            Ok(Some(Frame::Message(m))) => {
                if tx.send(m).is_err() {
                    return;
                }
            }
            Ok(Some(Frame::Oversized(n))) => tracing::warn!("dropped a frame of {n} bytes (over the limit)"),
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("read failed: {e}");
                return;
            }
        }
    }
}

/// `mcpkit proxy --listen ADDR -- CMD ARGS…`: serve until `shutdown` resolves.
async fn listen(
    addr: std::net::SocketAddr,
    command: &[String],
    config: HttpConfig,
    trace_wire: bool,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Failure> {
    let Some((program, args)) = command.split_first() else {
        return Err(Failure::usage(
            "give the stdio server to expose after `--`, e.g. mcpkit proxy --listen 127.0.0.1:3000 -- python server.py",
        ));
    };
    let factory = Arc::new(ChildFactory {
        program: program.clone(),
        args: args.to_vec(),
        trace_wire,
    });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| Failure::usage(format!("cannot listen on {addr}: {e}")))?;
    eprintln!(
        "mcpkit proxy: listening on http://{local}/mcp, one `{}` per session",
        command.join(" ")
    );
    let stop = CancellationToken::new();
    let http = HttpServer::with_factory(factory).config(config).shutdown(stop.clone());
    tokio::spawn(async move {
        shutdown.await;
        // Ends every session: their children are stopped.
        stop.cancel();
    });
    http.serve(listener).await.map_err(|e| Failure {
        code: 1,
        message: e.to_string(),
    })
}

/// Forward `stdio` (this process's stdin/stdout) to `remote` (an HTTP server) until stdin ends
/// (then the session is closed) or the server goes away.
async fn forward<S: Transport, H: Transport>(stdio: S, remote: H) -> Result<(), Failure> {
    let (mut local_reader, mut local_writer) = stdio.split();
    let (mut remote_reader, mut remote_writer) = remote.split();
    let upstream = async move {
        let outcome: io::Result<()> = async {
            while let Some(frame) = local_reader.read_frame().await? {
                if let Frame::Message(m) = frame {
                    remote_writer.write_frame(&m).await?;
                    remote_writer.flush().await?;
                }
            }
            Ok(())
        }
        .await;
        let _ = remote_writer.close().await;
        outcome
    };
    let downstream = async move {
        let outcome: io::Result<()> = async {
            while let Some(frame) = remote_reader.read_frame().await? {
                if let Frame::Message(m) = frame {
                    local_writer.write_frame(&m).await?;
                    local_writer.flush().await?;
                }
            }
            Ok(())
        }
        .await;
        let _ = local_writer.close().await;
        outcome
    };
    tokio::select! {
        r = upstream => r.map_err(|e| Failure { code: 1, message: format!("reading stdin: {e}") }),
        r = downstream => match r {
            Ok(()) => Err(Failure { code: 1, message: "the server closed the connection".to_owned() }),
            Err(e) => Err(Failure { code: 1, message: format!("the server connection failed: {}", crate::target::one_line(&e.to_string())) }),
        },
    }
}
