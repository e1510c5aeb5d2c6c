//! An OTLP/HTTP receiver for tests: `POST /v1/traces` and `POST /v1/metrics` with protobuf
//! bodies, decoded with the official `opentelemetry-proto` message types, kept for the test to
//! look at. No collector on the package registries this project installs from fits (they ship
//! as release binaries), so the test receives OTLP itself, over real HTTP on 127.0.0.1.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use prost::Message as _;

/// One received span, flattened: its service, ids, name, kind and string/int attributes.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// `service.name` of the resource that sent it.
    pub service: String,
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
    /// 16 hex digits, empty for a root.
    pub parent_span_id: String,
    /// The span name.
    pub name: String,
    /// `SPAN_KIND_SERVER`, `SPAN_KIND_CLIENT`, …
    pub kind: String,
    /// `STATUS_CODE_ERROR`, … (empty when unset).
    pub status: String,
    /// Attributes, every value as text.
    pub attributes: HashMap<String, String>,
    /// Trace ids of the span's links.
    pub links: Vec<String>,
}

impl ReceivedSpan {
    /// The attribute `key`, if set.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    metric_names: Vec<String>,
}

/// A running receiver; stops when dropped.
pub struct OtlpReceiver {
    /// `http://127.0.0.1:PORT`: the base URL an exporter's endpoint is set to.
    pub endpoint: String,
    received: Arc<Mutex<Received>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(kv: &KeyValue) -> String {
    match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

async fn traces(State(r): State<Arc<Mutex<Received>>>, body: Bytes) -> impl IntoResponse {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new()).into_response();
    };
    let mut got = Vec::new();
    for rs in req.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|res| res.attributes.iter().find(|kv| kv.key == "service.name"))
            .map(text)
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                got.push(ReceivedSpan {
                    service: service.clone(),
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    kind: format!("{:?}", s.kind()),
                    status: s
                        .status
                        .as_ref()
                        .map(|st| format!("{:?}", st.code()))
                        .unwrap_or_default(),
                    attributes: s.attributes.iter().map(|kv| (kv.key.clone(), text(kv))).collect(),
                    links: s.links.iter().map(|l| hex(&l.trace_id)).collect(),
                    name: s.name,
                });
            }
        }
    }
    r.lock().unwrap().spans.extend(got);
    let body = ExportTraceServiceResponse::default().encode_to_vec();
    ([(header::CONTENT_TYPE, "application/x-protobuf")], body).into_response()
}

async fn metrics(State(r): State<Arc<Mutex<Received>>>, body: Bytes) -> impl IntoResponse {
    let Ok(req) = ExportMetricsServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new()).into_response();
    };
    let names = req
        .resource_metrics
        .iter()
        .flat_map(|rm| rm.scope_metrics.iter())
        .flat_map(|sm| sm.metrics.iter())
        .map(|m| m.name.clone());
    r.lock().unwrap().metric_names.extend(names);
    let body = ExportMetricsServiceResponse::default().encode_to_vec();
    ([(header::CONTENT_TYPE, "application/x-protobuf")], body).into_response()
}

impl OtlpReceiver {
    /// Listen on a free port of 127.0.0.1.
    pub async fn start() -> OtlpReceiver {
        let received = Arc::new(Mutex::new(Received::default()));
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .route("/v1/metrics", post(metrics))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OtlpReceiver {
            endpoint,
            received,
            task,
        }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.received.lock().unwrap().spans.clone()
    }

    /// The names of every metric received so far.
    pub fn metric_names(&self) -> Vec<String> {
        self.received.lock().unwrap().metric_names.clone()
    }

    /// Wait (up to 20 s) until `done` holds for the spans received.
    pub async fn wait_for(&self, what: &str, done: impl Fn(&[ReceivedSpan]) -> bool) -> Vec<ReceivedSpan> {
        for _ in 0..200 {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the OTLP receiver never got {what}; it got: {:#?}", self.spans());
    }
}
