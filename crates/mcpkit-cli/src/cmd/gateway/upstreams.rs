//! The gateway's upstreams while it runs: each connected, watched, and reconnected with
//! backoff by a task of its own; added, removed and restarted when the file changes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcpkit::server::compose::Upstream;
use mcpkit::server::middleware::{self, Middleware, Next};
use mcpkit::server::Call;
use mcpkit::types::method::{CallTool, GetPrompt};
use mcpkit::types::ErrorObject;
use mcpkit::{Client, Server};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::config::{self, Config};
use super::Globals;
use crate::target::{ConnectOptions, Failure, ServerStderr, Target};

/// The first wait before reconnecting, doubled after each failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A connection that lasted this long starts the backoff over.
const HEALTHY: Duration = Duration::from_secs(60);
/// How often an HTTP upstream is pinged (its connection has no end to wait for), and how many
/// pings in a row may fail before it is taken out and reconnected.
const PING_EVERY: Duration = Duration::from_secs(5);
const PINGS_MISSED: u32 = 2;
/// A burst of file events (an editor's save) is read as one change after this quiet time.
const SETTLE: Duration = Duration::from_millis(200);
/// The metric label naming the upstream of a client operation or session: its `[upstreams.NAME]`,
/// so the series are as many as the config's upstreams.
const UPSTREAM_LABEL: &str = "upstream";

/// Where one upstream is.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Connecting,
    Connected,
    Down(String),
}

/// One upstream being served.
struct Running {
    spec: config::Upstream,
    upstream: Upstream,
    stop: CancellationToken,
    state: watch::Receiver<State>,
}

/// Every upstream being served. Cheap to clone.
#[derive(Clone)]
pub(super) struct Upstreams {
    globals: Globals,
    running: Arc<Mutex<BTreeMap<String, Running>>>,
}

