//! The independent stdio load driver of the harness: it shares no code with mcpkit (std and
//! serde_json only). It starts the server, sends `initialize` and `notifications/initialized`, then
//! keeps IN_FLIGHT requests on the pipe for the warm-up count and then for DURATION seconds, and
//! prints one JSON object: `{"requests":N,"errors":E,"seconds":S,"rps":R,"p50_us":..,"p99_us":..}`.
//!
//! Every reply is checked: it must carry the id of a request in flight and a `result` (a
//! `tools/call` result with `"isError":true`, an `error`, or an unknown id count as errors).
//! With one in flight the driver is one thread (write, flush, read); with more, a writer thread
//! refills the window from the credits the reading thread hands back, flushing when it has none.
//!
//! `--list-tools` replaces the call by a full `tools/list` (following `nextCursor` until the
//! last page; one "request" is the whole listing, sequential only), and prints the number of
//! tools seen as `"tools"`.
//!
//! Usage: stdio-load [--in-flight N] [--duration SECONDS] [--warmup CALLS] [--args JSON]
//!                   [--list-tools] -- CMD [ARGS...]

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-load","version":"0"}}}"#;
/// Send times are kept per id modulo this (a power of two far above any window in use).
const SLOTS: usize = 1 << 16;

struct Opts {
    in_flight: usize,
    duration: Duration,
    warmup: u64,
    args: String,
    list_tools: bool,
    cmd: Vec<String>,
}

fn parse_opts() -> Result<Opts, String> {
    let mut o = Opts {
        in_flight: 1,
        duration: Duration::from_secs(5),
        warmup: 500,
        args: r#"{"message":"hello"}"#.into(),
        list_tools: false,
        cmd: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut val = || it.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--in-flight" => o.in_flight = val()?.parse().map_err(|e| format!("--in-flight: {e}"))?,
            "--duration" => {
                o.duration = Duration::from_secs_f64(val()?.parse().map_err(|e| format!("--duration: {e}"))?)
            }
            "--warmup" => o.warmup = val()?.parse().map_err(|e| format!("--warmup: {e}"))?,
            "--args" => o.args = val()?,
            "--list-tools" => o.list_tools = true,
            "--" => {
                o.cmd = it.collect();
                break;
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if o.cmd.is_empty() || o.in_flight == 0 || o.in_flight >= SLOTS / 2 {
        return Err("usage: stdio-load [--in-flight N] [--duration S] [--warmup N] [--args JSON] [--list-tools] -- CMD [ARGS...]".into());
    }
    Ok(o)
}

/// The id of a reply line, read without a full parse: the digits after the first `"id":`.
fn reply_id(line: &str) -> Option<u64> {
    let at = line.find("\"id\":")? + 5;
    let digits: &str = line[at..].trim_start();
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// Whether a reply is a success: a `result`, and not a tool result flagged `isError`.
fn reply_ok(line: &str) -> bool {
    line.contains("\"result\":") && !line.contains("\"isError\":true")
}

struct Server {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

fn start(cmd: &[String]) -> Result<Server, String> {
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", cmd[0]))?;
    let stdin = BufWriter::with_capacity(1 << 16, child.stdin.take().ok_or("no stdin")?);
    let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().ok_or("no stdout")?);
    let mut s = Server { child, stdin, stdout };
    writeln!(s.stdin, "{INIT}").and_then(|_| s.stdin.flush()).map_err(|e| e.to_string())?;
    let mut line = String::new();
    s.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
    if !line.contains("\"result\"") {
        return Err(format!("initialize failed: {}", line.trim()));
    }
    writeln!(s.stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#)
        .and_then(|_| s.stdin.flush())
        .map_err(|e| e.to_string())?;
    Ok(s)
}

fn call_frame(id: u64, args: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{args}}}}}"#)
}

struct Report {
    latencies_ns: Vec<u64>,
    errors: u64,
    seconds: f64,
    tools: Option<u64>,
}

/// Reads lines until the reply with `id` (skipping notifications); Err on EOF.
fn read_reply(stdout: &mut BufReader<ChildStdout>, line: &mut String, id: u64) -> Result<(), String> {
    loop {
        line.clear();
        if stdout.read_line(line).map_err(|e| e.to_string())? == 0 {
            return Err("the server closed its stdout".into());
        }
        if reply_id(line) == Some(id) {
            return Ok(());
        }
    }
}

