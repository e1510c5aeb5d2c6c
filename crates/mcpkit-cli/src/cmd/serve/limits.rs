//! The limits of `mcpkit serve`: what one client may keep, connections, sessions and streams,
//! tasks (each unset flag leaves the library's default, given in its help line).

use std::time::Duration;

use mcpkit::server::backend::TaskLimits;
use mcpkit::server::http::HttpConfig;
use mcpkit::server::ClientLimits;

/// What one client may keep on its session, on stdio and over HTTP alike (`ClientLimits`, set
/// on the server; unset: the library's default, given in each help line).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct ClientLimitArgs {
    /// At most this many resources subscribed at once per session; resources/subscribe beyond
    /// it is refused [default: 100].
    #[arg(long, value_name = "N")]
    max_subscriptions: Option<usize>,
    /// The longest resource URI resources/subscribe accepts, in bytes [default: 4096].
    #[arg(long, value_name = "BYTES")]
    max_subscription_uri_bytes: Option<usize>,
    /// The most JSON an initialize's clientInfo and capabilities may take together, in bytes;
    /// a larger initialize is refused [default: 16384].
    #[arg(long, value_name = "BYTES")]
    max_client_declaration_bytes: Option<usize>,
}

impl ClientLimitArgs {
    /// The limits these flags describe, the library's defaults elsewhere.
    pub(crate) fn limits(&self) -> ClientLimits {
        let mut limits = ClientLimits::default();
        let set = |field: &mut usize, value: Option<usize>| {
            if let Some(v) = value {
                *field = v;
            }
        };
        set(&mut limits.max_subscriptions, self.max_subscriptions);
        set(&mut limits.max_subscription_uri_bytes, self.max_subscription_uri_bytes);
        set(
            &mut limits.max_client_declaration_bytes,
            self.max_client_declaration_bytes,
        );
        limits
    }
}

/// How `mcpkit serve --http` treats slow, stalled and idle connections, and how long it gives
/// them at shutdown (durations such as 500ms, 10s, 2m; a bare number is seconds).
#[derive(clap::Args, Debug, Clone, Default)]
pub(super) struct ConnectionArgs {
    /// How long a request's headers may take once its first byte arrived; then 408 and the
    /// connection is closed. Default: 10s.
    #[arg(long, requires = "http", value_name = "DURATION", value_parser = crate::target::parse_duration)]
    header_timeout: Option<Duration>,
    /// How long a request's body may take once its headers arrived; then 408 with a JSON-RPC
    /// error and the connection is closed. Default: 30s.
    #[arg(long, requires = "http", value_name = "DURATION", value_parser = crate::target::parse_duration)]
    body_timeout: Option<Duration>,
    /// How long a connection may sit without a request (after opening, or between requests)
    /// before it is closed. Default: 60s.
    #[arg(long, requires = "http", value_name = "DURATION", value_parser = crate::target::parse_duration)]
    idle_timeout: Option<Duration>,
    /// Serve at most this many connections at once; more wait, unaccepted, until one closes.
    /// Default: 1024 (keep it under the open-file limit, ulimit -n).
    #[arg(long, requires = "http", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
    /// On SIGTERM or Ctrl-C, how long the requests being served may take to finish before
    /// their connections are closed and the process exits (code 0); connections with no
    /// request being served (idle, or half-way through sending one) are closed at once.
    /// Default: 5s.
    #[arg(long, requires = "http", value_name = "DURATION", value_parser = crate::target::parse_duration)]
    shutdown_timeout: Option<Duration>,
    /// Worker threads answering requests. Default: one per CPU. 1 serves on one thread: a call
    /// then wakes no other thread on its way (more calls per CPU on a small machine shared with
    /// other work, a gateway most of all), at the cost of using one CPU at most.
    #[arg(long, requires = "http", value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

impl ConnectionArgs {
    /// `--threads N`.
    pub(super) fn threads(&self) -> Option<usize> {
        self.threads.map(usize::from)
    }

