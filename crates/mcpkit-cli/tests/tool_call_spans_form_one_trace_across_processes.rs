//! `mcpkit call` → `mcpkit serve`, both exporting over OTLP/HTTP to a receiver this test runs:
//! the client's `tools/call echo` span and the server's are one trace across the two
//! processes (the context travels in `params._meta`), with the span names, kinds and
//! attributes of the OpenTelemetry MCP conventions. Over stdio and over Streamable HTTP.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use mcpkit_test_support::otlp_receiver::{OtlpReceiver, ReceivedSpan};

const MCPKIT: &str = env!("CARGO_BIN_EXE_mcpkit");

/// The standard variables every mcpkit process honours; a short batch delay so spans arrive
/// while the test waits.
fn otel_env(cmd: &mut Command, receiver: &OtlpReceiver, service: &str) {
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint)
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env_remove("OTEL_TRACES_SAMPLER")
        .env_remove("RUST_LOG");
}

fn call_echo(receiver: &OtlpReceiver, target: &[&str]) {
    let mut cmd = Command::new(MCPKIT);
    cmd.args(["call", "echo", "message=traced"]).args(target);
    otel_env(&mut cmd, receiver, "mcpkit-call");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "mcpkit call failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "traced");
}

fn find<'a>(spans: &'a [ReceivedSpan], name: &str, kind: &str) -> Option<&'a ReceivedSpan> {
    spans.iter().find(|s| s.name == name && s.kind == kind)
}

fn has_call_pair(spans: &[ReceivedSpan]) -> bool {
    find(spans, "tools/call echo", "Server").is_some() && find(spans, "tools/call echo", "Client").is_some()
}

/// One trace: the server span is the child of the client span, both carry the convention's
/// attributes, and every span of both processes belongs to the command's trace.
fn assert_one_trace(spans: &[ReceivedSpan], transport: &str) {
    let client = find(spans, "tools/call echo", "Client").unwrap();
    let server = find(spans, "tools/call echo", "Server").unwrap();
    assert_eq!(client.trace_id, server.trace_id, "one trace across both processes");
    assert_eq!(
        server.parent_span_id, client.span_id,
        "the server span's parent is the client span"
    );
    let root = spans
        .iter()
        .find(|s| s.name == "mcpkit call" && s.trace_id == client.trace_id)
        .expect("the command's own span");
    assert_eq!(client.parent_span_id, root.span_id);
    assert!(root.parent_span_id.is_empty() || root.parent_span_id == "0000000000000000");
    for span in [client, server] {
        assert_eq!(span.attr("mcp.method.name"), Some("tools/call"), "{span:#?}");
        assert_eq!(span.attr("gen_ai.tool.name"), Some("echo"), "{span:#?}");
        assert_eq!(span.attr("gen_ai.operation.name"), Some("execute_tool"), "{span:#?}");
        assert_eq!(span.attr("mcp.protocol.version"), Some("2025-11-25"), "{span:#?}");
        assert_eq!(span.attr("network.transport"), Some(transport), "{span:#?}");
        assert!(span.attr("error.type").is_none(), "{span:#?}");
    }
    assert_eq!(client.attr("jsonrpc.request.id"), server.attr("jsonrpc.request.id"));
    assert!(client.attr("jsonrpc.request.id").is_some());
    // The handshake is in the same trace, on both sides.
    for kind in ["Client", "Server"] {
        let init = spans
            .iter()
            .find(|s| s.name == "initialize" && s.kind == kind && s.trace_id == client.trace_id);
        assert!(init.is_some(), "{kind} initialize span in the trace: {spans:#?}");
    }
    if transport == "tcp" {
        let session = server.attr("mcp.session.id").expect("an HTTP session id");
        assert_eq!(session.len(), 32);
        assert_eq!(server.attr("network.protocol.name"), Some("http"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_the_client_and_server_spans_are_one_trace() {
    let receiver = OtlpReceiver::start().await;
    // The stdio server is a child of `mcpkit call`: it inherits the OTEL_* variables.
    let r = &receiver;
    tokio::task::block_in_place(|| call_echo(r, &["--", MCPKIT, "serve"]));
    let spans = receiver.wait_for("both tools/call spans", has_call_pair).await;
    assert_one_trace(&spans, "pipe");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_client_and_server_spans_are_one_trace() {
    let receiver = OtlpReceiver::start().await;
    let mut serve = Command::new(MCPKIT);
    serve.args(["serve", "--http", "127.0.0.1:0"]).stderr(Stdio::piped());
    otel_env(&mut serve, &receiver, "mcpkit-serve");
    let mut child = serve.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "banner: {line}");
    let r = &receiver;
    tokio::task::block_in_place(|| call_echo(r, &["--server", &url]));
    let spans = receiver.wait_for("both tools/call spans", has_call_pair).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_one_trace(&spans, "tcp");
    let server = find(&spans, "tools/call echo", "Server").unwrap();
    assert_eq!(server.service, "mcpkit-serve");
    assert_eq!(
        find(&spans, "tools/call echo", "Client").unwrap().service,
        "mcpkit-call"
    );
}
