//! A client cannot make the server create metric series: tool and prompt names outside the
//! catalogue, arbitrary method names, resource URIs and odd `_meta` never become label values.
//! Hundreds of distinct inputs leave the same handful of series; the catalogue's own tool is
//! a label (so the test can tell a bound from no labels at all).

use crate::common;

use common::RawWire;
use mcpkit::telemetry::{Prometheus, Telemetry};
use mcpkit::types::schema::JsonObject;
use mcpkit::{Server, ToolDef};
use opentelemetry_sdk::Resource;
use serde_json::{json, Value};

fn series(text: &str, metric: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")) || l.starts_with(&format!("{metric} ")))
        .map(|l| l.rsplit_once(' ').unwrap().0.to_owned())
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn hundreds_of_distinct_inputs_leave_a_handful_of_series() {
    let prometheus = Prometheus::new();
    let provider = prometheus.meter_provider(Resource::builder_empty().build());
    let echo = ToolDef::new("echo", |args: mcpkit::Args<JsonObject>| async move {
        args.0
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    });
    let server = Server::builder()
        .tool(echo)
        .telemetry(Telemetry::new(&provider))
        .build();
    let mut wire = RawWire::serve(&server);
    wire.open_session().await;

    let mut id = 1;
    let mut next = || {
        id += 1;
        id
    };
    for i in 0..150 {
        let r = wire
            .request(&json!({"jsonrpc": "2.0", "id": next(), "method": "tools/call",
                "params": {"name": format!("tool-{i}"), "arguments": {}, "_meta": {"progressToken": i}}}))
            .await;
        assert!(r.get("error").is_some(), "unknown tool: {r}");
        wire.request(&json!({"jsonrpc": "2.0", "id": next(), "method": format!("method/{i}")}))
            .await;
        wire.request(&json!({"jsonrpc": "2.0", "id": next(), "method": "resources/read",
            "params": {"uri": format!("file:///secret/{i}")}}))
            .await;
        wire.request(&json!({"jsonrpc": "2.0", "id": next(), "method": "prompts/get",
            "params": {"name": format!("prompt-{i}")}}))
            .await;
        wire.send(&json!({"jsonrpc": "2.0", "method": format!("notifications/x{i}")}))
            .await;
        wire.request(
            &json!({"jsonrpc": "2.0", "id": format!("string-id-{i}"), "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}}}),
        )
        .await;
    }
    // A last request: the notifications before it have been handled.
    wire.request(&json!({"jsonrpc": "2.0", "id": next(), "method": "ping"}))
        .await;

    let text = prometheus.render();
    for leaked in [
        "tool-",
        "method/",
        "file:///",
        "prompt-",
        "notifications/x",
        "string-id-",
    ] {
        assert!(
            !text.contains(leaked),
            "client input {leaked:?} became a label:\n{text}"
        );
    }
    let counts = series(&text, "mcp_server_operation_duration_seconds_count");
    assert!(counts.len() <= 12, "{} series:\n{}", counts.len(), counts.join("\n"));
    assert!(
        counts
            .iter()
            .any(|s| s.contains("gen_ai_tool_name=\"echo\"") && s.contains("mcp_method_name=\"tools/call\"")),
        "the catalogue's tool is a label:\n{text}"
    );
    assert!(
        counts
            .iter()
            .any(|s| s.contains("mcp_method_name=\"_OTHER\"") && s.contains("error_type=\"-32601\"")),
        "unknown methods are _OTHER:\n{text}"
    );
    assert!(
        counts.iter().any(|s| s.contains("mcp_method_name=\"tools/call\"")
            && s.contains("error_type=\"-32602\"")
            && !s.contains("gen_ai_tool_name")),
        "unknown tools carry no name:\n{text}"
    );
}
