//! A real HAProxy (the Debian `haproxy` package) in front of mcpkit instances: round-robin, no
//! stickiness, health checks on `GET /readyz`, started on a free loopback port and stopped by
//! pid. Its request log (one line per request, naming the instance that served it and the start
//! of the request body) lets a test see where each message landed, and its runtime API (a unix
//! socket) tells whether it still routes to an instance.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::process::{free_port, require_tool, ScratchDir};

/// How many bytes of each request body the log keeps (enough for the method and the id).
const LOGGED_BODY_BYTES: usize = 512;

/// The HAProxy configuration the cluster tests run (and `docs/deploy.md` shows): HTTP mode,
/// round-robin over `backends` (`(name, address)`), no stickiness, health checks on
/// `GET /readyz` every 250 ms (100 ms while a server changes state), two failures to eject and
/// two successes to restore; a connection refused by a dead instance is retried on another.
/// Each request carries the client's address in `X-Forwarded-For` (`option forwardfor`), which
/// the instances believe from the balancer's address only (`--trusted-proxy`, as
/// [`crate::cluster::Cluster`] starts them).
/// When no instance is ready (their shared Redis is down), requests go to the instances that
/// are alive (`GET /healthz`): they still serve what needs no shared state and answer the rest
/// with 503 and a JSON-RPC error. `listen` is where clients connect and `stats_socket` the
/// runtime API's unix socket.
///
/// Each line after a `# request log` comment is instrumentation for the tests (which instance
/// served each request, and the start of its body); a deployment may leave those out.
pub fn haproxy_config(listen: SocketAddr, stats_socket: &Path, backends: &[(String, SocketAddr)]) -> String {
    let mut servers = String::new();
    for (name, addr) in backends {
        servers.push_str(&format!("    server {name} {addr} check\n"));
    }
    format!(
        "\
global
    # One thread: strict rotation over the instances.
    nbthread 1
    maxconn 4096
    stats socket {socket} mode 600 level admin
    # request log
    log stdout format raw daemon

defaults
    mode http
    timeout connect 2s
    # SSE streams stay open: a long inactivity timeout on both sides.
    timeout client 1h
    timeout server 1h
    timeout http-keep-alive 30s
    # Name the client in X-Forwarded-For (instances run with --trusted-proxy set to this
    # balancer's address), so each client has its own --max-sessions-per-client quota.
    option forwardfor
    # A refused connection (a dead instance) is retried once, on another instance.
    retries 1
    option redispatch
    default-server inter 250ms fastinter 100ms downinter 250ms fall 2 rise 2
    # request log
    log global
    # request log
    option http-buffer-request
    # request log
    log-format \"mcpkit-lb server=%s status=%ST term=%ts method=%HM path=%HP body=%[var(txn.body)]\"

frontend mcp
    bind {listen}
    # request log
    http-request set-var(txn.body) req.body,bytes(0,{LOGGED_BODY_BYTES})
    # No instance ready (Redis unreachable): the live ones answer.
    use_backend mcpkit_live if {{ nbsrv(mcpkit) eq 0 }}
    default_backend mcpkit

# Instances whose backends are reachable.
backend mcpkit
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
{servers}
# The same instances, while their process is up.
backend mcpkit_live
    balance roundrobin
    option httpchk
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
{servers}",
        socket = stats_socket.display(),
    )
}

/// One request as HAProxy logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedRequest {
    /// The instance (server name) that served it; `<NOSRV>` when none did.
    pub server: String,
    /// The HTTP status sent to the client (`-1` when the connection broke first).
    pub status: i32,
    /// HAProxy's termination state: `--` for a normal end, `SD` when the server's connection
    /// broke during the response (an instance that died mid-stream), `CD` when the client left.
    pub termination: String,
    /// `GET`, `POST`, `DELETE`.
    pub method: String,
    /// The request path.
    pub path: String,
    /// The first bytes of the request body (the JSON-RPC message of a POST).
    pub body: String,
}

impl LoggedRequest {
    /// Parse one line of the log format of [`haproxy_config`].
    fn parse(line: &str) -> Option<LoggedRequest> {
        let rest = line.strip_prefix("mcpkit-lb server=")?;
        let (server, rest) = rest.split_once(" status=")?;
        let (status, rest) = rest.split_once(" term=")?;
        let (termination, rest) = rest.split_once(" method=")?;
        let (method, rest) = rest.split_once(" path=")?;
        let (path, body) = rest.split_once(" body=")?;
        Some(LoggedRequest {
            server: server.to_owned(),
            status: status.parse().ok()?,
            termination: termination.to_owned(),
            method: method.to_owned(),
            path: path.to_owned(),
            body: body.to_owned(),
        })
    }

    /// Whether the body is a JSON-RPC message carrying `needle` (e.g. `"method":"tools/call"`),
    /// ignoring the space some clients put after a colon.
    pub fn body_has(&self, needle: &str) -> bool {
        self.body.replace("\": ", "\":").contains(needle)
    }
}

/// A running HAProxy; killed (by pid) on drop.
pub struct Balancer {
    child: Child,
    port: u16,
    socket: PathBuf,
    config: String,
    log: Arc<Mutex<Vec<String>>>,
    _dir: ScratchDir,
}

