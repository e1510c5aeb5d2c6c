//! A call through a proxied upstream is one trace: the downstream client's span, the front
//! server's span (its child, the context read from `_meta`), the front's call to the upstream
//! (the child of the front server's span, its context written into `_meta`) and the upstream
//! server's span (the child of that call). Over HTTP, the upstream call's context is in the
//! POST's `traceparent` header too.

use std::sync::{Arc, Mutex};

use mcpkit::server::compose::Upstream;
use mcpkit::testing::TestPair;
use mcpkit::{Client, Server, ToolDef};
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt as _;

#[derive(Debug, Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Spans {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

impl Spans {
    fn one(&self, name: &str, kind: SpanKind) -> SpanData {
        let spans = self.0.lock().unwrap();
        let found: Vec<&SpanData> = spans.iter().filter(|s| s.name == name && s.span_kind == kind).collect();
        assert_eq!(
            found.len(),
            1,
            "{kind:?} spans named {name} among {:?}",
            spans.iter().map(|s| (&s.name, &s.span_kind)).collect::<Vec<_>>()
        );
        found[0].clone()
    }
}

fn collect() -> (Spans, SdkTracerProvider, tracing::subscriber::DefaultGuard) {
    let spans = Spans::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(spans.clone()).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (spans, provider, guard)
}

/// The four spans of one call of `up_echo`, checked to be one trace in a chain; the span of
/// the call to the upstream.
fn assert_one_trace(spans: &Spans) -> SpanData {
    let downstream = spans.one("tools/call up_echo", SpanKind::Client);
    let front = spans.one("tools/call up_echo", SpanKind::Server);
    let to_upstream = spans.one("tools/call echo", SpanKind::Client);
    let at_upstream = spans.one("tools/call echo", SpanKind::Server);
    let trace = downstream.span_context.trace_id();
    for span in [&front, &to_upstream, &at_upstream] {
        assert_eq!(span.span_context.trace_id(), trace, "one trace: {span:?}");
    }
    assert_eq!(front.parent_span_id, downstream.span_context.span_id());
    assert_eq!(to_upstream.parent_span_id, front.span_context.span_id());
    assert_eq!(at_upstream.parent_span_id, to_upstream.span_context.span_id());
    to_upstream
}

#[tokio::test(flavor = "current_thread")]
async fn the_upstream_call_is_the_child_of_the_downstream_call() {
    let (spans, provider, _guard) = collect();

    let upstream_server = Server::builder().tool(ToolDef::new("echo", || async { "hi" })).build();
    let (here, there) = mcpkit::transport::memory::pair();
    let _upstream_connection = upstream_server.start(there);
    let upstream = Upstream::new("up");
    let client = upstream.relay(Client::builder()).connect(here).await.unwrap();
    upstream.attach(client).await.unwrap();
    let front = Server::builder().proxy(&upstream).build();
    let pair = TestPair::connect(front, Client::builder()).await.unwrap();

    let r = pair.client.call_tool("up_echo", ()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi"));
    let _ = provider.force_flush();

    assert_one_trace(&spans);
}

#[tokio::test(flavor = "current_thread")]
async fn over_http_the_upstream_post_carries_the_context_in_its_headers() {
    let (spans, provider, _guard) = collect();
    let upstream_server = Server::builder().tool(ToolDef::new("echo", || async { "hi" })).build();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let app = mcpkit::HttpServer::new(upstream_server)
        .router()
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let record = record.clone();
                async move {
                    if let Some(v) = request.headers().get("traceparent").and_then(|v| v.to_str().ok()) {
                        record.lock().unwrap().push(v.to_owned());
                    }
                    next.run(request).await
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let upstream = Upstream::new("up");
    let transport = mcpkit::HttpClientTransport::new(&url).unwrap();
    let client = upstream.relay(Client::builder()).connect(transport).await.unwrap();
    upstream.attach(client).await.unwrap();
    let front = Server::builder().proxy(&upstream).build();
    let pair = TestPair::connect(front, Client::builder()).await.unwrap();
    seen.lock().unwrap().clear();

    let r = pair.client.call_tool("up_echo", ()).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("hi"));
    let _ = provider.force_flush();
    let to_upstream = assert_one_trace(&spans);
    let expected = format!(
        "00-{}-{}-01",
        to_upstream.span_context.trace_id(),
        to_upstream.span_context.span_id()
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [expected],
        "the tools/call POST's traceparent header"
    );
}
