//! OTLP/HTTP export (protobuf bodies) of spans and metrics, for an application to put into its
//! own providers: [`tracer_provider`] for the `tracing-opentelemetry` layer, [`metric_reader`]
//! for an `SdkMeterProvider` (beside a [`Prometheus`](super::Prometheus) reader, if wanted).
//!
//! The endpoint is a base URL (`http://collector:4318`): `/v1/traces` and `/v1/metrics` are
//! appended. With none, the standard variables decide (`OTEL_EXPORTER_OTLP_ENDPOINT`, the
//! per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `…_METRICS_ENDPOINT`,
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`); [`resource`] reads
//! `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, the tracer provider
//! `OTEL_TRACES_SAMPLER`.
//!
//! Exports run on the SDK's own threads (the batch span processor's, the periodic reader's),
//! through a blocking HTTP client made on that thread: nothing runs on the application's
//! async runtime, and a current-thread runtime (a stdio server) is never blocked by an export.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    ExporterBuildError, MetricExporter, Protocol, SpanExporter, WithExportConfig as _, WithHttpConfig as _,
};
use opentelemetry_sdk::metrics::PeriodicReader;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;

/// The resource of a service: `OTEL_SERVICE_NAME` (else `default_name`) and
/// `OTEL_RESOURCE_ATTRIBUTES`.
pub fn resource(default_name: &str) -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|n| !n.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|a| a.contains("service.name="));
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name(default_name.to_owned()).build()
    }
}

/// Whether the environment names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or a
/// per-signal one): then a program exports even without being told on its command line.
pub fn configured_by_env() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var(v).is_ok_and(|s| !s.is_empty()))
}

/// Whether the standard selector of `signal`'s exporter leaves it on: `OTEL_TRACES_EXPORTER`
/// (signal `"TRACES"`) or `OTEL_METRICS_EXPORTER` (`"METRICS"`) set to `none` turns that signal's
/// export off while the other one stays on.
pub fn signal_enabled(signal: &str) -> bool {
    exporter_selected(std::env::var(format!("OTEL_{signal}_EXPORTER")).ok().as_deref())
}

/// An `OTEL_*_EXPORTER` value (a comma-separated list) leaves export on unless it names `none`.
fn exporter_selected(value: Option<&str>) -> bool {
    value.is_none_or(|v| !v.split(',').any(|e| e.trim() == "none"))
}

fn signal_url(base: Option<&str>, path: &str) -> Option<String> {
    base.map(|b| format!("{}{path}", b.trim_end_matches('/')))
}

/// A span exporter to `endpoint` (a base URL; `None`: from the environment), for a batch
/// processor of the application's tracer provider.
pub fn span_exporter(endpoint: Option<&str>) -> Result<SpanExporter, ExporterBuildError> {
    let mut builder = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(BlockingClient::default());
    if let Some(url) = signal_url(endpoint, "/v1/traces") {
        builder = builder.with_endpoint(url);
    }
    builder.build()
}

/// A tracer provider exporting spans in batches to `endpoint` (a base URL; `None`: from the
/// environment), with `resource` and the sampler `OTEL_TRACES_SAMPLER` names.
pub fn tracer_provider(endpoint: Option<&str>, resource: Resource) -> Result<SdkTracerProvider, ExporterBuildError> {
    Ok(SdkTracerProvider::builder()
        .with_resource(resource)
        .with_batch_exporter(span_exporter(endpoint)?)
        .build())
}

/// A reader pushing the provider's metrics to `endpoint` (a base URL; `None`: from the
/// environment) every `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s) and at shutdown.
pub fn metric_reader(endpoint: Option<&str>) -> Result<PeriodicReader<MetricExporter>, ExporterBuildError> {
    let mut builder = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_http_client(BlockingClient::default());
    if let Some(url) = signal_url(endpoint, "/v1/metrics") {
        builder = builder.with_endpoint(url);
    }
    Ok(PeriodicReader::builder(builder.build()?).build())
}

/// The exporters' HTTP client: reqwest's blocking client (the reqwest mcpkit's HTTP client
/// already builds), made on the first export, on the exporter's thread.
#[derive(Debug, Default)]
struct BlockingClient {
    client: OnceLock<reqwest::blocking::Client>,
}

impl Drop for BlockingClient {
    fn drop(&mut self) {
        // A blocking client owns a runtime, which must not be dropped on an async thread (a
        // provider may be dropped there): let a thread of its own drop it.
        if let Some(client) = self.client.take() {
            let _ = std::thread::Builder::new()
                .name("mcpkit-otlp-drop".into())
                .spawn(move || drop(client));
        }
    }
}

impl BlockingClient {
    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = match self.client.get() {
            Some(c) => c,
            None => {
                let c = reqwest::blocking::Client::builder().build()?;
                self.client.get_or_init(|| c)
            }
        };
        let request = reqwest::blocking::Request::try_from(request.map(|b| reqwest::blocking::Body::from(b.to_vec())))?;
        let response = client.execute(request)?;
        let mut out = Response::builder().status(response.status());
        for (k, v) in response.headers() {
            out = out.header(k, v);
        }
        let body = response.bytes()?;
        Ok(out.body(body)?)
    }
}

impl HttpClient for BlockingClient {
    fn send_bytes<'a, 'b>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        // Called from the SDK's export threads (`block_on` there), never from an async runtime.
        let result = self.send(request);
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use super::exporter_selected;

    #[test]
    fn an_exporter_list_naming_none_turns_its_signal_off() {
        assert!(exporter_selected(None));
        assert!(exporter_selected(Some("otlp")));
        assert!(exporter_selected(Some("")));
        assert!(!exporter_selected(Some("none")));
        assert!(!exporter_selected(Some("otlp, none")));
    }
}
