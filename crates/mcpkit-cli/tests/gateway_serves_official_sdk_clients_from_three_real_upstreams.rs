//! `mcpkit gateway` in front of three real upstreams — `mcpkit serve` over stdio (`ref`), the
//! official TypeScript SDK's echo server over stdio (`ts`) and the official Python SDK's echo
//! server over Streamable HTTP (`py`) — serves the official SDK clients: the Python and
//! TypeScript client checks and the Python stateless-era checks pass against the gateway with
//! the reference server's names prefixed `ref_` (listing, calls, resources, prompts, sampling
//! and elicitation relayed, progress, logging), and the mcpkit client calls `ts_echo` and
//! `py_add` in both eras, and every log message of a call reaches its caller.

use mcpkit::client::{ConnectMode, ServerNotification};
use mcpkit::types::schema::LoggingLevel;
use mcpkit::types::ProtocolVersion;
use serde_json::json;
use support::gateway::{stdio_reference, stdio_typescript, url_upstream, Gateway, ServeUpstream};
use support::peers::{node, python, python_script, ts_dir};
use support::PeerServer;

use crate::support;

/// The Python SDK's echo server over HTTP, and a gateway in front of it and the two stdio ones.
fn three_upstreams() -> (PeerServer, Gateway) {
    let py = PeerServer::start(&python(), &[&python_script("echo_server.py"), "http"]);
    let config = [
        stdio_reference("ref"),
        stdio_typescript("ts"),
        url_upstream("py", &format!("{}/mcp", py.base)),
    ]
    .join("\n");
    let gateway = Gateway::start(&config, &[]);
    (py, gateway)
}

/// `/readyz` says all three are there before the clients run.
async fn all_ready(gateway: &Gateway) {
    let (status, body) = gateway
        .readyz_until("3 of 3 upstreams connected", std::time::Duration::from_secs(30))
        .await;
    assert_eq!(
        (status, body.trim()),
        (200, "ready: 3 of 3 upstreams connected"),
        "{}",
        gateway.stderr.text()
    );
}

fn run(sdk: &str, program: &std::path::Path, script: &std::path::Path, args: &[&str], gateway: &Gateway) {
    eprintln!("gateway at {}", gateway.url);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        support::run_client_checks(sdk, program, script, args);
    }));
    if let Err(e) = outcome {
        eprintln!("--- gateway stderr:\n{}", gateway.stderr.text());
        std::panic::resume_unwind(e);
    }
}

#[tokio::test]
async fn python_sdk_client_checks_pass_through_the_gateway() {
    let (_py, gateway) = three_upstreams();
    all_ready(&gateway).await;
    let script = python_script("client_checks.py");
    run(
        "Python",
        &python(),
        std::path::Path::new(&script),
        &["--prefix", "ref_", "http", &gateway.url],
        &gateway,
    );
}

#[tokio::test]
async fn typescript_sdk_client_checks_pass_through_the_gateway() {
    let (_py, gateway) = three_upstreams();
    all_ready(&gateway).await;
    run(
        "TypeScript",
        &node(),
        &ts_dir().join("client_checks.mjs"),
        &["--prefix", "ref_", "http", &gateway.url],
        &gateway,
    );
}

/// The Python SDK's stateless-era checks through the gateway, the client in `mode`.
async fn python_stateless_checks(label: &str, mode: &str) {
    let (_py, gateway) = three_upstreams();
    all_ready(&gateway).await;
    let script = python_script("stateless_checks.py");
    let args = [
        "--prefix",
        "ref_",
        "--server-name",
        "mcpkit-gateway",
        mode,
        "http",
        &gateway.url,
    ];
    run(label, &python(), std::path::Path::new(&script), &args, &gateway);
}

#[tokio::test]
async fn python_sdk_stateless_checks_pass_through_the_gateway_pinned_to_2026_07_28() {
    python_stateless_checks("Python (2026-07-28)", "2026-07-28").await;
}

#[tokio::test]
async fn python_sdk_stateless_checks_pass_through_the_gateway_in_auto_mode() {
    python_stateless_checks("Python (auto)", "auto").await;
}

