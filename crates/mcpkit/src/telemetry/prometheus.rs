//! Prometheus text exposition (format 0.0.4) of an OpenTelemetry meter provider: a manual
//! reader collects on each scrape and this encoder writes what it collected, with the
//! OpenTelemetry-to-Prometheus naming rules (dots to underscores, the unit as a suffix,
//! `_total` on counters, the resource as `target_info`).

use std::fmt::Write as _;
use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality};
use opentelemetry_sdk::Resource;

/// The metrics of one meter provider as Prometheus text. Add [`Prometheus::reader`] to the
/// provider (once: a reader belongs to one provider), then serve [`Prometheus::render`] at
/// `/metrics` ([`HttpServer::metrics`](crate::server::http::HttpServer::metrics),
/// [`metrics_router`](super::metrics_router) or [`MetricsLayer`](super::MetricsLayer)).
#[derive(Debug, Clone)]
pub struct Prometheus {
    reader: Arc<ManualReader>,
}

impl Default for Prometheus {
    fn default() -> Self {
        Prometheus::new()
    }
}

/// The reader half of [`Prometheus`], for `SdkMeterProvider::builder().with_reader(…)`.
#[derive(Debug)]
pub struct PrometheusReader(Arc<ManualReader>);

impl MetricReader for PrometheusReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }
    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }
    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }
    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

impl Prometheus {
    /// A text exporter not yet attached to a provider.
    pub fn new() -> Prometheus {
        Prometheus {
            reader: Arc::new(
                ManualReader::builder()
                    .with_temporality(Temporality::Cumulative)
                    .build(),
            ),
        }
    }

    /// The reader to add to a meter provider.
    pub fn reader(&self) -> PrometheusReader {
        PrometheusReader(self.reader.clone())
    }

    /// A meter provider whose only reader is this one.
    pub fn meter_provider(&self, resource: Resource) -> SdkMeterProvider {
        SdkMeterProvider::builder()
            .with_resource(resource)
            .with_reader(self.reader())
            .build()
    }

    /// Everything the provider holds now, as Prometheus text.
    pub fn render(&self) -> String {
        let mut rm = ResourceMetrics::default();
        if let Err(e) = self.reader.collect(&mut rm) {
            tracing::debug!("could not collect metrics: {e}");
        }
        encode(&rm)
    }
}

/// The Prometheus text of `rm`.
fn encode(rm: &ResourceMetrics) -> String {
    let mut out = String::with_capacity(4096);
    let resource: Vec<KeyValue> = rm
        .resource()
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    if !resource.is_empty() {
        out.push_str("# HELP target_info Target metadata\n# TYPE target_info gauge\ntarget_info");
        write_labels(&mut out, resource.iter(), None);
        out.push_str(" 1\n");
    }
    for scope in rm.scope_metrics() {
        for metric in scope.metrics() {
            write_metric(&mut out, metric);
        }
    }
    out
}

fn write_metric(out: &mut String, metric: &Metric) {
    let base = metric_name(metric.name(), metric.unit());
    let help = metric.description().replace('\\', "\\\\").replace('\n', "\\n");
    match metric.data() {
        AggregatedMetrics::F64(data) => write_data(out, &base, &help, data),
        AggregatedMetrics::I64(data) => write_data(out, &base, &help, data),
        AggregatedMetrics::U64(data) => write_data(out, &base, &help, data),
    }
}

/// A data point's value as the text format writes it.
trait Number: Copy {
    fn as_f64(self) -> f64;
}

impl Number for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

impl Number for i64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Number for u64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}

