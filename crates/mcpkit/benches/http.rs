//! The Streamable HTTP transport end to end on 127.0.0.1: mcpkit's HTTP server
//! (`HttpServer::serve`, an `echo` tool) and mcpkit's HTTP client transport on one 2025-11-25
//! session — `tools/call echo` from 1 caller (latency) and from 16 concurrent callers
//! (throughput). Before criterion runs, a plain measurement of the memory an idle session costs:
//! 1,000 sessions opened with raw requests (initialize + initialized, no GET stream), the
//! process's resident set size read from `/proc/self/statm` before and after; and per-call
//! latency percentiles (p50/p90/p99) for 1 and 16 callers.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{Args, ToolDef};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    message: String,
}

fn echo_server() -> Server {
    Server::builder()
        .name("http-bench", "1.0.0")
        .tool(ToolDef::new("echo", |Args(a): Args<Echo>| async move { a.message }).description("echo"))
        .build()
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Start the server on 127.0.0.1:0 in `rt`; its `/mcp` URL and the sender that stops it.
fn start(rt: &Runtime) -> (String, oneshot::Sender<()>) {
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let token = tokio_util::sync::CancellationToken::new();
        // One client opens every session here: lift the per-client cap (1,000 by default).
        let config = HttpConfig {
            max_sessions_per_client: usize::MAX,
            ..HttpConfig::default()
        };
        let http = HttpServer::new(echo_server())
            .config(config)
            .sse_legacy(true)
            .shutdown(token.clone());
        tokio::spawn(async move {
            let _ = stopped.await;
            token.cancel();
        });
        tokio::spawn(http.serve(listener));
        (format!("http://{addr}/mcp"), stop)
    })
}

// ---------------------------------------------------------------------------------------------
// Memory per idle session.

/// The resident set size in KiB, from `/proc/self/statm` (pages) and the kernel page size.
fn rss_kib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_size_kib())
}

/// The page size in KiB, from `/proc/self/smaps` (4 when it cannot be read).
fn page_size_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("KernelPageSize:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(4)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// initialize + initialized over raw HTTP; the session id.
async fn open_session(http: &reqwest::Client, url: &str) -> String {
    let r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    r.bytes().await.unwrap();
    let r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .body(INITIALIZED)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::ACCEPTED);
    id
}

fn idle_session_memory() {
    const SESSIONS: usize = 1000;
    /// Sessions opened at once (each over its own pooled connection).
    const PARALLEL: usize = 8;
    let Some(_) = rss_kib() else {
        println!("idle sessions: /proc/self/statm is not readable here; skipped");
        return;
    };
    let rt = runtime();
    let (url, stop) = start(&rt);
    let http = reqwest::Client::new();
    // Warm up: the first sessions pay for lazily built state (schemas, pools, buffers).
    rt.block_on(async {
        for _ in 0..PARALLEL * 4 {
            open_session(&http, &url).await;
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    let before = rss_kib().unwrap_or(0);
    let ids = rt.block_on(async {
        let mut ids = Vec::with_capacity(SESSIONS);
        for _ in 0..SESSIONS / PARALLEL {
            let batch = (0..PARALLEL).map(|_| open_session(&http, &url));
            ids.extend(futures_util::future::join_all(batch).await);
        }
        ids
    });
    assert_eq!(ids.len(), SESSIONS);
    let after = rss_kib().unwrap_or(0);
    std::thread::sleep(Duration::from_millis(500));
    let settled = rss_kib().unwrap_or(0);
    let growth = settled.saturating_sub(before);
    println!("idle sessions: {SESSIONS}, RSS before {before} KiB, after {after} KiB, settled {settled} KiB");
    println!(
        "idle sessions: {SESSIONS}, RSS growth: {growth} KiB, per session: {:.1} KiB",
        growth as f64 / SESSIONS as f64
    );
    let _ = stop.send(());
    drop(http);
    rt.shutdown_timeout(Duration::from_secs(2));
}

// ---------------------------------------------------------------------------------------------
// tools/call over HTTP.

fn tools_call_over_http(c: &mut Criterion) {
    let rt = runtime();
    let (url, _stop) = start(&rt);
    let client = rt.block_on(async {
        let transport = HttpClientTransport::new(&url).unwrap();
        Client::builder().connect(transport).await.unwrap()
    });
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let args = serde_json::json!({"message": "hello, this is a typical tool argument of moderate length"});
    // One call first, so the connection pool and the session are warm.
    rt.block_on(client.call_tool("echo", &args)).unwrap();

    let mut g = c.benchmark_group("tools_call_http");
    g.throughput(Throughput::Elements(1));
    g.bench_function(BenchmarkId::from_parameter("1_caller"), |b| {
        b.to_async(&rt)
            .iter(|| async { client.call_tool("echo", &args).await.unwrap() })
    });
    g.throughput(Throughput::Elements(16));
    g.bench_function(BenchmarkId::from_parameter("16_callers"), |b| {
        b.to_async(&rt).iter(|| async {
            let calls = (0..16).map(|_| client.call_tool("echo", &args));
            for r in futures_util::future::join_all(calls).await {
                r.unwrap();
            }
        })
    });
    g.finish();
    rt.block_on(client.close()).unwrap();
}

/// Per-call latency percentiles, which criterion's means do not show: `callers` tasks each
/// make `calls` sequential calls on one session; every call is timed.
fn latency_percentiles(callers: usize, calls: usize) {
    let rt = runtime();
    let (url, _stop) = start(&rt);
    let (mut lat, wall) = rt.block_on(async {
        let client = Client::builder()
            .connect(HttpClientTransport::new(&url).unwrap())
            .await
            .unwrap();
        let args = serde_json::json!({"message": "hello, this is a typical tool argument of moderate length"});
        client.call_tool("echo", &args).await.unwrap();
        let started = std::time::Instant::now();
        let tasks = (0..callers).map(|_| {
            let (client, args) = (client.clone(), args.clone());
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(calls);
                for _ in 0..calls {
                    let t = std::time::Instant::now();
                    client.call_tool("echo", &args).await.unwrap();
                    lat.push(t.elapsed());
                }
                lat
            })
        });
        let mut all = Vec::new();
        for t in futures_util::future::join_all(tasks).await {
            all.extend(t.unwrap());
        }
        let wall = started.elapsed();
        client.close().await.unwrap();
        (all, wall)
    });
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    println!(
        "http tools/call echo, {callers} caller(s): {:.0} calls/s, p50 {:?}, p90 {:?}, p99 {:?}, max {:?} ({} calls)",
        lat.len() as f64 / wall.as_secs_f64(),
        pct(0.50),
        pct(0.90),
        pct(0.99),
        lat[lat.len() - 1],
        lat.len()
    );
    rt.shutdown_timeout(Duration::from_secs(2));
}

fn main() {
    idle_session_memory();
    latency_percentiles(1, 2000);
    latency_percentiles(16, 250);
    let mut c = Criterion::default().configure_from_args();
    tools_call_over_http(&mut c);
    c.final_summary();
}
