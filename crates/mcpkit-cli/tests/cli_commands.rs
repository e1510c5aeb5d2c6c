//! The `mcpkit` commands, run as a user runs them, against the reference server over stdio (the
//! default target) and over Streamable HTTP (`mcpkit serve --http`). Outputs are insta
//! snapshots; the stdio and HTTP runs of a command share one snapshot, so they must print the
//! same thing. Ports, temp paths and timings are filtered out.

use assert_cmd::Command;
use support::{HttpServer, Proxy};

use crate::support;

fn mcpkit() -> Command {
    let mut c = Command::cargo_bin("mcpkit").unwrap();
    c.env_remove("RUST_LOG")
        .env("COLUMNS", "160")
        .timeout(std::time::Duration::from_secs(120));
    c
}

/// Run with `args`, then the target args; return (exit code, stdout, stderr).
fn run(args: &[&str], target: &[String]) -> (i32, String, String) {
    let out = mcpkit().args(args).args(target).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn filters() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    s.add_filter(r"saved to \S+/([A-Za-z0-9_-]+\.[a-z0-9]+)\]", "saved to [DIR]/$1]");
    s.add_filter(r"round trip [0-9.]+ ms", "round trip [TIME] ms");
    s
}

macro_rules! snap {
    ($name:expr, $value:expr) => {
        filters().bind(|| insta::assert_snapshot!($name, $value))
    };
}

/// The two transports every command is checked over.
enum Over {
    Stdio,
    Http(HttpServer),
}

impl Over {
    fn target(&self) -> Vec<String> {
        match self {
            // No target: the built-in reference server, as a child over stdio.
            Over::Stdio => Vec::new(),
            Over::Http(s) => vec!["--server".into(), format!("{}/mcp", s.base)],
        }
    }
}

fn both() -> [Over; 2] {
    [Over::Stdio, Over::Http(HttpServer::start())]
}

#[test]
fn inspect_prints_tables() {
    for over in both() {
        let (code, out, err) = run(&["inspect"], &over.target());
        assert_eq!(code, 0, "{err}");
        snap!("inspect", out);
    }
}

#[test]
fn inspect_json_is_the_raw_results() {
    for over in both() {
        let (code, out, err) = run(&["inspect", "--json"], &over.target());
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["initialize"]["serverInfo"]["name"], "mcpkit-reference");
        assert!(v["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"));
        assert_eq!(v["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data");
    }
}

