//! Trace context through `params._meta` (the convention; SEP-414's unprefixed `traceparent`,
//! `tracestate`, `baggage`) and, on HTTP, the W3C headers of the POST when `_meta` carries
//! none. Always W3C Trace Context and Baggage: those are the keys the convention names, so a
//! peer's context is read the same whatever global propagator the application set.

use std::collections::HashMap;

use opentelemetry::propagation::{Extractor, Injector, TextMapCompositePropagator, TextMapPropagator};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::peek::Meta;
use crate::transport::Extensions;

/// The W3C trace headers of the HTTP request that carried a message, attached to its
/// [`Extensions`] by the HTTP front end (only when it has a `traceparent`).
#[derive(Debug, Clone, Default)]
pub struct TraceHeaders {
    /// `traceparent`.
    pub traceparent: String,
    /// `tracestate`, if any.
    pub tracestate: Option<String>,
    /// `baggage`, if any.
    pub baggage: Option<String>,
}

fn propagator() -> TextMapCompositePropagator {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
}

/// The three keys, wherever they were read from.
struct Carrier<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
    baggage: Option<&'a str>,
}

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.traceparent,
            "tracestate" => self.tracestate,
            "baggage" => self.baggage,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate", "baggage"]
    }
}

/// Make the remote context in `meta` (else in the HTTP headers) the parent of `span`, and link
/// the context that was current when the message arrived (the HTTP server's span, say), as the
/// convention asks. A missing or malformed `traceparent` leaves `span` a new root.
pub(super) fn adopt_parent(span: &tracing::Span, meta: Option<&Meta<'_>>, extensions: &Extensions) {
    if span.is_disabled() {
        return;
    }
    let carrier = match meta.filter(|m| m.traceparent.is_some()) {
        Some(m) => Carrier {
            traceparent: m.traceparent.as_deref(),
            tracestate: m.tracestate.as_deref(),
            baggage: m.baggage.as_deref(),
        },
        None => match extensions.get::<TraceHeaders>() {
            Some(h) => Carrier {
                traceparent: Some(h.traceparent.as_str()),
                tracestate: h.tracestate.as_deref(),
                baggage: h.baggage.as_deref(),
            },
            None => return,
        },
    };
    let cx = propagator().extract(&carrier);
    let remote = cx.span().span_context().clone();
    if !remote.is_valid() {
        tracing::debug!("ignoring a malformed traceparent: {:?}", carrier.traceparent);
        return;
    }
    let ambient = tracing::Span::current().context().span().span_context().clone();
    let _ = span.set_parent(cx);
    if ambient.is_valid() && ambient.trace_id() != remote.trace_id() {
        span.add_link(ambient);
    }
}

/// `frame` (a serialized request or notification) with `span`'s context in `params._meta`.
/// Keys the caller set in `_meta` itself are kept. Unchanged when the span has no valid
/// context (no OpenTelemetry layer listens).
pub(super) fn inject(span: &tracing::Span, frame: Vec<u8>) -> Vec<u8> {
    if span.is_disabled() {
        return frame;
    }
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return frame;
    }
    let mut fields = Fields(HashMap::new());
    propagator().inject_context(&cx, &mut fields);
    if fields.0.is_empty() {
        return frame;
    }
    let Ok(mut message) = serde_json::from_slice::<Map<String, Value>>(&frame) else {
        return frame;
    };
    let params = message.entry("params").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(params) = params else {
        return frame;
    };
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return frame;
    };
    for (k, v) in fields.0 {
        meta.entry(k).or_insert(Value::String(v));
    }
    serde_json::to_vec(&message).unwrap_or(frame)
}

struct Fields(HashMap<String, String>);

impl Injector for Fields {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
}
