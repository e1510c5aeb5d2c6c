//! Spans and metrics after the OpenTelemetry semantic conventions for MCP (the `gen-ai/mcp.md`
//! page of the OpenTelemetry GenAI conventions), driven by the engine's dispatch: every request
//! and notification, in and out, on both roles, without a line of code in any handler.
//!
//! - **Spans** go through `tracing` (target `mcpkit::telemetry`, level `info`): a `SERVER` span
//!   for what the other side sends (`tools/call get-weather`, `initialize`, …), a `CLIENT` span
//!   for what this side sends, with `mcp.method.name`, `jsonrpc.request.id`, `mcp.session.id`,
//!   `mcp.protocol.version`, `gen_ai.tool.name` / `gen_ai.prompt.name`, `gen_ai.operation.name`
//!   (`execute_tool`), `mcp.resource.uri`, `network.transport` (`pipe` on stdio, `tcp` on HTTP),
//!   and on failure `error.type` and `rpc.response.status_code` (the JSON-RPC code) or
//!   `error.type = tool_error` (a result with `isError: true`). With no subscriber listening, a
//!   span costs one interest check and nothing is parsed.
//! - **Trace context** (feature `otel`, with a `tracing-opentelemetry` layer installed): the
//!   server span's parent is read from `params._meta` (`traceparent`, `tracestate`, `baggage`),
//!   or on HTTP from the W3C headers when `_meta` has none; a malformed `traceparent` is ignored
//!   (the span is a new root). Every request and notification this side sends carries its span's
//!   context in `params._meta`, so what a handler sends (sampling, elicitation, its own calls to
//!   other MCP servers) joins the caller's trace.
//! - **Metrics** (feature `otel`, when a [`Telemetry`] is given to the server or client builder):
//!   `mcp.server.operation.duration`, `mcp.client.operation.duration`,
//!   `mcp.server.session.duration`, `mcp.client.session.duration` (seconds, the convention's
//!   buckets), and `mcpkit.server.requests.active`, `mcpkit.server.sessions.open`,
//!   `mcpkit.server.streams.open`, `mcpkit.server.event_store.events` and
//!   `mcpkit.server.backend.errors{backend}`. Label values never come from client input outside the
//!   catalogue: method names outside the MCP catalogue are `_OTHER`, tool and prompt names are
//!   labels only when the server found them, error codes outside the JSON-RPC and MCP ranges are
//!   `_OTHER`, and resource URIs, request ids and session ids are never labels.
//! - `Prometheus` (feature `otel`) renders the metrics as Prometheus text (`/metrics`); `otlp` (feature `otlp`)
//!   exports spans and metrics over OTLP/HTTP. mcpkit installs no global of its own: the
//!   application chooses its subscriber and providers.

mod labels;
mod peek;
mod scope;
mod span;

#[cfg(feature = "otel")]
mod context;
#[cfg(all(feature = "otel", feature = "http-server"))]
mod endpoint;
#[cfg(feature = "otel")]
mod metrics;
#[cfg(feature = "otlp")]
pub mod otlp;
#[cfg(feature = "otel")]
mod prometheus;

#[cfg(all(feature = "otel", feature = "http-server"))]
pub use endpoint::{metrics_router, MetricsLayer, MetricsService};
#[cfg(feature = "otel")]
pub use prometheus::Prometheus;

#[cfg(feature = "otel")]
pub use context::TraceHeaders;
pub(crate) use scope::{NetworkTransport, Scope};
pub(crate) use span::{Ending, Inbound, Outbound};

#[cfg(feature = "otel")]
use std::sync::Arc;

/// The target of mcpkit's spans: filter on it (`RUST_LOG=mcpkit::telemetry=info`) to keep the
/// spans and drop the rest of the log.
pub const SPAN_TARGET: &str = "mcpkit::telemetry";

/// Which side of MCP a [`Telemetry`] measures: it picks the session metric
/// (`mcp.server.session.duration` or `mcp.client.session.duration`). The server and client
/// builders set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Side {
    /// The server's connections.
    #[default]
    Server,
    /// The client's connection.
    #[cfg(feature = "client")]
    Client,
}