/// One in flight: one thread writes a call, flushes, reads its reply.
fn sequential(s: &mut Server, o: &Opts) -> Result<Report, String> {
    let mut line = String::new();
    let mut latencies_ns = Vec::with_capacity(1 << 20);
    let (mut errors, mut tools) = (0, None);
    let mut id = 0u64;
    let mut run = |id: u64, line: &mut String| -> Result<(bool, u64), String> {
        if !o.list_tools {
            writeln!(s.stdin, "{}", call_frame(id, &o.args)).and_then(|_| s.stdin.flush()).map_err(|e| e.to_string())?;
            read_reply(&mut s.stdout, line, id)?;
            return Ok((reply_ok(line), 0));
        }
        // A full listing: pages until the one without nextCursor.
        let (mut cursor, mut count, mut page) = (None::<String>, 0u64, 0u64);
        loop {
            let page_id = id * 1000 + page;
            let params = match &cursor {
                Some(c) => serde_json::json!({ "cursor": c }),
                None => serde_json::json!({}),
            };
            let frame = serde_json::json!({"jsonrpc":"2.0","id":page_id,"method":"tools/list","params":params});
            writeln!(s.stdin, "{frame}").and_then(|_| s.stdin.flush()).map_err(|e| e.to_string())?;
            read_reply(&mut s.stdout, line, page_id)?;
            let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
            let Some(list) = v["result"]["tools"].as_array() else { return Ok((false, count)) };
            count += list.len() as u64;
            match v["result"]["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok((true, count)),
            }
            page += 1;
        }
    };
    for _ in 0..o.warmup {
        id += 1;
        run(id, &mut line)?;
    }
    let start = Instant::now();
    while start.elapsed() < o.duration {
        id += 1;
        let t = Instant::now();
        let (ok, n) = run(id, &mut line)?;
        latencies_ns.push(t.elapsed().as_nanos() as u64);
        errors += u64::from(!ok);
        if o.list_tools {
            tools = Some(n);
        }
    }
    Ok(Report { latencies_ns, errors, seconds: start.elapsed().as_secs_f64(), tools })
}

/// IN_FLIGHT requests on the pipe: a writer thread spends credits, this thread reads replies
/// and hands a credit back for each.
fn pipelined(s: Server, o: &Opts) -> Result<Report, String> {
    let Server { mut child, mut stdin, mut stdout } = s;
    let epoch = Instant::now();
    let sent_at: Arc<Vec<AtomicU64>> = Arc::new((0..SLOTS).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(o.in_flight);
    let writer = {
        let (sent_at, stop, args) = (sent_at.clone(), stop.clone(), o.args.clone());
        std::thread::spawn(move || -> std::io::Result<u64> {
            let mut id = 0u64;
            let mut frame = String::new();
            loop {
                if credit_rx.try_recv().is_err() {
                    stdin.flush()?;
                    if credit_rx.recv().is_err() {
                        return Ok(id);
                    }
                }
                if stop.load(Ordering::Relaxed) {
                    stdin.flush()?;
                    return Ok(id);
                }
                id += 1;
                frame.clear();
                frame.push_str(&call_frame(id, &args));
                frame.push('\n');
                sent_at[id as usize % SLOTS].store(epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
                stdin.write_all(frame.as_bytes())?;
            }
        })
    };
    for _ in 0..o.in_flight {
        let _ = credit_tx.send(());
    }
    let mut line = String::new();
    let mut latencies_ns = Vec::with_capacity(1 << 22);
    let (mut seen, mut errors) = (0u64, 0u64);
    let mut start = (o.warmup == 0).then(Instant::now);
    let mut deadline = start.map(|s| s + o.duration);
    loop {
        line.clear();
        if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err(format!("the server closed its stdout after {seen} replies"));
        }
        let Some(id) = reply_id(&line) else { continue }; // a notification
        seen += 1;
        if seen == o.warmup {
            start = Some(Instant::now());
            deadline = start.map(|s| s + o.duration);
        }
        if let Some(d) = deadline {
            if seen > o.warmup {
                let now = epoch.elapsed().as_nanos() as u64;
                latencies_ns.push(now.saturating_sub(sent_at[id as usize % SLOTS].load(Ordering::Relaxed)));
                errors += u64::from(!reply_ok(&line));
            }
            if Instant::now() >= d {
                break;
            }
        }
        let _ = credit_tx.try_send(());
    }
    let seconds = start.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0);
    stop.store(true, Ordering::Relaxed);
    drop(credit_tx);
    let _ = child.kill();
    let _ = child.wait();
    let _ = writer.join();
    Ok(Report { latencies_ns, errors, seconds, tools: None })
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

fn main() {
    let o = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("stdio-load: {e}");
            std::process::exit(2)
        }
    };
    let result = start(&o.cmd).and_then(|mut s| {
        if o.in_flight == 1 || o.list_tools {
            let r = sequential(&mut s, &o);
            let _ = s.child.kill();
            let _ = s.child.wait();
            r
        } else {
            pipelined(s, &o)
        }
    });
    match result {
        Ok(mut r) => {
            r.latencies_ns.sort_unstable();
            let n = r.latencies_ns.len() as u64;
            let mut out = serde_json::json!({
                "requests": n,
                "errors": r.errors,
                "seconds": r.seconds,
                "rps": n as f64 / r.seconds.max(1e-9),
                "p50_us": percentile(&r.latencies_ns, 0.50),
                "p99_us": percentile(&r.latencies_ns, 0.99),
            });
            if let Some(t) = r.tools {
                out["tools"] = t.into();
            }
            println!("{out}");
        }
        Err(e) => {
            eprintln!("stdio-load: {e}");
            std::process::exit(1)
        }
    }
}
