//! `mcpkit bench`: a load generator for any MCP server.
//!
//! The bench connects with mcpkit's [`Client`] — the `initialize` handshake or the 2026-07-28
//! stateless wire (`--protocol`), session id, auth headers — checks the tool exists, then runs
//! `--warmup` unrecorded calls and `--requests N` calls (or calls for `--duration D`) with
//! `--concurrency N` in flight, and reports requests per second and the latency distribution
//! (an HDR histogram, 3 significant digits). Every reply is matched to its request by id and
//! checked: a JSON-RPC error, a result with `isError: true`, or (stateless wire) a result that
//! is not final counts as an error.
//!
//! By default (`--driver wire`) the bench writes its calls on the wire itself, so that it is not
//! the bottleneck against a fast server: the `tools/call` frame is serialized once (only the id
//! changes) and replies are read with a borrowed parse of only the id, `error` and the result's
//! `isError`/`resultType`.
//! - stdio (`stdio.rs`): the bench and the client share the server process; N calls pipelined,
//!   one writer task writing every refill of one read in one write.
//! - HTTP (`http.rs`): each of the N callers drives its own HTTP/1.1 keep-alive connection,
//!   with the headers the client's transport negotiated (session, revision, auth).
//!
//! The client stays connected throughout: the server's requests and notifications during the
//! load reach it, and it answers them. `--driver client` sends every call through the client
//! instead (`client.rs`); so does the bench over https and the legacy HTTP+SSE transport.

mod client;
mod http;
mod reply;
mod stdio;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mcpkit::types::schema::CallToolParams;
use mcpkit::{Client, ClientBuilder};
use serde::Serialize;
use serde_json::value::RawValue;

use super::Globals;
use crate::args::json_object;
use crate::target::{ConnectOptions, Failure, Target, TargetArgs};

/// Load-test one tool: N callers on one connection (pipelined over stdio, concurrent POSTs
/// on one HTTP session); prints requests/s and latency percentiles.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The tool to call.
    #[arg(long, value_name = "NAME")]
    tool: String,
    /// Its arguments as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Calls in flight at once.
    #[arg(long, short = 'c', default_value_t = 16)]
    concurrency: usize,
    /// Recorded calls (default 10000 unless --duration is given).
    #[arg(long, short = 'n', conflicts_with = "duration")]
    requests: Option<u64>,
    /// Run for this long instead of a number of calls (e.g. 10s).
    #[arg(long, short = 'd', value_parser = crate::target::parse_duration)]
    duration: Option<Duration>,
    /// Unrecorded calls first.
    #[arg(long, default_value_t = 200)]
    warmup: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// How calls are sent: `wire` (the bench writes them on the connection the client
    /// opened, and parses only what it checks in the replies) or `client` (each through
    /// mcpkit's client). Over https and the legacy HTTP+SSE transport, always `client`.
    #[arg(long, value_enum, default_value_t = Driver::Wire)]
    driver: Driver,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, check the tool, warm up, run the load, print the report, disconnect.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let args = json_object(&self.args)?;
        if self.concurrency == 0 {
            return Err(Failure::usage("--concurrency must be at least 1"));
        }
        let amount = match (self.requests, self.duration) {
            (_, Some(d)) => Amount::Duration(d),
            (Some(n), None) => Amount::Requests(n),
            (None, None) => Amount::Requests(10_000),
        };
        let plan = Plan {
            tool: self.tool,
            args,
            concurrency: self.concurrency,
            amount,
            warmup: self.warmup,
            progress: !self.json && super::stderr_is_terminal(),
            timeout: self.target.timeout,
        };
        let t = self.target.resolve()?;
        let bench = Bench::connect(
            &t,
            Client::builder().name("mcpkit-bench", env!("CARGO_PKG_VERSION")),
            globals.connect_options(&self.target),
            self.driver,
        )
        .await?;
        let outcome = measure(&bench, &t.label, &plan).await;
        bench.close().await;
        let (report, first_error) = outcome?;
        if self.json {
            println!("{}", serde_json::to_string(&report).unwrap_or_default());
        } else {
            print!("{}", report.render());
        }
        if let Some(e) = first_error {
            eprintln!(
                "mcpkit bench: {} of {} calls failed; the first: {}",
                report.errors,
                report.requests,
                crate::terminal::err(&e.to_string())
            );
        }
        Ok(0)
    }
}

/// How long to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    /// This many recorded calls.
    Requests(u64),
    /// Recorded calls until this much time has passed.
    Duration(Duration),
}

