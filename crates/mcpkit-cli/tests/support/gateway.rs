//! `mcpkit gateway` for the gateway tests: the process (started on a free port from a config
//! file, its stderr kept, killed by pid on drop) and the upstream processes the tests put behind
//! it (`mcpkit serve --http`, restartable on its port).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::peers::{node, python, python_script, ts_dir};

/// `[upstreams.NAME]` running `mcpkit serve` over stdio.
pub(crate) fn stdio_reference(name: &str) -> String {
    format!(
        "[upstreams.{name}]\ncommand = {:?}\nargs = [\"serve\"]\n",
        env!("CARGO_BIN_EXE_mcpkit")
    )
}

/// `[upstreams.NAME]` running the TypeScript SDK's echo server over stdio.
pub(crate) fn stdio_typescript(name: &str) -> String {
    let script = ts_dir().join("echo_server.mjs");
    format!(
        "[upstreams.{name}]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node().to_str().unwrap(),
        script.to_str().unwrap()
    )
}

/// `[upstreams.NAME]` running the Python SDK's echo server over stdio.
pub(crate) fn stdio_python(name: &str) -> String {
    format!(
        "[upstreams.{name}]\ncommand = {:?}\nargs = [{:?}]\n",
        python().to_str().unwrap(),
        python_script("echo_server.py")
    )
}

/// `[upstreams.NAME]` reached at `url` (Streamable HTTP).
pub(crate) fn url_upstream(name: &str, url: &str) -> String {
    format!("[upstreams.{name}]\nurl = {url:?}\n")
}

/// Lines of a child's stderr, kept as they come (the pipe drained so the child never blocks).
#[derive(Clone, Default)]
pub(crate) struct Lines(Arc<Mutex<String>>);

