//! Resident memory of a stdio MCP server as calls accumulate: initialize, then keep IN_FLIGHT
//! `tools/call echo` requests in flight on the one connection and read the server's VmRSS from
//! /proc at each checkpoint (after all replies up to that count have been read). Prints one JSON
//! object: `{"checkpoints":[{"calls":N,"rss_kib":K},...],"seconds":S}`.
//!
//! Usage: stdio-soak IN_FLIGHT CHECKPOINT[,CHECKPOINT...] -- CMD [ARGS...]
//! e.g.   stdio-soak 64 100000,1000000 -- mcpkit serve

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio-soak","version":"0"}}}"#;

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run(in_flight: usize, checkpoints: &[u64], cmd: &str, args: &[String]) -> Result<String, String> {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {cmd}: {e}"))?;
    let pid = child.id();
    let mut stdin = BufWriter::new(child.stdin.take().ok_or("no stdin")?);
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let io = |e: std::io::Error| e.to_string();
    writeln!(stdin, "{INIT}").map_err(io)?;
    stdin.flush().map_err(io)?;
    let mut line = String::new();
    stdout.read_line(&mut line).map_err(io)?;
    if !line.contains("\"result\"") {
        return Err(format!("initialize failed: {}", line.trim()));
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).map_err(io)?;
    stdin.flush().map_err(io)?;

    let total = checkpoints.iter().copied().max().unwrap_or(0);
    // Credits: the writer may have at most IN_FLIGHT requests without a reply.
    let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(in_flight);
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        for id in 1..=total {
            if credit_rx.try_recv().is_err() {
                stdin.flush()?;
                if credit_rx.recv().is_err() {
                    break;
                }
            }
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello"}}}}}}"#
            )?;
        }
        stdin.flush()?;
        // Keep stdin open until every reply is read: at EOF the server answers what it has and
        // exits, and the last checkpoint could then find it gone (a zombie has no VmRSS).
        while credit_rx.recv().is_ok() {}
        Ok(())
    });
    for _ in 0..in_flight {
        let _ = credit_tx.send(());
    }
    let start = Instant::now();
    let mut out = Vec::new();
    let mut replies = 0u64;
    while replies < total {
        line.clear();
        if stdout.read_line(&mut line).map_err(io)? == 0 {
            return Err(format!("server closed stdout after {replies} replies"));
        }
        if !line.contains("\"result\"") {
            if line.contains("\"error\"") {
                return Err(format!("error reply: {}", line.trim()));
            }
            continue; // a notification or log line
        }
        replies += 1;
        if checkpoints.contains(&replies) {
            let rss = rss_kib(pid).ok_or("cannot read the server's VmRSS")?;
            out.push(serde_json::json!({"calls": replies, "rss_kib": rss}));
        }
        let _ = credit_tx.try_send(());
    }
    let seconds = start.elapsed().as_secs_f64();
    drop(credit_tx);
    writer.join().map_err(|_| "writer panicked")?.map_err(io)?;
    let _ = child.kill();
    let _ = child.wait();
    Ok(serde_json::json!({"checkpoints": out, "seconds": seconds}).to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let in_flight = args.first().and_then(|s| s.parse::<usize>().ok()).filter(|n| *n > 0);
    let checkpoints: Option<Vec<u64>> = args.get(1).and_then(|s| s.split(',').map(|c| c.parse().ok()).collect());
    let (Some(in_flight), Some(checkpoints), Some("--"), Some(cmd)) =
        (in_flight, checkpoints, args.get(2).map(String::as_str), args.get(3))
    else {
        eprintln!("usage: stdio-soak IN_FLIGHT CHECKPOINT[,CHECKPOINT...] -- CMD [ARGS...]");
        std::process::exit(2)
    };
    match run(in_flight, &checkpoints, cmd, &args[4..]) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("stdio-soak: {e}");
            std::process::exit(1)
        }
    }
}
