//! `mcpkit serve --http … --metrics ADDR`: after a `tools/call`, `promtool check metrics`
//! accepts the `/metrics` text, and a real Prometheus (Debian's package) started here scrapes
//! it and answers a query for `mcp_server_operation_duration_seconds_count`.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use mcpkit_test_support::prometheus::{get, promtool_check_metrics, Prometheus};

const MCPKIT: &str = env!("CARGO_BIN_EXE_mcpkit");

struct Serve(std::process::Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promtool_accepts_the_metrics_and_prometheus_scrapes_them() {
    let mut child = Command::new(MCPKIT)
        .args(["serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let serve = Serve(child);
    let mut banner = |what: &str| {
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        assert!(line.contains(what), "expected {what:?} in {line:?}");
        line.trim().rsplit(' ').next().unwrap().to_owned()
    };
    // "mcpkit serve: metrics on http://127.0.0.1:PORT/metrics", then the MCP endpoint.
    let metrics_url = banner("metrics on");
    let mcp_url = banner("listening on");
    let metrics_addr = metrics_url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_owned();

    for message in ["one", "two"] {
        let out = Command::new(MCPKIT)
            .args(["call", "echo", &format!("message={message}"), "--server", &mcp_url])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    let (status, text) = get(&metrics_addr, "/metrics").await.expect("/metrics answers");
    assert_eq!(status, 200);
    // Label order inside the braces is the SDK's, not fixed: look for the labels, not a prefix.
    assert!(
        text.lines()
            .any(|l| l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("mcp_method_name=\"tools/call\"")
                && l.contains("gen_ai_tool_name=\"echo\"")),
        "{text}"
    );
    assert!(text.contains("mcpkit_server_sessions_open"), "{text}");
    promtool_check_metrics(&text).unwrap_or_else(|e| panic!("promtool rejects /metrics: {e}\n{text}"));

    let prometheus = Prometheus::start(&metrics_addr).await;
    let query = "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\"}";
    let mut last = serde_json::Value::Null;
    for _ in 0..150 {
        last = prometheus.query(query).await;
        let result = &last["data"]["result"];
        if let Some(series) = result.as_array().and_then(|r| r.first()) {
            assert_eq!(last["status"], "success");
            assert_eq!(series["metric"]["gen_ai_tool_name"], "echo", "{last}");
            assert_eq!(series["metric"]["network_transport"], "tcp", "{last}");
            assert_eq!(series["value"][1], "2", "two calls counted: {last}");
            drop(serve);
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("prometheus never answered {query} with a series: {last}");
}
