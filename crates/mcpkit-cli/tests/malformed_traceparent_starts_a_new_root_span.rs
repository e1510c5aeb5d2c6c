//! A malformed `traceparent` (in `params._meta`, or in the HTTP headers of the POST) is
//! ignored: the request is answered as usual and its server span is a new root. A valid one
//! makes the server span its child (so the test can tell the two apart).

use crate::common;

use std::sync::{Arc, Mutex};

use common::{stateless_meta, RawWire};
use mcpkit::server::http::HttpServer;
use mcpkit::types::schema::JsonObject;
use mcpkit::{Server, ToolDef};
use opentelemetry::trace::{SpanId, SpanKind, TraceId, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{json, Value};
use tracing_subscriber::layer::SubscriberExt as _;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

#[derive(Debug, Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Spans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

impl Spans {
    /// The latest server span `name`, after checking there are `count` of them (each call made
    /// its own).
    fn server_span(&self, name: &str, count: usize) -> SpanData {
        let spans = self.0.lock().unwrap();
        let n = spans
            .iter()
            .filter(|s| s.name == name && s.span_kind == SpanKind::Server)
            .count();
        assert_eq!(n, count, "server spans named {name}");
        spans
            .iter()
            .rev()
            .find(|s| s.name == name && s.span_kind == SpanKind::Server)
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "no server span {name} among {:?}",
                    spans.iter().map(|s| &s.name).collect::<Vec<_>>()
                )
            })
    }
}

/// A subscriber for this (current-thread) test: every span of mcpkit into `Spans`.
fn collect() -> (Spans, tracing::subscriber::DefaultGuard, SdkTracerProvider) {
    let spans = Spans::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (spans, guard, provider)
}

fn server() -> Server {
    let echo = ToolDef::new("echo", |args: mcpkit::Args<JsonObject>| async move {
        args.0
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    });
    Server::builder().tool(echo).build()
}

fn is_root(span: &SpanData) -> bool {
    span.parent_span_id == SpanId::INVALID && span.span_context.trace_id() != TraceId::from_hex(TRACE).unwrap()
}

async fn call_with_meta(wire: &mut RawWire, id: i64, meta: Value) -> Value {
    wire.request(&json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": meta}
    }))
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn in_meta_a_malformed_traceparent_is_ignored_and_a_valid_one_is_the_parent() {
    let (spans, _guard, _provider) = collect();
    let mut wire = RawWire::serve(&server());
    wire.open_session().await;

    for (id, bad) in [
        (1, json!("not-a-traceparent")),
        (2, json!("00-00000000000000000000000000000000-0000000000000000-01")),
        (3, json!(format!("00-{TRACE}-zzzzzzzzzzzzzzzz-01"))),
        (4, json!(42)),
    ] {
        let reply = call_with_meta(&mut wire, id, json!({"traceparent": bad, "tracestate": "x=1"})).await;
        assert_eq!(
            reply["result"]["content"][0]["text"], "hi",
            "answered as usual: {reply}"
        );
        assert!(reply.get("error").is_none(), "{reply}");
        let span = spans.server_span("tools/call echo", id as usize);
        assert!(is_root(&span), "traceparent {bad}: a new root, got {span:?}");
    }

    let reply = call_with_meta(&mut wire, 5, json!({"traceparent": format!("00-{TRACE}-{PARENT}-01")})).await;
    assert_eq!(reply["result"]["content"][0]["text"], "hi");
    let span = spans.server_span("tools/call echo", 5);
    assert_eq!(span.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT).unwrap());
    assert!(span.parent_span_is_remote);
}

async fn post(url: &str, traceparent: &str, id: i64) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": stateless_meta()}
    });
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .header("traceparent", traceparent)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn in_http_headers_a_malformed_traceparent_is_ignored_and_a_valid_one_is_the_parent() {
    let (spans, _guard, _provider) = collect();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(HttpServer::new(server()).serve(listener));

    let reply = post(&url, "00-garbage", 1).await;
    assert_eq!(reply["result"]["content"][0]["text"], "hi", "{reply}");
    let span = spans.server_span("tools/call echo", 1);
    assert!(is_root(&span), "a new root, got {span:?}");
    assert!(
        span.attributes
            .iter()
            .any(|kv| kv.key.as_str() == "network.transport" && kv.value.as_str() == "tcp"),
        "{span:?}"
    );

    // `_meta` carries no traceparent here, so the header's is the parent.
    let reply = post(&url, &format!("00-{TRACE}-{PARENT}-01"), 2).await;
    assert_eq!(reply["result"]["content"][0]["text"], "hi", "{reply}");
    let span = spans.server_span("tools/call echo", 2);
    assert_eq!(span.span_context.trace_id(), TraceId::from_hex(TRACE).unwrap());
    assert_eq!(span.parent_span_id, SpanId::from_hex(PARENT).unwrap());
}