#[test]
fn call_prints_text_and_structured_content() {
    for over in both() {
        let t = over.target();
        let (code, out, err) = run(&["call", "echo", "message=hello world"], &t);
        assert_eq!((code, err.as_str()), (0, ""));
        snap!("call_echo", out);
        let (code, out, _) = run(&["call", "add", "a=2", "b=3.5"], &t);
        assert_eq!(code, 0);
        snap!("call_add", out);
        // --args and key=value combine; key=value wins.
        let (code, out, _) = run(&["call", "add", "--args", r#"{"a":1,"b":1}"#, "b=2"], &t);
        assert_eq!(code, 0);
        assert!(out.contains("\"sum\": 3"), "{out}");
        let (code, out, _) = run(&["call", "echo", "message=x", "--json"], &t);
        assert_eq!(code, 0);
        snap!("call_echo_json", out);
    }
}

#[test]
fn call_saves_images_audio_and_shows_resources() {
    for over in both() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let (code, out, err) = run(&["call", "test_multiple_content_types", "--out", d], &over.target());
        assert_eq!(code, 0, "{err}");
        snap!("call_multiple_content_types", out);
        let saved: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(saved.len(), 1, "one image saved");
        let (code, out, _) = run(&["call", "test_audio_content", "--out", d], &over.target());
        assert_eq!(code, 0);
        snap!("call_audio", out);
        let wav = std::fs::read(dir.path().join("test_audio_content-1.wav")).unwrap();
        assert!(!wav.is_empty());
    }
}

#[test]
fn call_exit_codes() {
    for over in both() {
        let t = over.target();
        let (code, out, err) = run(&["call", "test_error_handling"], &t);
        assert_eq!(code, 1, "isError exits 1");
        snap!("call_is_error", format!("{out}---\n{err}"));
        let (code, out, err) = run(&["call", "add", "a=two", "b=1"], &t);
        assert_eq!((code, out.as_str()), (2, ""));
        snap!("call_wrong_type", err);
        let (code, _, err) = run(&["call", "add", "a=1", "c=1"], &t);
        assert_eq!(code, 2);
        snap!("call_unknown_key", err);
        let (code, _, err) = run(&["call", "add", "a=1"], &t);
        assert_eq!(code, 2);
        snap!("call_missing_required", err);
        let (code, _, err) = run(&["call", "no_such_tool"], &t);
        assert_eq!(code, 2);
        snap!("call_unknown_tool", err);
        let (code, _, err) = run(&["call", "echo", "--args", "[1]"], &t);
        assert_eq!(code, 2);
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn sampling_and_elicitation_are_refused_without_a_terminal() {
    for over in both() {
        let t = over.target();
        let (code, out, err) = run(&["call", "test_sampling", "prompt=hi"], &t);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("sampling refused"), "{out}");
        assert!(err.contains("refused because stdin is not a terminal"), "{err}");
        let (code, out, err) = run(&["call", "test_elicitation", "message=name?"], &t);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("action=decline"), "{out}");
        assert!(err.contains("declined because stdin is not a terminal"), "{err}");
    }
}

#[test]
fn read_prompt_complete_ping() {
    for over in both() {
        let t = over.target();
        let (code, out, _) = run(&["read", "test://static-text"], &t);
        assert_eq!(code, 0);
        snap!("read_static_text", out);
        let (code, out, _) = run(&["read", "test://template/42/data"], &t);
        assert_eq!(code, 0);
        snap!("read_template", out);
        let dir = tempfile::tempdir().unwrap();
        let (code, out, _) = run(
            &["read", "test://static-binary", "--out", dir.path().to_str().unwrap()],
            &t,
        );
        assert_eq!(code, 0);
        snap!("read_binary", out);
        let (code, out, _) = run(&["prompt", "test_prompt_with_arguments", "arg1=x", "arg2=y"], &t);
        assert_eq!(code, 0);
        snap!("prompt_with_arguments", out);
        let (code, _, err) = run(&["prompt", "test_prompt_with_arguments", "arg1=x"], &t);
        assert_eq!(code, 2);
        snap!("prompt_missing_argument", err);
        let (code, out, _) = run(&["complete", "--resource", "test://template/{id}/data", "id=1"], &t);
        assert_eq!(code, 0);
        snap!("complete_resource", out);
        let (code, out, err) = run(&["ping"], &t);
        assert_eq!(code, 0);
        snap!("ping", format!("{out}---\n{err}"));
        let (code, _, err) = run(&["read", "test://nope"], &t);
        assert_eq!(code, 2);
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn bench_json_has_the_documented_fields() {
    for over in both() {
        let (code, out, err) = run(
            &[
                "bench",
                "--tool",
                "echo",
                "--args",
                r#"{"message":"x"}"#,
                "-c",
                "4",
                "-n",
                "200",
                "--warmup",
                "20",
                "--json",
            ],
            &over.target(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.lines().count(), 1, "exactly one JSON object: {out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "target",
                "tool",
                "concurrency",
                "requests",
                "errors",
                "duration_s",
                "rps",
                "p50_us",
                "p90_us",
                "p99_us",
                "max_us"
            ]
        );
        assert_eq!(v["requests"], 200);
        assert_eq!(v["errors"], 0);
        assert_eq!(v["concurrency"], 4);
        assert_eq!(v["tool"], "echo");
        let p50 = v["p50_us"].as_f64().unwrap();
        let p99 = v["p99_us"].as_f64().unwrap();
        assert!(p50 > 0.0 && p50 <= p99 && p99 <= v["max_us"].as_f64().unwrap());
        match &over {
            Over::Stdio => assert_eq!(v["target"], "builtin"),
            Over::Http(s) => assert_eq!(v["target"], format!("{}/mcp", s.base)),
        }
    }
}

#[test]
fn bench_counts_tool_errors_and_refuses_unknown_tools() {
    let (code, out, err) = run(
        &[
            "bench",
            "--tool",
            "test_error_handling",
            "-n",
            "10",
            "--warmup",
            "0",
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["errors"], 10);
    assert!(err.contains("the first: the tool returned isError"), "{err}");
    let (code, _, err) = run(&["bench", "--tool", "nope", "-n", "1"], &[]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("mcpkit bench: the server has no tool \"nope\""),
        "{err}"
    );
}

/// `mcpkit bench --json` with these arguments against `target`: (exit code, report, stderr).
fn bench_json(args: &[&str], target: &[String]) -> (i32, serde_json::Value, String) {
    let mut argv = vec!["bench", "--json"];
    argv.extend_from_slice(args);
    let (code, out, err) = run(&argv, target);
    let report = serde_json::from_str(&out).unwrap_or(serde_json::Value::Null);
    (code, report, err)
}

#[test]
fn bench_counts_is_error_results_and_json_rpc_errors_as_errors() {
    for over in both() {
        let t = over.target();
        // A tool execution error: a result with `isError: true`.
        let (code, v, err) = bench_json(
            &["--tool", "test_error_handling", "-n", "12", "-c", "3", "--warmup", "0"],
            &t,
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            (v["requests"].as_u64(), v["errors"].as_u64()),
            (Some(12), Some(12)),
            "{err}"
        );
        assert!(
            err.contains("12 of 12 calls failed; the first: the tool returned isError"),
            "{err}"
        );
        // A JSON-RPC error: on the 2026-07-28 wire a tool that needs a capability the client
        // did not declare is refused with -32021.
        let (code, v, err) = bench_json(
            &[
                "--tool",
                "test_missing_capability",
                "-n",
                "10",
                "-c",
                "2",
                "--warmup",
                "0",
                "--protocol",
                "2026-07-28",
            ],
            &t,
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            (v["requests"].as_u64(), v["errors"].as_u64()),
            (Some(10), Some(10)),
            "{err}"
        );
        assert!(
            err.contains("10 of 10 calls failed; the first: ") && err.contains("JSON-RPC error -32021"),
            "{err}"
        );
        // The same server, a tool that succeeds: no errors.
        let (code, v, err) = bench_json(
            &[
                "--tool",
                "echo",
                "--args",
                r#"{"message":"x"}"#,
                "-n",
                "50",
                "-c",
                "4",
                "--warmup",
                "5",
            ],
            &t,
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            (v["requests"].as_u64(), v["errors"].as_u64()),
            (Some(50), Some(0)),
            "{err}"
        );
    }
}

#[test]
fn bench_drives_the_stateless_wire_with_mirrored_headers() {
    for over in both() {
        // test_header_param's `region` must be mirrored into Mcp-Param-Region on HTTP (the
        // server refuses a mismatch); over stdio the same call has no headers.
        let (code, v, err) = bench_json(
            &[
                "--tool",
                "test_header_param",
                "--args",
                r#"{"region":"eu-west","query":"q"}"#,
                "-n",
                "40",
                "-c",
                "4",
                "--warmup",
                "4",
                "--protocol",
                "2026-07-28",
            ],
            &over.target(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            (v["requests"].as_u64(), v["errors"].as_u64()),
            (Some(40), Some(0)),
            "{err}"
        );
    }
}

#[test]
fn bench_lets_the_client_answer_server_requests_during_the_load() {
    for over in both() {
        for driver in ["wire", "client"] {
            // test_sampling asks the client to sample; the bench's client has no sampling
            // handler and refuses, and the tool reports that as text: a call that succeeds only
            // if the server's request reached the client and its answer reached the server.
            let (code, v, err) = bench_json(
                &[
                    "--tool",
                    "test_sampling",
                    "--args",
                    r#"{"prompt":"hi"}"#,
                    "-n",
                    "20",
                    "-c",
                    "4",
                    "--warmup",
                    "0",
                    "--timeout",
                    "20s",
                    "--driver",
                    driver,
                ],
                &over.target(),
            );
            assert_eq!(code, 0, "{driver}: {err}");
            assert_eq!(
                (v["requests"].as_u64(), v["errors"].as_u64()),
                (Some(20), Some(0)),
                "{driver}: {err}"
            );
        }
    }
}

#[test]
fn config_file_names_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mcp.json");
    let http = HttpServer::start();
    std::fs::write(
        &cfg,
        serde_json::json!({"mcpServers": {
            "ref": {"command": env!("CARGO_BIN_EXE_mcpkit"), "args": ["serve"]},
            "web": {"url": format!("{}/mcp", http.base)},
        }})
        .to_string(),
    )
    .unwrap();
    let c = cfg.to_str().unwrap();
    for name in ["ref", "web"] {
        let (code, out, err) = run(
            &["call", "echo", "message=from config", "--server", name, "--config", c],
            &[],
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, "from config\n");
    }
    // The default search finds ./.mcp.json.
    std::fs::copy(&cfg, dir.path().join(".mcp.json")).unwrap();
    let out = mcpkit()
        .current_dir(dir.path())
        .args(["ping", "--server", "ref"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (code, _, err) = run(&["ping", "--server", "nope", "--config", c], &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no server named \"nope\"") && err.contains("(it has: ref, web)"),
        "{err}"
    );
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"mcpServers\": [").unwrap();
    let cases: Vec<Vec<String>> = vec![
        // A config file with errors.
        vec![
            "ping".into(),
            "--server".into(),
            "x".into(),
            "--config".into(),
            bad.display().to_string(),
        ],
        // An unreachable URL.
        vec!["ping".into(), "--server".into(), "http://127.0.0.1:1/mcp".into()],
        // A child that exits at once.
        vec!["ping".into(), "--".into(), "false".into()],
        // A program that does not exist.
        vec!["ping".into(), "--".into(), "/nonexistent/server".into()],
        // A server that never answers.
        vec![
            "ping".into(),
            "--timeout".into(),
            "300ms".into(),
            "--".into(),
            "sleep".into(),
            "30".into(),
        ],
    ];
    for args in cases {
        let out = mcpkit().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
        assert!(err.starts_with("mcpkit ping: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn trace_wire_prints_every_message_on_stderr() {
    let (code, out, err) = run(&["--trace-wire", "ping"], &[]);
    assert_eq!(code, 0);
    assert_eq!(out, "ok\n");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(" server {")).collect();
    assert!(
        lines[0].contains("-> server") && lines[0].contains("\"method\":\"initialize\""),
        "{err}"
    );
    assert!(
        lines[1].contains("<- server") && lines[1].contains("\"result\""),
        "{err}"
    );
    assert!(lines.iter().any(|l| l.contains("\"method\":\"ping\"")), "{err}");
    // Timestamped: HH:MM:SS.mmm first.
    let ts = lines[0].split(' ').next().unwrap();
    assert_eq!(ts.len(), 12, "{ts}");
}

#[test]
fn serve_on_stdio_writes_only_protocol_to_stdout() {
    let out = mcpkit()
        .args(["-vvv", "serve"])
        .write_stdin(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n",
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("only JSON-RPC on stdout");
        assert_eq!(v["jsonrpc"], "2.0");
    }
    assert_eq!(stdout.lines().count(), 1);
}

#[test]
fn proxy_listen_exposes_a_stdio_server_over_http_and_stops_its_child() {
    let proxy = Proxy::start();
    let t = vec!["--server".to_owned(), proxy.url.clone()];
    let (code, out, err) = run(&["call", "echo", "message=through the proxy"], &t);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "through the proxy\n");
    // Progress and a server→client request travel back through the proxy.
    let (code, out, err) = run(&["call", "test_tool_with_progress"], &t);
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty());
    let (code, out, _) = run(&["call", "test_elicitation", "message=q"], &t);
    assert_eq!(code, 0);
    assert!(out.contains("action=decline"), "{out}");
    let (code, out, _) = run(&["inspect"], &t);
    assert_eq!(code, 0);
    snap!("inspect", out);
    // Each client closed its session (DELETE): the children are gone. Stopping a child takes
    // closing its stdin and a wait, so poll (no time is asserted; the deadline only bounds a hang).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !proxy.children().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "children left: {:?}",
            proxy.children()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn proxy_server_lets_a_stdio_client_use_an_http_server() {
    let http = HttpServer::start();
    let url = format!("{}/mcp", http.base);
    let t: Vec<String> = ["--", env!("CARGO_BIN_EXE_mcpkit"), "proxy", "--server", &url]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let (code, out, err) = run(&["call", "echo", "message=over stdio then http"], &t);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "over stdio then http\n");
    let (code, out, _) = run(&["call", "test_tool_with_progress"], &t);
    assert_eq!(code, 0);
    assert!(!out.is_empty());
    let (code, out, _) = run(&["call", "test_sampling", "prompt=p"], &t);
    assert_eq!(code, 0);
    assert!(out.contains("sampling refused"), "{out}");
    let (code, out, _) = run(&["inspect"], &t);
    assert_eq!(code, 0);
    snap!("inspect", out);
}