/// The mcpkit client lists every upstream's tools under its name and calls the TypeScript and
/// Python servers' tools, on a handshake-era session and on the stateless wire.
#[tokio::test]
async fn mcpkit_client_calls_ts_echo_and_py_add_in_both_eras() {
    let (_py, gateway) = three_upstreams();
    all_ready(&gateway).await;
    for mode in [
        ConnectMode::Handshake,
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        let client = support::connect_http_mode(&gateway.url, mode).await;
        assert_eq!(client.is_stateless(), mode != ConnectMode::Handshake);
        let names: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        for want in [
            "ref_echo",
            "ref_test_sampling",
            "ts_echo",
            "ts_add",
            "ts_fail",
            "py_echo",
            "py_add",
            "py_fail",
        ] {
            assert!(names.iter().any(|n| n == want), "{mode:?}: {want} not in {names:?}");
        }
        let prefixes_only = names
            .iter()
            .all(|n| n.starts_with("ref_") || n.starts_with("ts_") || n.starts_with("py_"));
        assert!(prefixes_only, "{names:?}");
        let r = client
            .call_tool("ts_echo", json!({"message": "hi through the gateway"}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("hi through the gateway"), "{mode:?}");
        assert!(!r.is_error());
        let r = client.call_tool("py_add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(r.structured_content, Some(json!({"result": 5})), "{mode:?}");
        assert!(client.call_tool("py_fail", ()).await.unwrap().is_error());
        let r = client.call_tool("ref_echo", json!({"message": "ref"})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("ref"));
        client.close().await.unwrap();
    }
}

/// The log messages the caller at `url` gets from ten calls of the reference server's `tool`
/// (`test_tool_with_logging`: three messages each, the last sent just before its result).
async fn log_messages_of_ten_calls(url: &str, tool: &str) -> Vec<String> {
    let client = support::connect_http(url).await;
    client.set_log_level(LoggingLevel::Debug).await.unwrap();
    let mut notes = client.notifications();
    for _ in 0..10 {
        let r = client.call_tool(tool, ()).await.unwrap();
        assert!(!r.is_error());
    }
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
    while got.len() < 30 {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::Log(m))) => got.push(m.data.as_str().unwrap_or_default().to_owned()),
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => break,
        }
    }
    got
}

/// Every log message the upstream sends while a call runs reaches the caller, as it does when
/// the caller talks to the upstream directly: thirty messages, in order.
#[tokio::test]
async fn every_log_message_of_a_call_reaches_the_caller() {
    let want: Vec<&str> = (0..10)
        .flat_map(|_| {
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
        })
        .collect();
    let upstream = ServeUpstream::start(&[]);
    assert_eq!(
        log_messages_of_ten_calls(&upstream.url, "test_tool_with_logging").await,
        want,
        "directly"
    );
    let gateway = Gateway::start(&url_upstream("ref", &upstream.url), &[]);
    assert_eq!(
        log_messages_of_ten_calls(&gateway.url, "ref_test_tool_with_logging").await,
        want,
        "log messages lost on the way through the gateway"
    );
}

/// The same checks with `ref` reached on the stateless wire (`protocol = "2026-07-28"`): the
/// era the gateway speaks upstream is its own business; downstream clients see no difference.
fn stateless_era_reference() -> Gateway {
    let config = format!("{}protocol = \"2026-07-28\"\n", stdio_reference("ref"));
    Gateway::start(&config, &[])
}

#[tokio::test]
async fn python_sdk_client_checks_pass_through_a_stateless_era_upstream() {
    let gateway = stateless_era_reference();
    let script = python_script("client_checks.py");
    run(
        "Python",
        &python(),
        std::path::Path::new(&script),
        &["--prefix", "ref_", "http", &gateway.url],
        &gateway,
    );
}

#[tokio::test]
async fn python_sdk_stateless_checks_pass_through_a_stateless_era_upstream() {
    let gateway = stateless_era_reference();
    let script = python_script("stateless_checks.py");
    run(
        "Python (2026-07-28)",
        &python(),
        std::path::Path::new(&script),
        &[
            "--prefix",
            "ref_",
            "--server-name",
            "mcpkit-gateway",
            "2026-07-28",
            "http",
            &gateway.url,
        ],
        &gateway,
    );
}