impl Upstreams {
    pub(super) fn new(globals: Globals) -> Upstreams {
        Upstreams {
            globals,
            running: Arc::default(),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serve the file's upstreams on `server`, and wait until each has connected or failed
    /// once (a failed one goes on being retried; the others are served).
    pub(super) async fn start(&self, server: &Server, config: &Config) -> Result<(), String> {
        let specs = config.upstreams()?;
        let mut first = Vec::new();
        for spec in specs {
            first.push(self.add(server, spec));
        }
        for mut state in first {
            let _ = state.wait_for(|s| *s != State::Connecting).await;
        }
        Ok(())
    }

    /// Serve `spec` on `server`: its own task connects it, watches it and reconnects it.
    fn add(&self, server: &Server, spec: config::Upstream) -> watch::Receiver<State> {
        let mut upstream = Upstream::new(spec.name.clone());
        if let Some(tools) = &spec.tools {
            upstream = upstream.allow_tools(tools.iter().cloned());
        }
        if !spec.scopes.is_empty() {
            upstream = upstream.require_scopes(spec.scopes.iter().cloned());
        }
        server.add_upstream(&upstream);
        let (tx, rx) = watch::channel(State::Connecting);
        let stop = CancellationToken::new();
        tokio::spawn(supervise(
            upstream.clone(),
            spec.clone(),
            self.globals.clone(),
            tx,
            stop.clone(),
        ));
        self.running().insert(
            spec.name.clone(),
            Running {
                spec,
                upstream,
                stop,
                state: rx.clone(),
            },
        );
        rx
    }

    /// Stop serving the upstream `name` on `server` (its task ends, its client is closed).
    async fn remove(&self, server: &Server, name: &str) {
        let Some(running) = self.running().remove(name) else {
            return;
        };
        running.stop.cancel();
        server.remove_upstream(&running.upstream);
        if let Some(client) = running.upstream.detach() {
            let _ = client.close().await;
        }
    }

    /// Stop every upstream (the process is ending).
    pub(super) async fn stop(&self) {
        let all: Vec<Running> = std::mem::take(&mut *self.running()).into_values().collect();
        for running in all {
            running.stop.cancel();
            if let Some(client) = running.upstream.detach() {
                let _ = client.close().await;
            }
        }
    }

    /// The middleware that answers a `tools/call` or `prompts/get` naming an item of an
    /// upstream that is not connected (`NAME_…`, NAME configured) at once, with an error naming
    /// the upstream and why it is down, instead of "unknown tool" once its items left the lists.
    pub(super) fn down_layer(&self) -> impl Middleware {
        let this = self.clone();
        middleware::from_fn(move |call: Call, next: Next| {
            let down = match call.is::<CallTool>() || call.is::<GetPrompt>() {
                true => call.target().and_then(|name| this.down(&name)),
                false => None,
            };
            async move {
                match down {
                    Some((name, why)) => Err(ErrorObject::internal(format!(
                        "upstream {name:?} is not connected ({why}); its tools and prompts are back once it reconnects"
                    ))
                    .with_data(serde_json::json!({ "upstream": name }))),
                    None => next.run(call).await,
                }
            }
        })
    }

    /// The upstream that `item` (`NAME_<name>`) belongs to and why it is down, if it is.
    fn down(&self, item: &str) -> Option<(String, String)> {
        let (name, _) = item.split_once('_')?;
        let running = self.running();
        let r = running.get(name)?;
        // Attached but not yet marked connected: its items are listed already, so it serves.
        if r.upstream.is_connected() {
            return None;
        }
        let state = r.state.borrow().clone();
        match state {
            State::Connected => None,
            State::Connecting => Some((name.to_owned(), "connecting".to_owned())),
            State::Down(why) => Some((name.to_owned(), why)),
        }
    }

    /// What `/readyz` says: ready while at least one upstream is connected (or none is
    /// configured), naming those that are not.
    pub(super) fn readiness(&self) -> Result<String, String> {
        let running = self.running();
        let down: Vec<String> = running
            .iter()
            .filter_map(|(name, r)| match &*r.state.borrow() {
                State::Connected => None,
                State::Connecting => Some(format!("{name}: connecting")),
                State::Down(why) => Some(format!("{name}: {why}")),
            })
            .collect();
        let total = running.len();
        let up = total - down.len();
        match (up, total) {
            (0, 0) => Ok(String::new()),
            (0, _) => Err(format!("no upstream connected ({})", down.join("; "))),
            _ if down.is_empty() => Ok(format!("{up} of {total} upstreams connected")),
            _ => Ok(format!("{up} of {total} upstreams connected ({})", down.join("; "))),
        }
    }

    /// Read the file again on SIGHUP and whenever it changes, until `stop`: upstreams added,
    /// removed or changed are started, stopped or restarted; the others, and every session,
    /// are left as they are. A file that does not read is reported and ignored.
    pub(super) fn reload_on_change(&self, server: &Server, path: PathBuf, stop: CancellationToken) {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
        let watcher = watch_file(&path, tx.clone());
        #[cfg(unix)]
        tokio::spawn({
            let (tx, stop) = (tx, stop.clone());
            async move {
                let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
                    return;
                };
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        got = hup.recv() => {
                            if got.is_none() {
                                return;
                            }
                            let _ = tx.try_send(());
                        }
                    }
                }
            }
        });
        let (this, server) = (self.clone(), server.clone());
        tokio::spawn(async move {
            // Held for as long as changes are watched.
            let _watcher = watcher;
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    got = rx.recv() => if got.is_none() { return },
                }
                tokio::time::sleep(SETTLE).await;
                while rx.try_recv().is_ok() {}
                match Config::load(&path).and_then(|c| c.upstreams()) {
                    Ok(specs) => this.apply(&server, specs).await,
                    Err(e) => eprintln!(
                        "mcpkit gateway: not reloaded, the upstreams are left as they were: {}",
                        crate::terminal::err(&e)
                    ),
                }
            }
        });
    }

    /// Make the running upstreams those of `specs`.
    async fn apply(&self, server: &Server, specs: Vec<config::Upstream>) {
        let wanted: BTreeMap<String, config::Upstream> = specs.into_iter().map(|s| (s.name.clone(), s)).collect();
        let (gone, changed): (Vec<String>, Vec<String>) = {
            let running = self.running();
            let gone = running.keys().filter(|n| !wanted.contains_key(*n)).cloned().collect();
            let changed = running
                .iter()
                .filter(|(n, r)| wanted.get(*n).is_some_and(|w| *w != r.spec))
                .map(|(n, _)| n.clone())
                .collect();
            (gone, changed)
        };
        for name in gone.iter().chain(&changed) {
            self.remove(server, name).await;
        }
        let mut added = Vec::new();
        for (name, spec) in wanted {
            if !self.running().contains_key(&name) {
                added.push(name.clone());
                self.add(server, spec);
            }
        }
        eprintln!(
            "mcpkit gateway: reloaded: {} started, {} stopped, {} restarted",
            added.len() - changed.len(),
            gone.len(),
            changed.len()
        );
    }
}

