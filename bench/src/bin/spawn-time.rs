//! Spawn-to-initialized time of a stdio MCP server: start the command, send `initialize`, and stop
//! the clock when its response is read. Then send `notifications/initialized`, close stdin and wait
//! for the process to exit (not timed). Repeated RUNS times; prints one JSON object with the
//! median, min and max in milliseconds.
//!
//! Usage: spawn-time RUNS -- CMD [ARGS...]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"spawn-time","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn once(cmd: &str, args: &[String]) -> Result<f64, String> {
    let start = Instant::now();
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {cmd}: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    writeln!(stdin, "{INIT}").map_err(|e| format!("write: {e}"))?;
    stdin.flush().map_err(|e| format!("flush: {e}"))?;
    let mut line = String::new();
    let elapsed = loop {
        line.clear();
        if stdout.read_line(&mut line).map_err(|e| format!("read: {e}"))? == 0 {
            return Err("server closed stdout before answering initialize".into());
        }
        let v: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if v.get("id") == Some(&serde_json::json!(1)) {
            if v.get("result").is_none() {
                return Err(format!("initialize failed: {}", line.trim()));
            }
            break start.elapsed();
        }
    };
    let _ = writeln!(stdin, "{INITIALIZED}");
    drop(stdin);
    let _ = child.wait();
    Ok(elapsed.as_secs_f64() * 1e3)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(runs), Some("--"), Some(cmd)) = (
        args.first().and_then(|r| r.parse::<usize>().ok()),
        args.get(1).map(String::as_str),
        args.get(2),
    ) else {
        eprintln!("usage: spawn-time RUNS -- CMD [ARGS...]");
        std::process::exit(2)
    };
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        match once(cmd, &args[3..]) {
            Ok(ms) => times.push(ms),
            Err(e) => {
                eprintln!("spawn-time: {e}");
                std::process::exit(1)
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{}",
        serde_json::json!({"runs": times.len(), "median_ms": median, "min_ms": times[0], "max_ms": times[times.len() - 1]})
    );
}
