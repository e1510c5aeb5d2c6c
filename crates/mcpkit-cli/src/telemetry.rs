//! Logs, spans and metrics of every `mcpkit` command: logs on stderr (text or `--log-format
//! json`, level from `RUST_LOG` or `-v`); spans and metrics over OTLP/HTTP when
//! `--otlp-endpoint` or the standard `OTEL_EXPORTER_OTLP_*` variables say where (service name
//! from `OTEL_SERVICE_NAME`, default `mcpkit`); Prometheus text for `serve --metrics`; and the
//! span tree of `call --trace`. The subscriber and providers are this program's: the library
//! installs none.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

#[cfg(feature = "otlp")]
use mcpkit::telemetry::otlp;
use mcpkit::telemetry::{Prometheus, Telemetry, SPAN_TARGET};
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::Layer as _;

/// How logs are written to stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line (timestamp, level, target, fields, spans).
    Json,
}

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-v` count: the log level when `RUST_LOG` is unset.
    pub verbose: u8,
    /// `--log-format`.
    pub log_format: LogFormat,
    /// `--otlp-endpoint`: the OTLP/HTTP base URL.
    pub otlp_endpoint: Option<String>,
    /// `serve --metrics`: keep metrics for a Prometheus scrape.
    pub prometheus: bool,
    /// `call --trace`: collect this process's spans and print the tree.
    pub print_trace: bool,
}

/// The running telemetry of the process; [`Setup::shutdown`] flushes it.
pub struct Setup {
    /// Where mcpkit records metrics (off unless OTLP or Prometheus is on).
    pub telemetry: Telemetry,
    /// The Prometheus text of `serve --metrics`.
    pub prometheus: Option<Prometheus>,
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    collected: Option<Arc<Mutex<Vec<SpanData>>>>,
}

/// Install the subscriber (and the providers `options` need) for this process. Problems with
/// the OTLP set-up are reported on stderr and leave the command running without export.
pub fn init(options: &Options) -> Setup {
    let default = match options.verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // Logs go to stderr only: stdout carries the protocol when serving on stdio.
    let fmt = match options.log_format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .with_filter(filter)
            .boxed(),
    };

    let mut problems = Vec::new();
    #[cfg(feature = "otlp")]
    let (export_spans, export_metrics, resource) = {
        let export = options.otlp_endpoint.is_some() || otlp::configured_by_env();
        (
            export && otlp::signal_enabled("TRACES"),
            export && otlp::signal_enabled("METRICS"),
            otlp::resource("mcpkit"),
        )
    };
    #[cfg(not(feature = "otlp"))]
    let (export_spans, export_metrics, resource) = {
        let by_env = std::env::vars_os().any(|(k, _)| {
            k.to_str()
                .is_some_and(|k| k.starts_with("OTEL_EXPORTER_OTLP_") && k.ends_with("ENDPOINT"))
        });
        if options.otlp_endpoint.is_some() || by_env {
            let what = "exporting over OTLP (--otlp-endpoint, OTEL_EXPORTER_OTLP_*)";
            problems.push(crate::target::Failure::not_built(what, "otlp").message);
        }
        (
            false,
            false,
            opentelemetry_sdk::Resource::builder()
                .with_service_name("mcpkit")
                .build(),
        )
    };
    #[cfg(feature = "otlp")]
    let endpoint = options.otlp_endpoint.as_deref();

    let collected = options.print_trace.then(|| Arc::new(Mutex::new(Vec::new())));
    let tracer = if export_spans || collected.is_some() {
        let mut builder = SdkTracerProvider::builder().with_resource(resource.clone());
        #[cfg(feature = "otlp")]
        if export_spans {
            match otlp::span_exporter(endpoint) {
                Ok(e) => builder = builder.with_batch_exporter(e),
                Err(e) => problems.push(format!("cannot export spans: {e}")),
            }
        }
        if let Some(spans) = &collected {
            // Every span of a traced call is kept, whatever the sampler in the environment.
            builder = builder
                .with_sampler(Sampler::AlwaysOn)
                .with_simple_exporter(Collector(spans.clone()));
        }
        Some(builder.build())
    } else {
        None
    };
    let otel = tracer.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("mcpkit"))
            .with_filter(
                Targets::new()
                    .with_target(SPAN_TARGET, LevelFilter::INFO)
                    .with_target("mcpkit_cli", LevelFilter::INFO),
            )
    });

    let prometheus = options.prometheus.then(Prometheus::new);
    let meter = if export_metrics || prometheus.is_some() {
        let mut builder = SdkMeterProvider::builder().with_resource(resource);
        #[cfg(feature = "otlp")]
        if export_metrics {
            match otlp::metric_reader(endpoint) {
                Ok(r) => builder = builder.with_reader(r),
                Err(e) => problems.push(format!("cannot export metrics: {e}")),
            }
        }
        if let Some(p) = &prometheus {
            builder = builder.with_reader(p.reader());
        }
        Some(builder.build())
    } else {
        None
    };

    tracing_subscriber::registry().with(fmt).with(otel).init();
    for p in problems {
        tracing::warn!("{p}");
    }
    Setup {
        telemetry: meter.as_ref().map_or_else(Telemetry::off, Telemetry::new),
        prometheus,
        tracer,
        meter,
        collected,
    }
}

impl Setup {
    /// The span a whole command runs in, so all its requests are one trace.
    pub fn command_span(&self, command: &str) -> tracing::Span {
        tracing::info_span!(target: SPAN_TARGET, "mcpkit", otel.name = format!("mcpkit {command}"), otel.kind = "internal")
    }

    /// Flush and stop the exporters (after the command's span has ended), then print the span
    /// tree if `call --trace` asked for it.
    pub fn shutdown(self) {
        if let Some(t) = &self.tracer {
            if let Err(e) = t.shutdown() {
                tracing::debug!("tracer shutdown: {e}");
            }
        }
        if let Some(m) = &self.meter {
            if let Err(e) = m.shutdown() {
                tracing::debug!("meter shutdown: {e}");
            }
        }
        if let Some(spans) = &self.collected {
            let spans = spans.lock().map(|s| s.clone()).unwrap_or_default();
            eprint!("{}", span_tree(&spans));
        }
    }
}

/// Keeps every finished span of this process, for `call --trace`.
#[derive(Debug)]
struct Collector(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collector {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if let Ok(mut spans) = self.0.lock() {
            spans.extend(batch);
        }
        Ok(())
    }
}

/// The trace ids of `spans` and each trace's spans as an indented tree: the offset of each
/// span from the start of its trace, its duration, its name and kind.
pub fn span_tree(spans: &[SpanData]) -> String {
    let mut out = String::new();
    let mut traces: Vec<TraceId> = Vec::new();
    for s in spans {
        if !traces.contains(&s.span_context.trace_id()) {
            traces.push(s.span_context.trace_id());
        }
    }
    for trace in traces {
        let mut of_trace: Vec<&SpanData> = spans.iter().filter(|s| s.span_context.trace_id() == trace).collect();
        of_trace.sort_by_key(|s| s.start_time);
        let start = of_trace.first().map_or(SystemTime::UNIX_EPOCH, |s| s.start_time);
        let _ = writeln!(out, "trace {trace}");
        let _ = writeln!(out, "  {:>9}  {:>9}  span", "start ms", "took ms");
        let ids: Vec<SpanId> = of_trace.iter().map(|s| s.span_context.span_id()).collect();
        // Roots: spans whose parent is not in this process's part of the trace.
        for root in of_trace.iter().filter(|s| !ids.contains(&s.parent_span_id)) {
            write_span(&mut out, root, &of_trace, start, 0);
        }
    }
    out
}

fn write_span(out: &mut String, span: &SpanData, all: &[&SpanData], start: SystemTime, depth: usize) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let offset = span.start_time.duration_since(start).unwrap_or_default();
    let took = span.end_time.duration_since(span.start_time).unwrap_or_default();
    let kind = format!("{:?}", span.span_kind).to_lowercase();
    let _ = writeln!(
        out,
        "  {:>9.2}  {:>9.2}  {:indent$}{} ({kind})",
        ms(offset),
        ms(took),
        "",
        span.name,
        indent = depth * 2
    );
    for child in all.iter().filter(|s| s.parent_span_id == span.span_context.span_id()) {
        write_span(out, child, all, start, depth + 1);
    }
}