/// How the calls of the load are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Driver {
    /// The bench writes its calls on the wire itself (after the client connected), with a
    /// borrowed parse of the replies: fast enough not to be the bottleneck.
    #[default]
    Wire,
    /// Every call through mcpkit's client and its transport.
    Client,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The tool to call.
    pub tool: String,
    /// Its arguments (a JSON object), sent unchanged with every call.
    pub args: serde_json::Map<String, serde_json::Value>,
    /// Callers in flight at once.
    pub concurrency: usize,
    /// Recorded calls or time.
    pub amount: Amount,
    /// Unrecorded calls first.
    pub warmup: u64,
    /// Draw a progress bar (only sensible on a terminal).
    pub progress: bool,
    /// A call with no reply after this long fails.
    pub timeout: Duration,
}

/// The result, in the field names the JSON output uses.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// The target's label (URL, configured name, command line or `builtin`).
    pub target: String,
    /// The tool called.
    pub tool: String,
    /// Callers in flight at once.
    pub concurrency: usize,
    /// Recorded calls (errors included).
    pub requests: u64,
    /// Calls that failed: protocol errors, timeouts, or results with `isError`.
    pub errors: u64,
    /// Wall time of the recorded phase.
    pub duration_s: f64,
    /// `requests / duration_s`.
    pub rps: f64,
    /// Median latency, microseconds.
    pub p50_us: f64,
    /// 90th percentile latency, microseconds.
    pub p90_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
    /// Slowest call, microseconds.
    pub max_us: f64,
}

/// Shared between the callers of one phase.
struct Phase {
    /// Calls handed out so far (bounded by `limit` when counting).
    issued: AtomicU64,
    limit: Option<u64>,
    deadline: Option<Instant>,
    done: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
}

impl Phase {
    fn new(limit: Option<u64>, deadline: Option<Instant>) -> Arc<Self> {
        Arc::new(Phase {
            issued: AtomicU64::new(0),
            limit,
            deadline,
            done: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        })
    }

    /// May a caller start one more call (it is `now`)?
    fn take(&self, now: Instant) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return false;
        }
        match self.limit {
            Some(limit) => self.issued.fetch_add(1, Ordering::Relaxed) < limit,
            None => true,
        }
    }
}

/// What a phase measured: the latencies and the first error.
type PhaseResult = (Histogram<u64>, Option<String>);

fn new_histogram() -> Result<Histogram<u64>, Failure> {
    // 1 µs .. 1 hour at 3 significant digits.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).map_err(|e| Failure::usage(format!("histogram: {e}")))
}

/// A connected client and the way the load is sent.
pub struct Bench {
    client: Client,
    load: Load,
}

enum Load {
    Client,
    Stdio(stdio::PipeDriver),
    Http(http::HttpDriver),
}

impl Bench {
    /// Connect to `target` with the client `builder` makes (within the connect timeout), ready
    /// to send the load with `driver`.
    pub async fn connect(
        target: &Target,
        builder: ClientBuilder,
        options: ConnectOptions,
        driver: Driver,
    ) -> Result<Bench, Failure> {
        if driver == Driver::Client {
            let client = target.connect(builder, options).await?;
            return Ok(Bench {
                client,
                load: Load::Client,
            });
        }
        if let Some(cmd) = target.command()? {
            let label = &target.label;
            let (transport, driver) =
                stdio::spawn(cmd).map_err(|e| Failure::usage(format!("cannot start {label}: {e}")))?;
            let client = target.connect_over(builder, options, transport).await?;
            return Ok(Bench {
                client,
                load: Load::Stdio(driver),
            });
        }
        // Not a stdio server: an HTTP one.
        let t = target.open_http(options.timeout, options.oauth_port)?;
        let info = t.info();
        let (shared, injector) = http::Shared::new(t);
        let client = target.connect_over(builder, options, shared).await?;
        let load = if http::HttpDriver::usable(&info) {
            Load::Http(http::HttpDriver::new(info, injector))
        } else {
            Load::Client
        };
        Ok(Bench { client, load })
    }

    /// The connected client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Disconnect (and stop a stdio server).
    pub async fn close(self) {
        let _ = self.client.close().await;
    }

    async fn phase(
        &self,
        params: &Arc<RawValue>,
        template: &Arc<reply::Template>,
        concurrency: usize,
        timeout: Duration,
        phase: &Arc<Phase>,
    ) -> Result<PhaseResult, Failure> {
        match &self.load {
            Load::Client => client::run(&self.client, params, concurrency, phase).await,
            Load::Stdio(d) => d.run(template, concurrency, timeout, phase).await,
            Load::Http(d) => d.run(template, concurrency, timeout, phase).await,
        }
    }
}