fn write_data<T: Number>(out: &mut String, base: &str, help: &str, data: &MetricData<T>) {
    match data {
        MetricData::Gauge(g) => {
            let _ = writeln!(out, "# HELP {base} {help}\n# TYPE {base} gauge");
            for p in g.data_points() {
                sample(out, base, "", p.attributes(), None, p.value().as_f64());
            }
        }
        MetricData::Sum(s) => {
            let (name, kind) = if s.is_monotonic() {
                (format!("{base}_total"), "counter")
            } else {
                (base.to_owned(), "gauge")
            };
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for p in s.data_points() {
                sample(out, &name, "", p.attributes(), None, p.value().as_f64());
            }
        }
        MetricData::Histogram(h) => {
            let _ = writeln!(out, "# HELP {base} {help}\n# TYPE {base} histogram");
            for p in h.data_points() {
                let mut cumulative = 0u64;
                for (bound, count) in p.bounds().zip(p.bucket_counts()) {
                    cumulative += count;
                    let le = format_f64(bound);
                    sample(out, base, "_bucket", p.attributes(), Some(&le), cumulative as f64);
                }
                sample(out, base, "_bucket", p.attributes(), Some("+Inf"), p.count() as f64);
                sample(out, base, "_sum", p.attributes(), None, p.sum().as_f64());
                sample(out, base, "_count", p.attributes(), None, p.count() as f64);
            }
        }
        // Not used by mcpkit; a provider's other instruments of this kind are left out.
        MetricData::ExponentialHistogram(_) => {}
    }
}

fn sample<'a>(
    out: &mut String,
    name: &str,
    suffix: &str,
    labels: impl Iterator<Item = &'a KeyValue>,
    le: Option<&str>,
    value: f64,
) {
    out.push_str(name);
    out.push_str(suffix);
    write_labels(out, labels, le);
    out.push(' ');
    out.push_str(&format_f64(value));
    out.push('\n');
}

fn write_labels<'a>(out: &mut String, labels: impl Iterator<Item = &'a KeyValue>, le: Option<&str>) {
    let mut first = true;
    let mut open = |out: &mut String| {
        out.push(if first { '{' } else { ',' });
        first = false;
    };
    for kv in labels {
        open(out);
        out.push_str(&sanitize(kv.key.as_str()));
        out.push_str("=\"");
        escape_value(out, &value_text(&kv.value));
        out.push('"');
    }
    if let Some(le) = le {
        open(out);
        out.push_str("le=\"");
        out.push_str(le);
        out.push('"');
    }
    if !first {
        out.push('}');
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.as_str().to_owned(),
        other => other.to_string(),
    }
}

fn escape_value(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`: every other character becomes `_`.
fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The Prometheus name of an OpenTelemetry metric: sanitized, with its unit as a suffix
/// (`s` → `_seconds`; annotations such as `{request}` add nothing).
fn metric_name(name: &str, unit: &str) -> String {
    let mut base = sanitize(name);
    let suffix = match unit {
        "s" => "seconds",
        "ms" => "milliseconds",
        "By" => "bytes",
        "1" => "ratio",
        _ => "",
    };
    if !suffix.is_empty() && !base.ends_with(suffix) {
        base.push('_');
        base.push_str(suffix);
    }
    base
}

fn format_f64(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpkit_types::method::{CallTool, Method};
    use opentelemetry::metrics::MeterProvider as _;

    #[test]
    fn renders_histograms_counters_and_gauges_with_prometheus_names() {
        let prom = Prometheus::new();
        let provider = prom.meter_provider(Resource::builder_empty().with_service_name("t\"x").build());
        let meter = provider.meter("mcpkit");
        let h = meter
            .f64_histogram("mcp.server.operation.duration")
            .with_unit("s")
            .with_boundaries(vec![0.01, 0.1])
            .build();
        h.record(0.05, &[KeyValue::new("mcp.method.name", CallTool::NAME)]);
        h.record(0.5, &[KeyValue::new("mcp.method.name", CallTool::NAME)]);
        meter.u64_counter("mcpkit.server.backend.errors").build().add(2, &[]);
        meter
            .i64_up_down_counter("mcpkit.server.sessions.open")
            .build()
            .add(3, &[]);
        let text = prom.render();
        assert!(
            text.contains("# TYPE mcp_server_operation_duration_seconds histogram"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{mcp_method_name=\"{}\",le=\"0.01\"}} 0",
                CallTool::NAME
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{mcp_method_name=\"{}\",le=\"0.1\"}} 1",
                CallTool::NAME
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{mcp_method_name=\"{}\",le=\"+Inf\"}} 2",
                CallTool::NAME
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_count{{mcp_method_name=\"{}\"}} 2",
                CallTool::NAME
            )),
            "{text}"
        );
        assert!(text.contains("mcpkit_server_backend_errors_total 2"), "{text}");
        assert!(text.contains("# TYPE mcpkit_server_sessions_open gauge\n"), "{text}");
        assert!(text.contains("target_info{service_name=\"t\\\"x\"} 1"), "{text}");
    }
}
