//! The two spans of the convention: [`Inbound`] (kind `SERVER`: what the other side sent, on
//! either role) and [`Outbound`] (kind `CLIENT`: what this side sends), each with its
//! operation-duration metric. The engine makes one per message; with no subscriber interested
//! and no metrics, making one costs the span's interest check and returns `None`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use mcpkit_types::method::NotificationMethod;
use mcpkit_types::method::{CallTool, GetPrompt, Method, ReadResource, ResourceUpdated, Subscribe, Unsubscribe};
use mcpkit_types::{ErrorObject, ProtocolVersion, RequestId};
use serde_json::value::RawValue;
use tracing::field::Empty;

use super::labels::{self, EXECUTE_TOOL, TOOL_ERROR};
use super::peek::{self, Params};
use super::{Scope, SPAN_TARGET};
use crate::transport::Extensions;

/// A handler's future as the engine runs it (the engine's `BoxFuture`, spelled out here:
/// telemetry sits below the engine and names none of its types).
type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a span names beside the method: a tool or a prompt (in the span name and, once the
/// server found it, as a metric label).
#[derive(Debug)]
enum Target {
    None,
    Tool(String),
    Prompt(String),
}

/// How a message's handling ended, as the span and the metric record it.
pub(crate) enum Ending<'a> {
    /// A result (for `tools/call`, maybe one with `isError: true`).
    Result(&'a RawValue),
    /// A JSON-RPC error.
    Error(&'a ErrorObject),
    /// A notification, handled or sent.
    Done,
    /// No answer: a local failure (`timeout`, `connection_closed`, …).
    Failed(&'static str),
}

/// State shared by both span kinds.
#[cfg_attr(not(feature = "otel"), allow(dead_code, reason = "read by the metrics"))]
struct Common {
    span: tracing::Span,
    scope: Arc<Scope>,
    start: Instant,
    method: &'static str,
    target: Target,
    /// The stateless-era version from `_meta`, when the connection has none negotiated.
    meta_version: Option<ProtocolVersion>,
    done: bool,
}

impl Common {
    /// Read what the span and metric need from `params`, and fill in the span's attributes.
    fn new(
        span: tracing::Span,
        scope: &Arc<Scope>,
        method: &str,
        id: Option<&RequestId>,
        params: &Params<'_>,
    ) -> Common {
        let target = match method {
            CallTool::NAME => params
                .name
                .as_deref()
                .map_or(Target::None, |n| Target::Tool(n.to_owned())),
            GetPrompt::NAME => params
                .name
                .as_deref()
                .map_or(Target::None, |n| Target::Prompt(n.to_owned())),
            _ => Target::None,
        };
        let meta_version = params
            .meta
            .as_ref()
            .and_then(|m| m.protocol_version.as_deref())
            .and_then(|v| v.parse::<ProtocolVersion>().ok());
        if !span.is_disabled() {
            match &target {
                Target::Tool(name) => {
                    span.record("otel.name", format!("{method} {name}"));
                    span.record(labels::TOOL, name.as_str());
                    span.record(labels::OPERATION, EXECUTE_TOOL);
                }
                Target::Prompt(name) => {
                    span.record("otel.name", format!("{method} {name}"));
                    span.record(labels::PROMPT, name.as_str());
                }
                Target::None => {
                    span.record("otel.name", method);
                }
            }
            if let Some(id) = id {
                match id {
                    RequestId::Number(n) => span.record(labels::REQUEST_ID, n.to_string()),
                    RequestId::String(s) => span.record(labels::REQUEST_ID, &**s),
                };
            }
            if matches!(
                method,
                ReadResource::NAME | Subscribe::NAME | Unsubscribe::NAME | ResourceUpdated::NAME
            ) {
                if let Some(uri) = params.uri.as_deref() {
                    span.record(labels::RESOURCE_URI, uri);
                }
            }
            if let Some(sid) = scope.session_id() {
                span.record(labels::SESSION_ID, sid);
            }
            if let Some(transport) = scope.transport() {
                span.record(labels::TRANSPORT, transport.as_str());
                if transport == super::NetworkTransport::Tcp {
                    span.record(labels::PROTOCOL_NAME, "http");
                }
            }
        }
        Common {
            span,
            scope: scope.clone(),
            start: Instant::now(),
            method: labels::method(method),
            target,
            meta_version,
            done: false,
        }
    }

    /// Record the ending on the span; return the bounded `error.type` and status code, and
    /// whether the peer found what was named (so its name may be a label).
    fn end(&mut self, ending: &Ending<'_>) -> Outcome {
        self.done = true;
        let version = self.scope.version().or(self.meta_version);
        let outcome = match ending {
            Ending::Result(raw) if matches!(self.target, Target::Tool(_)) && peek::is_tool_error(raw) => Outcome {
                error_type: Some(TOOL_ERROR),
                status_code: None,
                found: true,
                version,
            },
            Ending::Result(_) | Ending::Done => Outcome {
                error_type: None,
                status_code: None,
                found: true,
                version,
            },
            Ending::Error(e) => {
                let code = labels::error_code(e.code);
                Outcome {
                    error_type: Some(code),
                    status_code: Some(code),
                    found: false,
                    version,
                }
            }
            Ending::Failed(why) => Outcome {
                error_type: Some(why),
                status_code: None,
                found: false,
                version,
            },
        };
        let span = &self.span;
        if !span.is_disabled() {
            if let Some(v) = version {
                span.record(labels::PROTOCOL_VERSION, v.as_str());
            }
            if let Some(t) = outcome.error_type {
                span.record(labels::ERROR_TYPE, t);
                span.record("otel.status_code", "ERROR");
            }
            if let Some(c) = outcome.status_code {
                span.record(labels::STATUS_CODE, c);
            }
            if let Ending::Error(e) = ending {
                span.record("otel.status_description", e.message.as_str());
            }
        }
        outcome
    }

    /// The metric labels of this operation: every value from a bounded set.
    #[cfg(feature = "otel")]
    fn labels(&self, outcome: &Outcome) -> Vec<opentelemetry::KeyValue> {
        use opentelemetry::KeyValue;
        let mut kv = Vec::with_capacity(8);
        kv.push(KeyValue::new(labels::METHOD, self.method));
        if let Some(t) = outcome.error_type {
            kv.push(KeyValue::new(labels::ERROR_TYPE, t));
        }
        if let Some(c) = outcome.status_code {
            kv.push(KeyValue::new(labels::STATUS_CODE, c));
        }
        // A name the peer did not find is client input, not a catalogue entry: no label.
        match (&self.target, outcome.found) {
            (Target::Tool(name), true) => {
                kv.push(KeyValue::new(labels::TOOL, name.clone()));
                kv.push(KeyValue::new(labels::OPERATION, EXECUTE_TOOL));
            }
            (Target::Tool(_), false) => kv.push(KeyValue::new(labels::OPERATION, EXECUTE_TOOL)),
            (Target::Prompt(name), true) => kv.push(KeyValue::new(labels::PROMPT, name.clone())),
            _ => {}
        }
        if let Some(v) = outcome.version {
            kv.push(KeyValue::new(labels::PROTOCOL_VERSION, v.as_str()));
        }
        if let Some(transport) = self.scope.transport() {
            kv.push(KeyValue::new(labels::TRANSPORT, transport.as_str()));
            if transport == super::NetworkTransport::Tcp {
                kv.push(KeyValue::new(labels::PROTOCOL_NAME, "http"));
            }
        }
        kv.extend(self.scope.telemetry.labels.iter().cloned());
        kv
    }
}

/// How one operation ended, in label values.
#[cfg_attr(not(feature = "otel"), allow(dead_code, reason = "read by the metrics"))]
struct Outcome {
    error_type: Option<&'static str>,
    status_code: Option<&'static str>,
    found: bool,
    version: Option<ProtocolVersion>,
}

/// The `SERVER` span of a request or notification the other side sent, and its
/// `mcp.server.operation.duration`.
pub(crate) struct Inbound {
    common: Common,
    request: bool,
}

impl Inbound {
    /// The span of an incoming request or notification (`id` is `None`), or `None` when
    /// nothing listens: no subscriber for mcpkit's spans and no metrics.
    pub(crate) fn start(
        scope: &Arc<Scope>,
        method: &str,
        id: Option<&RequestId>,
        params: Option<&RawValue>,
        extensions: &Extensions,
    ) -> Option<Inbound> {
        let span = tracing::info_span!(
            target: SPAN_TARGET,
            "mcp.server",
            otel.name = Empty,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            mcp.resource.uri = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            gen_ai.operation.name = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        if span.is_disabled() && !scope.records_metrics() {
            return None;
        }
        let params = Params::of(params);
        #[cfg(feature = "otel")]
        super::context::adopt_parent(&span, params.meta.as_ref(), extensions);
        #[cfg(not(feature = "otel"))]
        let _ = extensions;
        let common = Common::new(span, scope, method, id, &params);
        #[cfg(feature = "otel")]
        if let (Some(i), true) = (&scope.telemetry.instruments, id.is_some()) {
            i.request_active(1, common.method, &scope.telemetry.labels);
        }
        Some(Inbound {
            common,
            request: id.is_some(),
        })
    }

    /// The span, to enter while the handler's synchronous part runs.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.common.span
    }

    /// `fut` inside this span, recording how it ended (a result, an error, or, when dropped
    /// unfinished, `cancelled`).
    pub(crate) fn wrap_request(
        mut self,
        fut: Boxed<Result<Box<RawValue>, ErrorObject>>,
    ) -> Boxed<Result<Box<RawValue>, ErrorObject>> {
        use tracing::Instrument as _;
        let span = self.common.span.clone();
        Box::pin(async move {
            let r = fut.instrument(span).await;
            match &r {
                Ok(raw) => self.finish(&Ending::Result(raw)),
                Err(e) => self.finish(&Ending::Error(e)),
            }
            r
        })
    }

    /// `fut` inside this span, recorded when it completes.
    pub(crate) fn wrap_notification(mut self, fut: Boxed<()>) -> Boxed<()> {
        use tracing::Instrument as _;
        let span = self.common.span.clone();
        Box::pin(async move {
            fut.instrument(span).await;
            self.finish(&Ending::Done);
        })
    }

    /// A notification the engine handled itself, on the spot.
    pub(crate) fn handled(mut self) {
        self.finish(&Ending::Done);
    }

    fn finish(&mut self, ending: &Ending<'_>) {
        let outcome = self.common.end(ending);
        #[cfg(feature = "otel")]
        if let Some(i) = &self.common.scope.telemetry.instruments {
            let elapsed = self.common.start.elapsed().as_secs_f64();
            i.server_operation.record(elapsed, &self.common.labels(&outcome));
            if self.request {
                i.request_active(-1, self.common.method, &self.common.scope.telemetry.labels);
            }
        }
        #[cfg(not(feature = "otel"))]
        let _ = (outcome, self.request);
    }
}

impl Drop for Inbound {
    fn drop(&mut self) {
        if !self.common.done {
            // Dropped unfinished: the request was cancelled, or its handler panicked (then the
            // reply is an internal error).
            let why = if std::thread::panicking() {
                "-32603"
            } else {
                "cancelled"
            };
            self.finish(&Ending::Failed(why));
        }
    }
}

/// The `CLIENT` span of a request or notification this side sends, and its
/// `mcp.client.operation.duration`. Its context goes into the message's `params._meta`.
pub(crate) struct Outbound {
    common: Common,
}

impl Outbound {
    /// The span of an outgoing message (`frame`, already serialized), or `None` when nothing
    /// listens. Its parent is the current span: inside a handler, the request it serves.
    pub(crate) fn start(scope: &Arc<Scope>, method: &str, id: Option<&RequestId>, frame: &[u8]) -> Option<Outbound> {
        let span = tracing::info_span!(
            target: SPAN_TARGET,
            "mcp.client",
            otel.name = Empty,
            otel.kind = "client",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            mcp.resource.uri = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            gen_ai.operation.name = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        if span.is_disabled() && !scope.records_metrics() {
            return None;
        }
        let params = Params::of_frame(frame);
        let common = Common::new(span, scope, method, id, &params);
        Some(Outbound { common })
    }

    /// `frame` with this span's trace context in `params._meta` (unchanged when there is no
    /// context to carry: no OpenTelemetry layer, or feature `otel` off).
    pub(crate) fn inject(&self, frame: Vec<u8>) -> Vec<u8> {
        #[cfg(feature = "otel")]
        return super::context::inject(&self.common.span, frame);
        #[cfg(not(feature = "otel"))]
        frame
    }

    /// Record how the message ended.
    pub(crate) fn finish(mut self, ending: &Ending<'_>) {
        let outcome = self.common.end(ending);
        #[cfg(feature = "otel")]
        if let Some(i) = &self.common.scope.telemetry.instruments {
            let elapsed = self.common.start.elapsed().as_secs_f64();
            i.client_operation.record(elapsed, &self.common.labels(&outcome));
        }
        #[cfg(not(feature = "otel"))]
        let _ = outcome;
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        if !self.common.done {
            // The caller dropped the request before its answer (a cancellation was sent).
            let outcome = self.common.end(&Ending::Failed("cancelled"));
            #[cfg(feature = "otel")]
            if let Some(i) = &self.common.scope.telemetry.instruments {
                let elapsed = self.common.start.elapsed().as_secs_f64();
                i.client_operation.record(elapsed, &self.common.labels(&outcome));
            }
            #[cfg(not(feature = "otel"))]
            let _ = outcome;
        }
    }
}