/// Wait for the callers of a phase; merge their histograms.
async fn merge(tasks: Vec<tokio::task::JoinHandle<PhaseResult>>) -> Result<PhaseResult, Failure> {
    let mut total = new_histogram()?;
    let mut first_error = None;
    for t in tasks {
        match t.await {
            Ok((h, e)) => {
                let _ = total.add(&h);
                if first_error.is_none() {
                    first_error = e;
                }
            }
            Err(e) => return Err(Failure::usage(format!("a bench caller failed: {e}"))),
        }
    }
    Ok((total, first_error))
}

/// Check the tool exists, warm up, run, and report.
pub async fn measure(bench: &Bench, label: &str, plan: &Plan) -> Result<(Report, Option<String>), Failure> {
    let client = &bench.client;
    let tools = client.list_all_tools().await?;
    if !tools.iter().any(|t| t.name == plan.tool) {
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        return Err(Failure::usage(format!(
            "the server has no tool {:?} (it has: {})",
            plan.tool,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    }
    let mut params = CallToolParams::new(plan.tool.clone());
    if !plan.args.is_empty() {
        params = params
            .with_arguments(&plan.args)
            .map_err(|e| Failure::usage(format!("--args: {e}")))?;
    }
    // Serialized once, as the connection's era wants them; every call sends the same bytes.
    let params: Arc<RawValue> = client
        .wire_params(&params)
        .map_err(|e| Failure::usage(format!("--args: {e}")))?
        .into();
    let template = Arc::new(reply::Template::new(&params));
    let concurrency = plan.concurrency.max(1);

    if plan.warmup > 0 {
        let phase = Phase::new(Some(plan.warmup), None);
        let (_, first_error) = bench
            .phase(&params, &template, concurrency, plan.timeout, &phase)
            .await?;
        if phase.errors.load(Ordering::Relaxed) == phase.done.load(Ordering::Relaxed) {
            if let Some(e) = first_error {
                return Err(Failure::usage(format!(
                    "every warm-up call of {:?} failed: {e}",
                    plan.tool
                )));
            }
        }
    }

    let (limit, deadline) = match plan.amount {
        Amount::Requests(n) => (Some(n), None),
        Amount::Duration(d) => (None, Some(Instant::now() + d)),
    };
    let phase = Phase::new(limit, deadline);
    let bar = plan.progress.then(|| progress_bar(plan.amount));
    let ticker = bar.clone().map(|bar| {
        let phase = phase.clone();
        let amount = plan.amount;
        let start = Instant::now();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                match amount {
                    Amount::Requests(_) => bar.set_position(phase.done.load(Ordering::Relaxed)),
                    Amount::Duration(_) => bar.set_position(start.elapsed().as_millis() as u64),
                }
                bar.set_message(format!(
                    "{} calls, {} errors",
                    phase.done.load(Ordering::Relaxed),
                    phase.errors.load(Ordering::Relaxed)
                ));
            }
        })
    });
    let start = Instant::now();
    let (hist, first_error) = bench
        .phase(&params, &template, concurrency, plan.timeout, &phase)
        .await?;
    let elapsed = start.elapsed();
    if let Some(t) = ticker {
        t.abort();
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let requests = phase.done.load(Ordering::Relaxed);
    let secs = elapsed.as_secs_f64();
    let us = |q: f64| hist.value_at_quantile(q) as f64;
    let report = Report {
        target: label.to_owned(),
        tool: plan.tool.clone(),
        concurrency,
        requests,
        errors: phase.errors.load(Ordering::Relaxed),
        duration_s: secs,
        rps: if secs > 0.0 { requests as f64 / secs } else { 0.0 },
        p50_us: if requests > 0 { us(0.50) } else { 0.0 },
        p90_us: if requests > 0 { us(0.90) } else { 0.0 },
        p99_us: if requests > 0 { us(0.99) } else { 0.0 },
        max_us: if requests > 0 { hist.max() as f64 } else { 0.0 },
    };
    Ok((report, first_error))
}

fn progress_bar(amount: Amount) -> indicatif::ProgressBar {
    let (len, template) = match amount {
        Amount::Requests(n) => (n, "{bar:40} {pos}/{len} {msg}"),
        Amount::Duration(d) => (d.as_millis() as u64, "{bar:40} {elapsed} {msg}"),
    };
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

impl Report {
    /// The human-readable summary.
    pub fn render(&self) -> String {
        let ms = |us: f64| format!("{:.3} ms", us / 1000.0);
        format!(
            "target       {}\ntool         {}\nconcurrency  {}\nrequests     {} ({} errors)\nduration     {:.3} s\nthroughput   {:.1} requests/s\nlatency      p50 {}  p90 {}  p99 {}  max {}\n",
            self.target,
            self.tool,
            self.concurrency,
            self.requests,
            self.errors,
            self.duration_s,
            self.rps,
            ms(self.p50_us),
            ms(self.p90_us),
            ms(self.p99_us),
            ms(self.max_us),
        )
    }
}
