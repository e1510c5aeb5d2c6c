//! A request the HTTP layer answers 503 because a backend cannot be reached counts in
//! `mcpkit.server.backend.errors` with the backend's fixed name as its only label: Redis
//! stopped under a running instance, a new session is refused (session store) and counted.

use std::time::Duration;

use mcpkit::server::http::HttpServer;
use mcpkit::telemetry::{Prometheus, Telemetry};
use mcpkit::{Args, Server, ToolDef};
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::RedisProcess;
use mcpkit_test_support::within;
use opentelemetry_sdk::Resource;
use serde_json::Value;

/// The value of the series `series` (name and labels, as rendered), if it is there.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

async fn initialize(url: &str) -> reqwest::Response {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
        .send();
    within("an HTTP response", request).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_503_for_an_unreachable_session_store_counts_as_a_session_store_error() {
    let mut redis = RedisProcess::start();
    let prometheus = Prometheus::new();
    let provider = prometheus.meter_provider(Resource::builder_empty().build());
    let echo = ToolDef::new("echo", |Args(a): Args<Value>| async move { a.to_string() });
    let server = Server::builder()
        .tool(echo)
        .telemetry(Telemetry::new(&provider))
        .build();
    let backends = RedisBackends::connect(&redis.url(), "outage-metrics", "a")
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(HttpServer::new(server).scale_out(backends).serve(listener));

    let up = initialize(&url).await;
    assert_eq!(up.status(), 200, "a session while Redis is up");
    let series = r#"mcpkit_server_backend_errors_total{backend="session_store"}"#;
    assert_eq!(value(&prometheus.render(), series), None, "no error yet");

    redis.stop();
    for n in 1..=2 {
        let refused = initialize(&url).await;
        assert_eq!(refused.status(), 503);
        let body = within("the body", refused.text()).await.unwrap();
        assert!(body.contains("unavailable"), "{body}");
        let text = prometheus.render();
        assert_eq!(value(&text, series), Some(f64::from(n)), "{text}");
    }
    // The label set stays the backend's name: nothing from the request or the cause.
    let text = prometheus.render();
    let labels: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("mcpkit_server_backend_errors_total"))
        .collect();
    assert!(
        labels
            .iter()
            .all(|l| l.starts_with("mcpkit_server_backend_errors_total{backend=\"") && !l.contains("127.0.0.1")),
        "{labels:?}"
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
}