impl Balancer {
    /// Start HAProxy in front of `backends` (`(name, address)`) and wait until its health checks
    /// see every one of them up. Panics with an install hint when `haproxy` is missing.
    pub fn start(backends: &[(String, SocketAddr)]) -> Balancer {
        let haproxy = require_tool("haproxy", "haproxy");
        // A port picked here could be taken before HAProxy binds it: then try another.
        let mut last_error = String::new();
        for _ in 0..5 {
            let dir = ScratchDir::new("haproxy");
            let socket = dir.path().join("admin.sock");
            let port = free_port();
            let listen = SocketAddr::from(([127, 0, 0, 1], port));
            let config = haproxy_config(listen, &socket, backends);
            let file = dir.path().join("haproxy.cfg");
            std::fs::write(&file, &config).unwrap();
            let mut child = Command::new(&haproxy)
                .arg("-db")
                .arg("-f")
                .arg(&file)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e}", haproxy.display()));
            let log = Arc::new(Mutex::new(Vec::new()));
            collect_lines(child.stdout.take().unwrap(), log.clone());
            collect_lines(child.stderr.take().unwrap(), log.clone());
            let mut balancer = Balancer {
                child,
                port,
                socket,
                config,
                log,
                _dir: dir,
            };
            match balancer.wait_until_all_up(Duration::from_secs(20)) {
                Ok(()) => return balancer,
                Err(e) => last_error = format!("{e}; haproxy said:\n{}", balancer.log_lines().join("\n")),
            }
        }
        panic!("HAProxy did not come up: {last_error}");
    }

    /// `http://127.0.0.1:PORT/mcp`: the MCP endpoint through the balancer.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The configuration HAProxy runs.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// HAProxy's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything HAProxy printed so far (request log lines and its own messages).
    pub fn log_lines(&self) -> Vec<String> {
        crate::sync_lock(&self.log).clone()
    }

    /// The requests HAProxy logged so far, in the order they ended.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.log_lines()
            .iter()
            .filter_map(|l| LoggedRequest::parse(l))
            .collect()
    }

    /// The logged requests for which `which` holds, once there are at least `count` of them
    /// (HAProxy logs a request when it ends), or those there are after `timeout`.
    pub fn wait_for_requests(
        &self,
        count: usize,
        timeout: Duration,
        which: impl Fn(&LoggedRequest) -> bool,
    ) -> Vec<LoggedRequest> {
        let start = Instant::now();
        loop {
            let found: Vec<LoggedRequest> = self.requests().into_iter().filter(|r| which(r)).collect();
            if found.len() >= count || start.elapsed() >= timeout {
                return found;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The instance each open client stream is routed to right now (from `show sess`: one entry
    /// per request in progress, e.g. an open SSE stream), in no particular order.
    pub fn open_streams(&self) -> std::io::Result<Vec<String>> {
        let sessions = self.admin("show sess")?;
        Ok(sessions
            .lines()
            .filter(|l| l.contains(" fe=mcp "))
            .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("srv=")))
            .filter(|srv| *srv != "<none>")
            .map(str::to_owned)
            .collect())
    }

    /// Each backend server's state as the runtime API reports it: `(name, status)` with status
    /// `UP`, `DOWN`, or a transition such as `UP 1/2` (going down) and `DOWN 1/2` (coming up).
    pub fn server_states(&self) -> std::io::Result<Vec<(String, String)>> {
        let csv = self.admin("show stat")?;
        let mut lines = csv.lines();
        let header = lines.next().unwrap_or_default().trim_start_matches("# ");
        let columns: Vec<&str> = header.split(',').collect();
        let col = |name: &str| columns.iter().position(|c| *c == name);
        let (Some(px), Some(sv), Some(status)) = (col("pxname"), col("svname"), col("status")) else {
            return Err(std::io::Error::other(format!("unexpected show stat output: {csv}")));
        };
        Ok(lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f.get(px) == Some(&"mcpkit") && !matches!(f.get(sv), Some(&"BACKEND") | None))
            .map(|f| (f[sv].to_owned(), f.get(status).copied().unwrap_or_default().to_owned()))
            .collect())
    }

    /// The status of the server `name` (see [`Balancer::server_states`]).
    pub fn server_state(&self, name: &str) -> Option<String> {
        self.server_states()
            .ok()?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    /// Poll every 10 ms until the server `name` is reported `DOWN` (HAProxy no longer routes to
    /// it); how long that took, or `None` after `timeout`.
    pub fn wait_until_down(&self, name: &str, timeout: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.server_state(name).as_deref() == Some("DOWN") {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// Wait until every backend server is `UP` with a passed health check.
    fn wait_until_all_up(&mut self, timeout: Duration) -> Result<(), String> {
        let start = Instant::now();
        let mut last = String::from("no answer from the runtime API");
        while start.elapsed() < timeout {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("haproxy exited ({status})"));
            }
            match self.admin("show stat") {
                Ok(csv) => {
                    let checked_up = |l: &&str| {
                        (l.starts_with("mcpkit,") || l.starts_with("mcpkit_live,"))
                            && !l.contains(",BACKEND,")
                            && !l.contains(",FRONTEND,")
                    };
                    let servers: Vec<&str> = csv.lines().filter(checked_up).collect();
                    if !servers.is_empty() && servers.iter().all(|l| l.contains(",UP,") && l.contains("L7OK")) {
                        return Ok(());
                    }
                    last = servers.join("\n");
                }
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "not every instance passed its /readyz check within {timeout:?}: {last}"
        ))
    }

    /// Send one runtime API command and read the whole answer.
    fn admin(&self, command: &str) -> std::io::Result<String> {
        let mut stream = UnixStream::connect(&self.socket)?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(format!("{command}\n").as_bytes())?;
        let mut out = String::new();
        stream.read_to_string(&mut out)?;
        Ok(out)
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Append `pipe`'s lines to `to` until it closes (HAProxy must never block on a full pipe).
fn collect_lines(pipe: impl Read + Send + 'static, to: Arc<Mutex<Vec<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            crate::sync_lock(&to).push(line);
        }
    });
}
