//! N `mcpkit serve --http` processes of the built binary behind a real HAProxy
//! ([`crate::haproxy`]), all on free loopback ports and stopped by pid: what the scale-out tests
//! run. With a Redis URL the instances share it (`--redis URL --instance-id iN`) and act as one
//! server; without, they are independent single instances (enough for stateless calls).
//!
//! ```no_run
//! # fn main() {
//! let cluster = mcpkit_test_support::cluster::Cluster::builder("target/debug/mcpkit")
//!     .instances(3)
//!     .redis("redis://127.0.0.1:6390")
//!     .start();
//! println!("clients connect to {}", cluster.balancer.url());
//! # }
//! ```

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::haproxy::Balancer;

/// One `mcpkit serve --http 127.0.0.1:0 …` process; SIGKILLed on drop.
pub struct Instance {
    child: Child,
    id: String,
    addr: SocketAddr,
    stderr: Arc<Mutex<String>>,
}

impl Instance {
    /// Run `binary serve --http 127.0.0.1:0 ARGS…` and wait (30 s at most) for the line where it
    /// says which port it bound. `id` names it in the balancer's configuration and logs.
    pub fn start(binary: &Path, id: &str, args: &[String]) -> Instance {
        let mut child = Command::new(binary)
            .args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {} serve: {e}", binary.display()));
        let (tx, rx) = std::sync::mpsc::channel::<SocketAddr>();
        let stderr = Arc::new(Mutex::new(String::new()));
        let pipe = child.stderr.take().unwrap();
        let seen = stderr.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut line = String::new();
            // The banner, then drain (a process must never block on a full pipe).
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                if let Some(addr) = listening_addr(&line) {
                    let _ = tx.send(addr);
                }
                crate::sync_lock(&seen).push_str(&line);
                line.clear();
            }
        });
        let Ok(addr) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            let status = child.wait().ok();
            panic!(
                "instance {id} did not say where it listens (exit {status:?}); its stderr:\n{}",
                crate::sync_lock(&stderr)
            );
        };
        Instance {
            child,
            id: id.to_owned(),
            addr,
            stderr,
        }
    }

    /// The name given at start (`i1`, `i2`, …).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/mcp`: this instance directly, bypassing the balancer.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: the process dies at once, with whatever it was doing.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Everything it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        crate::sync_lock(&self.stderr).clone()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The address in `mcpkit serve: listening on http://ADDR/mcp …`.
fn listening_addr(line: &str) -> Option<SocketAddr> {
    let rest = line.trim().strip_prefix("mcpkit serve: listening on http://")?;
    let addr = rest.split(['/', ' ']).next()?;
    addr.parse().ok()
}

/// The `--trusted-proxy` every instance of a [`Cluster`] gets: the balancer's address, which
/// connects to the instances from 127.0.0.1.
pub const TRUSTED_PROXY: &str = "127.0.0.1/32";

/// How to start a [`Cluster`]: see [`Cluster::builder`].
pub struct ClusterBuilder {
    binary: PathBuf,
    instances: usize,
    redis: Option<String>,
    args: Vec<String>,
}

impl ClusterBuilder {
    /// How many instances (default 3).
    pub fn instances(mut self, n: usize) -> Self {
        self.instances = n;
        self
    }

    /// Share this Redis: each instance gets `--redis URL --instance-id iN`.
    pub fn redis(mut self, url: impl Into<String>) -> Self {
        self.redis = Some(url.into());
        self
    }

    /// One more argument for every instance's `serve` command line.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Start the instances (each with `--trusted-proxy` [`TRUSTED_PROXY`], then the builder's
    /// arguments), then HAProxy in front of them once each said where it listens; returns when
    /// HAProxy's health checks see every instance up.
    pub fn start(self) -> Cluster {
        let instances: Vec<Instance> = (1..=self.instances)
            .map(|n| {
                let id = format!("i{n}");
                // The balancer's address (HAProxy connects from 127.0.0.1), as docs/deploy.md
                // says: the client is the address it names in X-Forwarded-For.
                let mut args = vec!["--trusted-proxy".to_owned(), TRUSTED_PROXY.to_owned()];
                args.extend(self.args.iter().cloned());
                if let Some(url) = &self.redis {
                    args.extend(["--redis".into(), url.clone(), "--instance-id".into(), id.clone()]);
                }
                Instance::start(&self.binary, &id, &args)
            })
            .collect();
        let backends: Vec<(String, SocketAddr)> = instances.iter().map(|i| (i.id.clone(), i.addr)).collect();
        let balancer = Balancer::start(&backends);
        Cluster { instances, balancer }
    }
}

/// Instances behind a balancer; everything is killed on drop.
pub struct Cluster {
    /// The balancer, dropped (killed) first.
    pub balancer: Balancer,
    /// `i1`, `i2`, … in order.
    pub instances: Vec<Instance>,
}

impl Cluster {
    /// A cluster of `binary serve --http` processes (the test's `env!("CARGO_BIN_EXE_mcpkit")`).
    pub fn builder(binary: impl Into<PathBuf>) -> ClusterBuilder {
        ClusterBuilder {
            binary: binary.into(),
            instances: 3,
            redis: None,
            args: Vec::new(),
        }
    }

    /// The instance named `id`.
    pub fn instance(&mut self, id: &str) -> &mut Instance {
        let found = self.instances.iter_mut().find(|i| i.id == id);
        found.unwrap_or_else(|| panic!("no instance {id}"))
    }

    /// Every instance's stderr, labelled, for a failure message.
    pub fn stderr(&self) -> String {
        let mut all = String::new();
        for i in &self.instances {
            all.push_str(&format!("--- {} stderr:\n{}", i.id, i.stderr()));
        }
        all
    }
}
