//! What the page and the MCP client share: the events the page is sent (the wire, progress,
//! the server's questions, connection changes), the questions waiting for the page's answer,
//! the calls running (for "Cancel"), and the client of the current connection.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use mcpkit::apps::host::AppBridge;
use mcpkit::client::ConnectMode;
use mcpkit::types::schema::{LoggingLevel, Root};
use mcpkit::Client;
use serde_json::{json, Value};
use tokio::sync::{broadcast, oneshot};
use tokio::task::AbortHandle;

use crate::target::ConnectOptions;

/// Events kept for a page that opens (or reloads) late: enough for a long session's Messages,
/// and at most this many bytes (a server sending images fills it fast).
const HISTORY: usize = 5000;
const HISTORY_BYTES: usize = 32 << 20;

/// Views open at once (the App region shows one; a few more stay reachable while a page
/// replaces them): opening one more closes the oldest.
const VIEWS: usize = 8;

/// Shared between the HTTP handlers, the client's handlers and the watcher.
pub(super) struct Hub {
    state: Mutex<State>,
    events: broadcast::Sender<Arc<str>>,
    /// How to connect; the page may switch the era.
    options: Mutex<ConnectOptions>,
}

#[derive(Default)]
struct State {
    history: VecDeque<Arc<str>>,
    history_bytes: usize,
    next_ask: u64,
    /// Server questions waiting for the page: id → where the answer goes.
    asks: HashMap<u64, oneshot::Sender<Value>>,
    /// Running tool calls by the page's call id.
    calls: HashMap<u64, AbortHandle>,
    /// The task a running call became, by the page's call id.
    tasks: HashMap<u64, String>,
    client: Option<Client>,
    /// Bumped on every (re)connection, so the page knows to reload what it shows.
    generation: u64,
    /// Why there is no client now (a failed start or build), for the page.
    down: Option<String>,
    next_view: u64,
    /// The views open in the App region, oldest first.
    views: VecDeque<OpenView>,
    /// The roots the page offers the server.
    roots: Vec<Root>,
    /// The logging level the page chose, set again on every new connection.
    log_level: Option<LoggingLevel>,
}

/// A view open in the App region: its bridge to the server, its document and the key its URL
/// carries on the views' origin.
#[derive(Clone)]
pub(super) struct OpenView {
    pub(super) id: u64,
    pub(super) bridge: AppBridge,
    pub(super) html: Arc<str>,
    pub(super) csp: Arc<str>,
    pub(super) key: Arc<str>,
    /// The task that carries the bridge's output to the page.
    pump: AbortHandle,
}

impl Hub {
    /// An empty hub that connects with `options`.
    pub(super) fn new(options: ConnectOptions) -> Arc<Hub> {
        let (events, _) = broadcast::channel(1024);
        Arc::new(Hub {
            state: Mutex::new(State::default()),
            events,
            options: Mutex::new(options),
        })
    }

