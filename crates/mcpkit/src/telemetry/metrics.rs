//! The instruments: the convention's four histograms (seconds, with its bucket boundaries) and
//! mcpkit's own gauges and counters of a running server.

use std::time::Duration;

#[cfg(feature = "http-server")]
use opentelemetry::metrics::Gauge;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};
use opentelemetry::KeyValue;

use super::labels;
use super::{Scope, Side};

/// The bucket boundaries the convention gives every MCP duration histogram.
const BUCKETS: &[f64] = &[
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Every instrument mcpkit records, made once from one meter.
#[derive(Debug)]
pub(crate) struct Instruments {
    pub(crate) server_operation: Histogram<f64>,
    pub(crate) client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
    requests_active: UpDownCounter<i64>,
    pub(crate) sessions_open: UpDownCounter<i64>,
    /// The HTTP server's streams (instruments only a build with it registers).
    #[cfg(feature = "http-server")]
    pub(crate) streams_open: UpDownCounter<i64>,
    backend_errors: Counter<u64>,
    #[cfg(feature = "http-server")]
    pub(crate) event_store_events: Gauge<u64>,
}

fn duration(meter: &Meter, name: &'static str, description: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(description)
        .with_boundaries(BUCKETS.to_vec())
        .build()
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Instruments {
        Instruments {
            server_operation: duration(
                meter,
                "mcp.server.operation.duration",
                "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.",
            ),
            client_operation: duration(
                meter,
                "mcp.client.operation.duration",
                "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.",
            ),
            server_session: duration(
                meter,
                "mcp.server.session.duration",
                "The duration of the MCP session as observed on the MCP server.",
            ),
            client_session: duration(
                meter,
                "mcp.client.session.duration",
                "The duration of the MCP session as observed on the MCP client.",
            ),
            requests_active: meter
                .i64_up_down_counter("mcpkit.server.requests.active")
                .with_unit("{request}")
                .with_description("Requests from the other side being handled now.")
                .build(),
            sessions_open: meter
                .i64_up_down_counter("mcpkit.server.sessions.open")
                .with_unit("{session}")
                .with_description("Open sessions: stdio connections and HTTP sessions.")
                .build(),
            #[cfg(feature = "http-server")]
            streams_open: meter
                .i64_up_down_counter("mcpkit.server.streams.open")
                .with_unit("{stream}")
                .with_description("Open SSE response and GET streams of the HTTP server.")
                .build(),
            backend_errors: meter
                .u64_counter("mcpkit.server.backend.errors")
                .with_unit("{error}")
                .with_description("Failed calls to a backend (session store, event store, bus, key ring, task store).")
                .build(),
            #[cfg(feature = "http-server")]
            event_store_events: meter
                .u64_gauge("mcpkit.server.event_store.events")
                .with_unit("{event}")
                .with_description("Events kept in the event store for Last-Event-ID resumption (with shared backends, the whole deployment's).")
                .build(),
        }
    }

    /// `mcpkit.server.requests.active` by `delta`, labelled with the method and `extra`.
    pub(crate) fn request_active(&self, delta: i64, method: &'static str, extra: &[KeyValue]) {
        let method = KeyValue::new(labels::METHOD, method);
        if extra.is_empty() {
            self.requests_active.add(delta, &[method]);
        } else {
            let mut kv = Vec::with_capacity(1 + extra.len());
            kv.push(method);
            kv.extend(extra.iter().cloned());
            self.requests_active.add(delta, &kv);
        }
    }

    pub(crate) fn backend_error(&self, backend: &'static str) {
        self.backend_errors.add(1, &[KeyValue::new("backend", backend)]);
    }

    pub(crate) fn session_ended(&self, scope: &Scope, elapsed: Duration, error: Option<&'static str>) {
        let mut kv = Vec::with_capacity(4);
        if let Some(e) = error {
            kv.push(KeyValue::new(labels::ERROR_TYPE, e));
        }
        if let Some(v) = scope.version() {
            kv.push(KeyValue::new(labels::PROTOCOL_VERSION, v.as_str()));
        }
        if let Some(transport) = scope.transport() {
            kv.push(KeyValue::new(labels::TRANSPORT, transport.as_str()));
            if transport == super::NetworkTransport::Tcp {
                kv.push(KeyValue::new(labels::PROTOCOL_NAME, "http"));
            }
        }
        kv.extend(scope.telemetry.labels.iter().cloned());
        match scope.telemetry.side {
            Side::Server => {
                self.server_session.record(elapsed.as_secs_f64(), &kv);
                self.sessions_open.add(-1, &scope.telemetry.labels);
            }
            #[cfg(feature = "client")]
            Side::Client => self.client_session.record(elapsed.as_secs_f64(), &kv),
        }
    }
}
