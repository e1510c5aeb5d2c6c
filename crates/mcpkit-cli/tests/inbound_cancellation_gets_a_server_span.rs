//! `notifications/cancelled` is acted on by the engine itself (no handler runs), and still gets
//! its `SERVER` span and its `mcp.server.operation.duration`, once per notification, like every
//! other notification the other side sends.

use crate::common;
use crate::spans;

use common::RawWire;
use mcpkit::telemetry::{Prometheus, Telemetry};
use mcpkit::{Args, Server, ToolDef};
use opentelemetry_sdk::Resource;
use serde_json::{json, Value};

#[tokio::test(flavor = "current_thread")]
async fn a_cancellation_from_the_client_is_one_server_span_and_one_duration() {
    let (spans, _guard) = spans::Spans::install();
    let prometheus = Prometheus::new();
    let provider = prometheus.meter_provider(Resource::builder_empty().build());
    let echo = ToolDef::new("echo", |Args(a): Args<Value>| async move { a.to_string() });
    let server = Server::builder()
        .tool(echo)
        .telemetry(Telemetry::new(&provider))
        .build();
    let mut wire = RawWire::serve(&server);
    wire.open_session().await;
    wire.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 41, "reason": "the user pressed stop"}}))
        .await;
    // Handled in order: the ping's answer comes after the cancellation was acted on.
    let pong = wire
        .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert!(pong.get("result").is_some(), "{pong}");

    let cancelled = spans.of("mcp.server", "notifications/cancelled");
    assert_eq!(cancelled.len(), 1, "one span per cancellation: {:?}", spans.all());
    let span = &cancelled[0];
    assert_eq!(span.field("otel.kind"), Some("server"), "{span:?}");
    assert_eq!(span.field("otel.name"), Some("notifications/cancelled"), "{span:?}");
    assert_eq!(
        span.field("jsonrpc.request.id"),
        None,
        "a notification has no id: {span:?}"
    );
    assert_eq!(span.field("mcp.protocol.version"), Some("2025-11-25"), "{span:?}");
    // The other notification still has its span too (made by the handler table's dispatch).
    assert_eq!(spans.of("mcp.server", "notifications/initialized").len(), 1);

    let text = prometheus.render();
    let series: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.starts_with("mcp_server_operation_duration_seconds_count{")
                && l.contains("mcp_method_name=\"notifications/cancelled\"")
        })
        .collect();
    assert_eq!(series.len(), 1, "{text}");
    assert!(series[0].ends_with(" 1"), "{}", series[0]);
}