    /// How to connect now.
    pub(super) fn options(&self) -> ConnectOptions {
        self.options.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Connect in `mode` from now on.
    pub(super) fn set_mode(&self, mode: ConnectMode) {
        self.options.lock().unwrap_or_else(PoisonError::into_inner).mode = mode;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Send `event` (a JSON object with a `kind`) to every page, and keep it for later ones.
    pub(super) fn publish(&self, event: Value) {
        let text: Arc<str> = Arc::from(event.to_string());
        // Under the lock, so a page subscribing now sees it either in the history or live,
        // never both or neither.
        let mut s = self.lock();
        s.history_bytes += text.len();
        s.history.push_back(text.clone());
        while s.history.len() > HISTORY || (s.history_bytes > HISTORY_BYTES && s.history.len() > 1) {
            if let Some(old) = s.history.pop_front() {
                s.history_bytes -= old.len();
            }
        }
        // No page open: nothing to do.
        let _ = self.events.send(text);
    }

    /// The events so far, and the live ones from now on.
    pub(super) fn subscribe(&self) -> (Vec<Arc<str>>, broadcast::Receiver<Arc<str>>) {
        let s = self.lock();
        (s.history.iter().cloned().collect(), self.events.subscribe())
    }

    /// Ask the page (`method` is the server's request, `params` its params) and wait for the
    /// answer; `None` when the connection it came on is replaced before an answer.
    pub(super) async fn ask(&self, method: &str, params: Value) -> Option<Value> {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut s = self.lock();
            s.next_ask += 1;
            let id = s.next_ask;
            s.asks.insert(id, tx);
            id
        };
        // Whether answered, replaced or given up (the server cancelled its request, and the
        // client dropped this future), the page closes the dialog.
        let _closes = Closes { hub: self, id };
        self.publish(json!({"kind": "ask", "id": id, "method": method, "params": params}));
        rx.await.ok()
    }

    /// The page's answer to question `id`; false when no such question waits.
    pub(super) fn answer(&self, id: u64, answer: Value) -> bool {
        match self.lock().asks.remove(&id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Remember a running call, for [`Hub::cancel`].
    pub(super) fn start_call(&self, id: u64, handle: AbortHandle) {
        self.lock().calls.insert(id, handle);
    }

    /// Call `id` became task `task`: "Cancel" cancels the task.
    pub(super) fn start_task(&self, id: u64, task: String) {
        self.lock().tasks.insert(id, task);
    }

    /// Call `id`'s task ended.
    pub(super) fn end_task(&self, id: u64) {
        self.lock().tasks.remove(&id);
    }

    /// The task call `id` became, if it did and still runs.
    pub(super) fn task_of(&self, id: u64) -> Option<String> {
        self.lock().tasks.get(&id).cloned()
    }

    /// Forget a call that ended.
    pub(super) fn end_call(&self, id: u64) {
        self.lock().calls.remove(&id);
    }

    /// Stop call `id`: dropping the request makes the client send `notifications/cancelled`.
    pub(super) fn cancel(&self, id: u64) -> bool {
        match self.lock().calls.remove(&id) {
            Some(h) => {
                h.abort();
                true
            }
            None => false,
        }
    }

    /// The client of the current connection.
    pub(super) fn client(&self) -> Option<Client> {
        self.lock().client.clone()
    }

    /// The generation of the current connection and why it is down, if it is.
    pub(super) fn status(&self) -> (u64, Option<String>) {
        let s = self.lock();
        (s.generation, s.down.clone())
    }

    /// A new view number.
    pub(super) fn next_view(&self) -> u64 {
        let mut s = self.lock();
        s.next_view += 1;
        s.next_view
    }

    /// Keep `view` open (its output carried by `pump`); the oldest closes beyond [`VIEWS`].
    pub(super) fn add_view(
        &self,
        id: u64,
        bridge: AppBridge,
        html: Arc<str>,
        csp: Arc<str>,
        key: Arc<str>,
        pump: AbortHandle,
    ) {
        let mut s = self.lock();
        s.views.push_back(OpenView {
            id,
            bridge,
            html,
            csp,
            key,
            pump,
        });
        while s.views.len() > VIEWS {
            if let Some(old) = s.views.pop_front() {
                old.pump.abort();
            }
        }
    }

    /// Open view `id`.
    pub(super) fn view(&self, id: u64) -> Option<OpenView> {
        self.lock().views.iter().find(|v| v.id == id).cloned()
    }

    /// Close view `id`; whether it was open.
    pub(super) fn close_view(&self, id: u64) -> bool {
        let mut s = self.lock();
        let before = s.views.len();
        s.views.retain(|v| {
            if v.id == id {
                v.pump.abort();
            }
            v.id != id
        });
        s.views.len() != before
    }

    /// The roots offered to the server.
    pub(super) fn roots(&self) -> Vec<Root> {
        self.lock().roots.clone()
    }

    /// Offer `roots` from now on.
    pub(super) fn set_roots(&self, roots: Vec<Root>) {
        self.lock().roots = roots;
    }

    /// The logging level the page chose, if any.
    pub(super) fn log_level(&self) -> Option<LoggingLevel> {
        self.lock().log_level
    }

    /// Remember the logging level the page chose.
    pub(super) fn set_log_level(&self, level: LoggingLevel) {
        self.lock().log_level = Some(level);
    }

    /// A new connection replaces the old one (returned, to be closed); its calls, open
    /// questions and views end. Also returns the new connection's generation.
    pub(super) fn connected(&self, client: Client) -> (Option<Client>, u64) {
        let (old, generation) = {
            let mut s = self.lock();
            s.generation += 1;
            s.down = None;
            for (_, call) in s.calls.drain() {
                call.abort();
            }
            for view in s.views.drain(..) {
                view.pump.abort();
            }
            s.tasks.clear();
            // Dropping the senders answers the questions with `None`.
            s.asks.clear();
            (s.client.replace(client), s.generation)
        };
        self.publish(json!({"kind": "connected", "generation": generation}));
        (old, generation)
    }

    /// Connection `generation` ended by itself (the server exited or hung up): say so, unless
    /// it was already replaced or closed on purpose.
    pub(super) fn lost(&self, generation: u64, why: String) {
        let current = {
            let s = self.lock();
            s.generation == generation && s.client.is_some()
        };
        if current {
            self.disconnected(why);
        }
    }

    /// The connection is gone (or could not be made): `why`, for the page. Returns the client
    /// to close.
    pub(super) fn disconnected(&self, why: String) -> Option<Client> {
        let old = {
            let mut s = self.lock();
            s.down = Some(why.clone());
            for (_, call) in s.calls.drain() {
                call.abort();
            }
            for view in s.views.drain(..) {
                view.pump.abort();
            }
            s.tasks.clear();
            s.asks.clear();
            s.client.take()
        };
        self.publish(json!({"kind": "disconnected", "reason": why}));
        old
    }
}

/// Tells the page a question is closed, when dropped.
struct Closes<'a> {
    hub: &'a Hub,
    id: u64,
}

impl Drop for Closes<'_> {
    fn drop(&mut self) {
        self.hub.lock().asks.remove(&self.id);
        self.hub.publish(json!({"kind": "answered", "id": self.id}));
    }
}

/// `HH:MM:SS.mmm` in UTC, as `--trace-wire` prints it.
pub(super) fn timestamp() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        now.subsec_millis()
    )
}
