//! `mcpkit gateway --metrics`: the client metrics of each upstream connection carry
//! `upstream="NAME"` (its `[upstreams.NAME]`), so each upstream's calls, errors and sessions
//! are series of their own; the gateway's server metrics (what the downstream client asked)
//! carry no such label. Scraped from the Prometheus text the gateway serves.

use serde_json::json;
use support::gateway::{stdio_reference, url_upstream, Gateway, ServeUpstream};

use crate::support;

/// The value of the series of `metric` whose labels contain every one of `labels`, if any.
fn series(text: &str, metric: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .find(|l| labels.iter().all(|want| l.contains(want)))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_metrics_label_client_operations_with_their_upstream() {
    let web = ServeUpstream::start(&[]);
    let config = format!("{}{}", stdio_reference("local"), url_upstream("web", &web.url));
    let gateway = Gateway::start(&config, &["--metrics", "127.0.0.1:0"]);
    let client = support::connect_http(&gateway.url).await;
    for _ in 0..3 {
        client.call_tool("local_echo", json!({"message": "hi"})).await.unwrap();
    }
    client.call_tool("web_echo", json!({"message": "hi"})).await.unwrap();
    // A tool error of one upstream is counted against it alone.
    let failed = client.call_tool("web_test_error_handling", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true), "{failed:?}");

    let text = reqwest::get(gateway.metrics_url()).await.unwrap().text().await.unwrap();
    let calls = "mcp_client_operation_duration_seconds_count";
    let echo = ["mcp_method_name=\"tools/call\"", "gen_ai_tool_name=\"echo\""];
    let local = series(&text, calls, &[echo[0], echo[1], "upstream=\"local\""]);
    let web_calls = series(&text, calls, &[echo[0], echo[1], "upstream=\"web\""]);
    assert_eq!((local, web_calls), (Some(3.0), Some(1.0)), "metrics:\n{text}");
    let web_errors = series(
        &text,
        calls,
        &[
            echo[0],
            "gen_ai_tool_name=\"test_error_handling\"",
            "error_type=\"tool_error\"",
            "upstream=\"web\"",
        ],
    );
    assert_eq!(web_errors, Some(1.0), "metrics:\n{text}");
    assert_eq!(
        series(&text, calls, &["error_type=\"tool_error\"", "upstream=\"local\""]),
        None,
        "metrics:\n{text}"
    );
    // Each upstream's handshake (or discovery) is its own series too.
    assert!(
        text.lines().any(|l| l.starts_with(&format!("{calls}{{"))
            && l.contains("upstream=\"local\"")
            && !l.contains("tools/call")),
        "metrics:\n{text}"
    );
    // What the downstream asked is the gateway's server metric, under the prefixed name,
    // without an upstream label (what an upstream sends the gateway is received on its
    // connection, and carries it).
    let served = series(
        &text,
        "mcp_server_operation_duration_seconds_count",
        &["mcp_method_name=\"tools/call\"", "gen_ai_tool_name=\"local_echo\""],
    );
    assert_eq!(served, Some(3.0), "metrics:\n{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("mcp_server_operation_duration_seconds")
                && l.contains("upstream=")
                && !l.contains("notifications/subscriptions/acknowledged")),
        "metrics:\n{text}"
    );
    // Every method is a catalogue name: the listen stream's acknowledgement too.
    assert!(!text.contains("\"_OTHER\""), "metrics:\n{text}");
}
