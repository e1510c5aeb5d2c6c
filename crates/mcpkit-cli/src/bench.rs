//! `mcpkit bench`: a load generator for any MCP server.
//!
//! One client connection; `--concurrency N` callers share it. Over stdio that is N requests
//! pipelined in flight on the child's pipe; over HTTP, N concurrent POSTs on one session. After
//! `--warmup` unrecorded calls it runs `--requests N` calls (or for `--duration D`) and reports
//! requests per second and the latency distribution (an HDR histogram, 3 significant digits).

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mcpkit::types::schema::CallToolParams;
use mcpkit::{Client, RequestOptions};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::target::{one_line, Failure};

/// How long to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    /// This many recorded calls.
    Requests(u64),
    /// Recorded calls until this much time has passed.
    Duration(Duration),
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

#[derive(Deserialize)]
struct IsError {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
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

    /// May this caller start one more call?
    fn take(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return false;
        }
        if let Some(d) = self.deadline {
            if Instant::now() >= d {
                return false;
            }
        }
        match self.limit {
            Some(limit) => self.issued.fetch_add(1, Ordering::Relaxed) < limit,
            None => true,
        }
    }
}

fn new_histogram() -> Result<Histogram<u64>, Failure> {
    // 1 µs .. 1 hour at 3 significant digits.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).map_err(|e| Failure::usage(format!("histogram: {e}")))
}

/// Check the tool exists, warm up, run, and report.
pub async fn run(client: &Client, label: &str, plan: &Plan) -> Result<(Report, Option<String>), Failure> {
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
    // Serialized once; every call sends the same bytes.
    let params: Arc<RawValue> = serde_json::value::to_raw_value(&params)
        .map_err(|e| Failure::usage(format!("--args: {e}")))?
        .into();
    let concurrency = plan.concurrency.max(1);

    if plan.warmup > 0 {
        let phase = Phase::new(Some(plan.warmup), None);
        let (_, first_error) = phase_run(client, &params, concurrency, &phase).await?;
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
    let (hist, first_error) = phase_run(client, &params, concurrency, &phase).await?;
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

/// Run `concurrency` callers until the phase says stop; merge their histograms.
async fn phase_run(
    client: &Client,
    params: &Arc<RawValue>,
    concurrency: usize,
    phase: &Arc<Phase>,
) -> Result<(Histogram<u64>, Option<String>), Failure> {
    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let client = client.clone();
        let params = params.clone();
        let phase = phase.clone();
        let mut hist = new_histogram()?;
        tasks.push(tokio::spawn(async move {
            let mut first_error = None;
            let peer = client.peer();
            while phase.take() {
                let t0 = Instant::now();
                let outcome = peer
                    .request_raw("tools/call", Some(&*params), RequestOptions::default())
                    .await;
                let micros = t0.elapsed().as_micros().max(1) as u64;
                hist.saturating_record(micros);
                phase.done.fetch_add(1, Ordering::Relaxed);
                let error = match outcome {
                    Ok(raw) => match serde_json::from_str::<IsError>(raw.get()) {
                        Ok(IsError { is_error: Some(true) }) => Some("the tool returned isError".to_owned()),
                        Ok(_) => None,
                        Err(e) => Some(format!("unreadable result: {e}")),
                    },
                    Err(e) => {
                        if peer.is_closed() {
                            phase.stop.store(true, Ordering::Relaxed);
                        }
                        Some(one_line(&e.to_string()))
                    }
                };
                if let Some(e) = error {
                    phase.errors.fetch_add(1, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
            (hist, first_error)
        }));
    }
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

/// Whether to draw a progress bar: only when stderr is a terminal.
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
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