/// Where mcpkit records its metrics: give one to [`ServerBuilder::telemetry`] and
/// [`ClientBuilder::telemetry`]. Cheap to clone. [`Telemetry::default`] records no metrics
/// (spans go through `tracing` either way).
///
/// [`ServerBuilder::telemetry`]: crate::server::ServerBuilder::telemetry
/// [`ClientBuilder::telemetry`]: crate::client::ClientBuilder::telemetry
#[derive(Clone, Default)]
pub struct Telemetry {
    #[cfg(feature = "otel")]
    pub(crate) instruments: Option<Arc<metrics::Instruments>>,
    #[cfg(not(feature = "otel"))]
    instruments: Option<std::convert::Infallible>,
    /// Labels every operation and session metric of this telemetry's connections carries
    /// ([`Telemetry::with_label`]).
    #[cfg(feature = "otel")]
    pub(crate) labels: Arc<[opentelemetry::KeyValue]>,
    pub(crate) side: Side,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("metrics", &self.instruments.is_some())
            .finish()
    }
}

impl Telemetry {
    /// No metrics (the default).
    pub fn off() -> Telemetry {
        Telemetry::default()
    }

    /// Record mcpkit's metrics with the meter `mcpkit` of `provider` (an SDK meter provider
    /// with a [`Prometheus`] reader, an OTLP reader, or both).
    #[cfg(feature = "otel")]
    pub fn new(provider: &impl opentelemetry::metrics::MeterProvider) -> Telemetry {
        Telemetry::with_meter(&provider.meter("mcpkit"))
    }

    /// Record mcpkit's metrics with `meter`.
    #[cfg(feature = "otel")]
    pub fn with_meter(meter: &opentelemetry::metrics::Meter) -> Telemetry {
        Telemetry {
            instruments: Some(Arc::new(metrics::Instruments::new(meter))),
            labels: Arc::new([]),
            side: Side::Server,
        }
    }

    /// This telemetry with `key = value` on every operation and session metric its
    /// connections record (`mcp.{server,client}.operation.duration`,
    /// `mcp.{server,client}.session.duration`, `mcpkit.server.requests.active`,
    /// `mcpkit.server.sessions.open`): for example the name of the upstream a gateway's
    /// client is connected to. Each value is a new metric series, so it must come from
    /// configuration, never from a peer.
    #[cfg(feature = "otel")]
    pub fn with_label(mut self, key: &'static str, value: impl Into<String>) -> Telemetry {
        let mut labels = self.labels.to_vec();
        labels.retain(|kv| kv.key.as_str() != key);
        labels.push(opentelemetry::KeyValue::new(key, value.into()));
        self.labels = labels.into();
        self
    }

    /// Whether metrics are recorded.
    pub fn records_metrics(&self) -> bool {
        self.instruments.is_some()
    }

    /// Count one failed call to a backend (session store, event store, bus, key ring, task
    /// store): `mcpkit.server.backend.errors{backend}`. `backend` is a fixed name such as
    /// `"event_store"`, never client input.
    pub fn backend_error(&self, backend: &'static str) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.instruments {
            i.backend_error(backend);
        }
        #[cfg(not(feature = "otel"))]
        let _ = backend;
    }

    /// The event store keeps `events` events now (`mcpkit.server.event_store.events`).
    #[cfg(feature = "http-server")]
    pub(crate) fn event_store_size(&self, events: u64) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.instruments {
            i.event_store_events.record(events, &[]);
        }
        #[cfg(not(feature = "otel"))]
        let _ = events;
    }

    /// Count one open SSE stream until the returned guard is dropped
    /// (`mcpkit.server.streams.open`).
    #[cfg(feature = "http-server")]
    pub(crate) fn stream_opened(&self) -> StreamOpen {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.instruments {
            i.streams_open.add(1, &[]);
            return StreamOpen(Some(i.clone()));
        }
        StreamOpen(None)
    }

    /// This telemetry for `side`'s connections.
    pub(crate) fn for_side(mut self, side: Side) -> Telemetry {
        self.side = side;
        self
    }
}

/// One open SSE stream, counted until dropped.
#[cfg(feature = "http-server")]
#[derive(Debug)]
pub(crate) struct StreamOpen(Option<InstrumentsRef>);

#[cfg(all(feature = "http-server", feature = "otel"))]
type InstrumentsRef = Arc<metrics::Instruments>;
#[cfg(all(feature = "http-server", not(feature = "otel")))]
type InstrumentsRef = std::convert::Infallible;

#[cfg(feature = "http-server")]
impl Drop for StreamOpen {
    fn drop(&mut self) {
        #[cfg(feature = "otel")]
        if let Some(i) = &self.0 {
            i.streams_open.add(-1, &[]);
        }
    }
}