impl Lines {
    fn follow(pipe: impl std::io::Read + Send + 'static) -> Lines {
        let lines = Lines::default();
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut all = kept.0.lock().unwrap_or_else(PoisonError::into_inner);
                all.push_str(&line);
                all.push('\n');
            }
        });
        lines
    }

    /// Everything so far.
    pub(crate) fn text(&self) -> String {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// How many lines so far contain `needle`.
    pub(crate) fn count(&self, needle: &str) -> usize {
        self.text().lines().filter(|l| l.contains(needle)).count()
    }

    /// Wait (polling every 20 ms, `within` at most) until `count(needle) >= n`; whether it did.
    pub(crate) fn wait_for(&self, needle: &str, n: usize, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if self.count(needle) >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The first `http://127.0.0.1:PORT/mcp` after `prefix` on a line, waiting `within`.
    fn url_after(&self, prefix: &str, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        loop {
            let found = self.text().lines().find_map(|l| {
                let rest = l.trim().strip_prefix(prefix)?;
                Some(rest.split_whitespace().next()?.trim_end_matches(',').to_owned())
            });
            if found.is_some() {
                return found;
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Start `program args…` with its stderr followed; the URL it says it listens on after
/// `prefix`. Panics with the stderr when it does not say so within 60 s.
fn start_listening(mut cmd: Command, prefix: &str) -> (Child, Lines, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the process");
    let lines = Lines::follow(child.stderr.take().unwrap());
    let Some(url) = lines.url_after(prefix, Duration::from_secs(60)) else {
        let _ = child.kill();
        let status = child.wait().ok();
        panic!("no `{prefix}` line (exit {status:?}); stderr:\n{}", lines.text());
    };
    (child, lines, url)
}

/// `mcpkit gateway --config FILE --listen 127.0.0.1:0 ARGS…`; SIGKILLed on drop.
pub(crate) struct Gateway {
    child: Child,
    /// Its stderr.
    pub(crate) stderr: Lines,
    /// `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    /// The config file (in `_dir`).
    pub(crate) config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Gateway {
    /// Write `config` to a fresh folder and start the gateway on it; returns once it listens
    /// (each upstream has connected or failed once).
    pub(crate) fn start(config: &str, args: &[&str]) -> Gateway {
        Gateway::start_with_env(config, args, &[])
    }

    /// [`Gateway::start`] with these environment variables set.
    pub(crate) fn start_with_env(config: &str, args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.toml");
        std::fs::write(&path, config).unwrap();
        Gateway::launch(dir, path, args, env)
    }

    /// Start the gateway on the config file at `path` (kept with `dir`).
    pub(crate) fn start_at(dir: tempfile::TempDir, path: PathBuf, args: &[&str]) -> Gateway {
        Gateway::launch(dir, path, args, &[])
    }

    fn launch(dir: tempfile::TempDir, path: PathBuf, args: &[&str], env: &[(&str, &str)]) -> Gateway {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpkit"));
        cmd.envs(env.iter().copied());
        cmd.arg("gateway")
            .arg("--config")
            .arg(&path)
            .args(["--listen", "127.0.0.1:0"])
            .args(args);
        let (child, stderr, url) = start_listening(cmd, "mcpkit gateway: listening on ");
        let base = url.trim_end_matches("/mcp").to_owned();
        Gateway {
            child,
            stderr,
            url,
            base,
            config: path,
            _dir: dir,
        }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and wait for it.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The `http://ADDR/metrics` it says it serves (started with `--metrics 127.0.0.1:0`).
    pub(crate) fn metrics_url(&self) -> String {
        self.stderr
            .url_after("mcpkit: metrics on ", Duration::from_secs(10))
            .unwrap_or_else(|| panic!("no metrics endpoint; stderr:\n{}", self.stderr.text()))
    }

    /// `GET /readyz`: (status, body).
    pub(crate) async fn readyz(&self) -> (u16, String) {
        let reply = reqwest::get(format!("{}/readyz", self.base)).await.unwrap();
        let status = reply.status().as_u16();
        (status, reply.text().await.unwrap_or_default())
    }

    /// Poll `/readyz` (every 50 ms, `within` at most) until its body contains `needle`; the
    /// last answer.
    pub(crate) async fn readyz_until(&self, needle: &str, within: Duration) -> (u16, String) {
        let deadline = Instant::now() + within;
        loop {
            let got = self.readyz().await;
            if got.1.contains(needle) || Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `mcpkit serve --http ADDR ARGS…` as an upstream; SIGKILLed on drop, restartable on the
/// same port.
pub(crate) struct ServeUpstream {
    child: Option<Child>,
    args: Vec<String>,
    /// Its stderr (of the current process).
    pub(crate) stderr: Lines,
    /// `http://127.0.0.1:PORT/mcp`.
    pub(crate) url: String,
}

impl ServeUpstream {
    /// Start it on a free port.
    pub(crate) fn start(args: &[&str]) -> ServeUpstream {
        ServeUpstream::start_with_env(args, &[])
    }

    /// [`ServeUpstream::start`] with these environment variables set (not kept for a restart).
    pub(crate) fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> ServeUpstream {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let (child, stderr, url) = Self::spawn("127.0.0.1:0", &args, env);
        ServeUpstream {
            child: Some(child),
            args,
            stderr,
            url,
        }
    }

    fn spawn(addr: &str, args: &[String], env: &[(&str, &str)]) -> (Child, Lines, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpkit"));
        cmd.envs(env.iter().copied());
        cmd.args(["serve", "--http", addr]).args(args);
        start_listening(cmd, "mcpkit serve: listening on ")
    }

    /// The process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// SIGKILL by pid, and wait for it.
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = child.wait();
        }
    }

    /// Start it again on the port it had (retrying for 10 s while the port is released).
    pub(crate) fn restart(&mut self) {
        self.kill();
        let addr = self
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpkit"));
            cmd.args(["serve", "--http", &addr]).args(&self.args);
            let mut child = cmd
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("restart mcpkit serve");
            let lines = Lines::follow(child.stderr.take().unwrap());
            if lines
                .url_after("mcpkit serve: listening on ", Duration::from_secs(30))
                .is_some()
            {
                self.child = Some(child);
                self.stderr = lines;
                return;
            }
            let _ = child.kill();
            let _ = child.wait();
            assert!(Instant::now() < deadline, "cannot restart on {addr}: {}", lines.text());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for ServeUpstream {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The pid of the child of `parent` whose command line contains `needle` (a gateway's stdio
/// upstream), waiting up to 10 s for it.
pub(crate) fn child_pid(parent: u32, needle: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for task in std::fs::read_dir(format!("/proc/{parent}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in children.split_whitespace().filter_map(|p| p.parse::<u32>().ok()) {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                if String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(needle) {
                    return pid;
                }
            }
        }
        assert!(Instant::now() < deadline, "no child of {parent} runs {needle}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