/// Connect `upstream` and keep it connected until `stop`: after its connection ends (or, over
/// HTTP, its pings fail) its items leave the lists, and it is connected again after a wait
/// that doubles up to [`MAX_BACKOFF`].
async fn supervise(
    upstream: Upstream,
    spec: config::Upstream,
    globals: Globals,
    state: watch::Sender<State>,
    stop: CancellationToken,
) {
    let name = spec.name.clone();
    let mut backoff = FIRST_BACKOFF;
    loop {
        let began = Instant::now();
        let connected = tokio::select! {
            _ = stop.cancelled() => return,
            c = connect(&upstream, &spec, &globals) => c,
        };
        match connected {
            Ok(client) => match upstream.attach(client.clone()).await {
                Ok(()) => {
                    state.send_replace(State::Connected);
                    tracing::info!(upstream = %name, "connected");
                    eprintln!("mcpkit gateway: upstream {name}: connected");
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = upstream.disconnected() => {}
                        _ = pings_fail(&client, &spec) => { upstream.detach(); }
                    }
                    let _ = client.close().await;
                    state.send_replace(State::Down("disconnected".to_owned()));
                    eprintln!("mcpkit gateway: upstream {name}: disconnected; its items are out of the lists until it is back");
                }
                Err(e) => {
                    let _ = client.close().await;
                    down(&state, &name, &e.to_string());
                }
            },
            Err(f) => down(&state, &name, &f.message),
        }
        if began.elapsed() >= HEALTHY {
            backoff = FIRST_BACKOFF;
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

fn down(state: &watch::Sender<State>, name: &str, why: &str) {
    let why = crate::target::one_line(why);
    tracing::warn!(upstream = %name, "cannot connect: {why}");
    eprintln!("mcpkit gateway: upstream {name}: {}", crate::terminal::err(&why));
    state.send_replace(State::Down(why));
}

/// Resolves when [`PINGS_MISSED`] pings in a row fail (never for a stdio upstream: its
/// connection ends with the process).
async fn pings_fail(client: &Client, spec: &config::Upstream) {
    if !matches!(spec.endpoint, crate::target::Endpoint::Url { .. }) {
        return std::future::pending().await;
    }
    let mut missed = 0;
    loop {
        tokio::time::sleep(PING_EVERY).await;
        match tokio::time::timeout(spec.timeout.min(PING_EVERY), client.ping()).await {
            Ok(Ok(())) => missed = 0,
            _ => missed += 1,
        }
        if missed >= PINGS_MISSED {
            return;
        }
    }
}

/// Connect the upstream's client, built to relay its requests to the downstream client.
async fn connect(upstream: &Upstream, spec: &config::Upstream, globals: &Globals) -> Result<Client, Failure> {
    let target = Target {
        endpoint: spec.endpoint.clone(),
        label: spec.name.clone(),
        stderr: ServerStderr::Prefix,
    };
    let options = ConnectOptions {
        timeout: spec.timeout,
        trace_wire: globals.trace_wire,
        mode: spec.mode,
        oauth_port: spec.oauth.then_some(crate::target::DEFAULT_OAUTH_PORT),
        // Its calls and session are metric series of their own (the name is the config's).
        telemetry: globals.telemetry.clone().with_label(UPSTREAM_LABEL, spec.name.clone()),
        verbose: globals.verbose,
    };
    let builder = upstream.relay(Client::builder().name("mcpkit-gateway", env!("CARGO_PKG_VERSION")));
    target.connect(builder, options).await
}

/// Send on `changed` whenever the file at `path` is written, created or replaced (editors
/// replace it: the folder is watched). `None` when the platform cannot watch it (SIGHUP still
/// reloads).
fn watch_file(path: &std::path::Path, changed: tokio::sync::mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher as _;
    let path = std::fs::canonicalize(path).ok()?;
    let folder = path.parent()?.to_path_buf();
    let name = path.file_name()?.to_owned();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            let ours = event.paths.iter().any(|p| p.file_name() == Some(&name));
            if ours && !matches!(event.kind, notify::EventKind::Access(_)) {
                let _ = changed.try_send(());
            }
        }
    })
    .ok()?;
    watcher.watch(&folder, notify::RecursiveMode::NonRecursive).ok()?;
    Some(watcher)
}
