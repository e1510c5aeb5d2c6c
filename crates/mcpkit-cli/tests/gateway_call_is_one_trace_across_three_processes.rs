//! `mcpkit call` → `mcpkit gateway` → `mcpkit serve --http`, all three exporting over OTLP/HTTP
//! to a receiver this test runs: a call of `ref_echo` is one trace — the gateway's server span
//! is the child of the client's, and the upstream's server span (`tools/call echo`) descends
//! from the gateway's server span through the gateway's own client span.

use std::process::Command;

use mcpkit_test_support::otlp_receiver::{OtlpReceiver, ReceivedSpan};
use support::gateway::{url_upstream, Gateway, ServeUpstream};

use crate::support;

const MCPKIT: &str = env!("CARGO_BIN_EXE_mcpkit");

/// The standard variables every mcpkit process honours; a short batch delay so spans arrive
/// while the test waits.
fn otel<'a>(receiver: &'a OtlpReceiver, service: &'a str) -> [(&'a str, &'a str); 3] {
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
        ("OTEL_SERVICE_NAME", service),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ]
}

fn find<'a>(spans: &'a [ReceivedSpan], service: &str, name: &str, kind: &str) -> Option<&'a ReceivedSpan> {
    spans
        .iter()
        .find(|s| s.service == service && s.name == name && s.kind == kind)
}

fn all_four(spans: &[ReceivedSpan]) -> bool {
    find(spans, "mcpkit-call", "tools/call ref_echo", "Client").is_some()
        && find(spans, "mcpkit-gateway", "tools/call ref_echo", "Server").is_some()
        && find(spans, "mcpkit-gateway", "tools/call echo", "Client").is_some()
        && find(spans, "mcpkit-serve", "tools/call echo", "Server").is_some()
}

/// Whether `span` descends from `ancestor` through the spans received.
fn descends(spans: &[ReceivedSpan], span: &ReceivedSpan, ancestor: &ReceivedSpan) -> bool {
    let mut at = span;
    for _ in 0..64 {
        if at.parent_span_id == ancestor.span_id {
            return true;
        }
        match spans.iter().find(|s| s.span_id == at.parent_span_id) {
            Some(parent) => at = parent,
            None => return false,
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_through_the_gateway_is_one_trace() {
    let receiver = OtlpReceiver::start().await;
    let upstream = ServeUpstream::start_with_env(&[], &otel(&receiver, "mcpkit-serve"));
    let gateway = Gateway::start_with_env(
        &url_upstream("ref", &upstream.url),
        &[],
        &otel(&receiver, "mcpkit-gateway"),
    );
    let url = gateway.url.clone();
    let out = tokio::task::block_in_place(|| {
        let mut call = Command::new(MCPKIT);
        call.args(["call", "ref_echo", "message=traced", "--server", &url])
            .envs(otel(&receiver, "mcpkit-call"))
            .env_remove("OTEL_TRACES_SAMPLER")
            .env_remove("RUST_LOG");
        call.output().unwrap()
    });
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "traced");
    let spans = receiver.wait_for("the four tools/call spans", all_four).await;
    let client = find(&spans, "mcpkit-call", "tools/call ref_echo", "Client").unwrap();
    let gateway_server = find(&spans, "mcpkit-gateway", "tools/call ref_echo", "Server").unwrap();
    let gateway_client = find(&spans, "mcpkit-gateway", "tools/call echo", "Client").unwrap();
    let upstream_server = find(&spans, "mcpkit-serve", "tools/call echo", "Server").unwrap();
    for span in [gateway_server, gateway_client, upstream_server] {
        assert_eq!(span.trace_id, client.trace_id, "one trace: {span:#?}\n{spans:#?}");
    }
    assert_eq!(
        gateway_server.parent_span_id, client.span_id,
        "the gateway's server span is the client's child"
    );
    assert_eq!(
        upstream_server.parent_span_id, gateway_client.span_id,
        "the upstream's server span is the child of the gateway's client span"
    );
    assert!(
        descends(&spans, gateway_client, gateway_server),
        "the gateway's client span descends from its server span: {spans:#?}"
    );
    assert!(descends(&spans, upstream_server, gateway_server));
    assert_eq!(gateway_client.attr("gen_ai.tool.name"), Some("echo"));
    assert_eq!(upstream_server.attr("gen_ai.tool.name"), Some("echo"));
    assert_eq!(gateway_server.attr("gen_ai.tool.name"), Some("ref_echo"));
}