    /// Set what was given on `config`, leaving its defaults elsewhere.
    pub(super) fn apply(&self, config: &mut HttpConfig) {
        let set = |field: &mut Duration, flag: Option<Duration>| {
            if let Some(d) = flag {
                *field = d;
            }
        };
        set(&mut config.header_read_timeout, self.header_timeout);
        set(&mut config.body_read_timeout, self.body_timeout);
        set(&mut config.idle_timeout, self.idle_timeout);
        set(&mut config.shutdown_timeout, self.shutdown_timeout);
        if let Some(n) = self.max_connections {
            config.max_connections = n as usize;
        }
    }
}

/// The session and stream limits of `mcpkit serve --http`, each an `HttpConfig` field of the
/// same name (unset: the library's default, given in each help line).
#[derive(clap::Args, Debug, Clone, Default)]
pub(super) struct SessionLimitArgs {
    /// At most this many live sessions, Streamable HTTP and legacy /sse together; more get
    /// 503 [default: 10000].
    #[arg(long, requires = "http", value_name = "N")]
    max_sessions: Option<usize>,
    /// At most this many live sessions per client (its verified token subject with
    /// --auth-issuer, else its IP address); more get 503. With --redis, counted over all the
    /// instances together, as --max-sessions is [default: 1000].
    #[arg(long, requires = "http", value_name = "N")]
    max_sessions_per_client: Option<usize>,
    /// End sessions idle this long (e.g. 30m, 90s) [default: 30m].
    #[arg(long, requires = "http", value_name = "DURATION", value_parser = crate::target::parse_duration)]
    session_idle_timeout: Option<std::time::Duration>,
    /// Largest accepted request body, in bytes; larger gets 413 [default: 4194304].
    #[arg(long, requires = "http", value_name = "BYTES")]
    max_body_bytes: Option<usize>,
    /// SSE streams kept resumable (Last-Event-ID) per session [default: 64].
    #[arg(long, requires = "http", value_name = "N")]
    streams_per_session: Option<usize>,
    /// Events kept per SSE stream for Last-Event-ID replay [default: 256].
    #[arg(long, requires = "http", value_name = "N")]
    event_log_length: Option<usize>,
    /// Events queued on one SSE stream for a client that is not reading; a stream further
    /// behind is closed (the client resumes it from the event log) [default: 1024].
    #[arg(long, requires = "http", value_name = "N")]
    stream_buffer: Option<usize>,
}

impl SessionLimitArgs {
    /// Put the limits given into `config`.
    pub(super) fn apply(&self, config: &mut HttpConfig) {
        let set = |field: &mut usize, value: Option<usize>| {
            if let Some(v) = value {
                *field = v;
            }
        };
        set(&mut config.max_sessions, self.max_sessions);
        set(&mut config.max_sessions_per_client, self.max_sessions_per_client);
        set(&mut config.max_body_bytes, self.max_body_bytes);
        set(&mut config.streams_per_session, self.streams_per_session);
        set(&mut config.event_log_length, self.event_log_length);
        set(&mut config.stream_buffer, self.stream_buffer);
        if let Some(idle) = self.session_idle_timeout {
            config.session_idle_timeout = idle;
        }
    }
}

/// The bounds of the reference server's task store, stdio and HTTP (with --redis, counted
/// over all the instances together). Only expired tasks ever make room for new ones.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct TaskLimitArgs {
    /// At most this many live tasks, all clients together; more are refused [default: 10000].
    #[arg(long, value_name = "N")]
    max_tasks: Option<usize>,
    /// At most this many live tasks per client (its verified token subject with
    /// --auth-issuer, else its IP address) [default: 100].
    #[arg(long, value_name = "N")]
    max_tasks_per_client: Option<usize>,
    /// At most this many bytes of task records per client (their arguments are kept for the
    /// task's lifetime) [default: 16777216].
    #[arg(long, value_name = "BYTES")]
    max_task_bytes_per_client: Option<usize>,
}

impl TaskLimitArgs {
    /// The limits given, the library's defaults elsewhere.
    pub(crate) fn limits(&self) -> TaskLimits {
        let d = TaskLimits::default();
        TaskLimits::new(
            self.max_tasks.unwrap_or(d.capacity),
            self.max_tasks_per_client.unwrap_or(d.per_client),
            self.max_task_bytes_per_client.unwrap_or(d.per_client_bytes),
        )
    }
}
