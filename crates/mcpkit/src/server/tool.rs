//! Tools (spec: `server/tools`): plain async functions whose parameters are extractors.
//!
//! ```
//! use mcpkit::server::{Args, RequestContext, ToolDef};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct EchoArgs {
//!     message: String,
//! }
//!
//! let echo = ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.message });
//! let slow = ToolDef::new("slow", |cx: RequestContext, Args(a): Args<EchoArgs>| async move {
//!     cx.progress(1.0, Some(1.0), None);
//!     a.message
//! });
//! assert_eq!(echo.tool().input_schema["required"], serde_json::json!(["message"]));
//! # let _ = slow;
//! ```
//! The input schema comes from the `Args<T>` type (schemars, JSON Schema 2020-12), computed once
//! at registration. A handler returning [`Json<T>`] gets an `outputSchema` and `structuredContent`.

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use mcpkit_types::schema::{
    CallToolResult, ContentBlock, Icon, JsonObject, Meta, TaskSupport, Tool, ToolAnnotations, ToolExecution,
};
use mcpkit_types::ErrorObject;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::value::RawValue;
#[cfg(feature = "validation")]
use serde_json::Value;

use super::context::RequestContext;
use super::extract::{for_each_arity, object_schema, schema_object, sealed, FromRequest, HandlerRequest, Rejection};
use crate::engine::BoxFuture;

/// One `tools/call`, as seen by extractors ([`FromRequest<ToolCall>`]).
#[derive(Debug)]
pub struct ToolCall {
    pub(crate) name: Arc<str>,
    pub(crate) arguments: Option<Box<RawValue>>,
    pub(crate) cx: RequestContext,
}

impl ToolCall {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The raw `arguments` object, if the caller sent one.
    pub fn arguments(&self) -> Option<&RawValue> {
        self.arguments.as_deref()
    }
}

impl sealed::Request for ToolCall {}

impl HandlerRequest for ToolCall {
    fn context(&self) -> &RequestContext {
        &self.cx
    }
}

/// Structured tool output: becomes `structuredContent` (plus a text copy), and its type gives
/// the tool an `outputSchema`.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

/// What a tool handler may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool handler",
    note = "a tool handler returns `String`, `&'static str`, a number or `bool` (as text), `Json<T>` \
            (structured output, for a `T: Serialize + JsonSchema`), `ContentBlock`, `Vec<ContentBlock>`, `CallToolResult`, or a `Result` of one of these \
            whose error implements `Display` (reported as `isError: true`)"
)]
pub trait IntoToolResult: Send + 'static {
    /// Convert to the wire result.
    fn into_tool_result(self) -> CallToolResult;
    /// The output schema implied by the return type, if any.
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

/// Numbers and booleans: their text (`structuredContent` must be an object; wrap one in a
/// struct and return `Json<T>` for structured output).
macro_rules! impl_tool_result_as_text {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> CallToolResult {
                CallToolResult::text(self.to_string())
            }
        }
    )*};
}
impl_tool_result_as_text!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool);

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::success(self)
    }
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(v) => CallToolResult::structured(v),
            Err(e) => CallToolResult::error_text(format!("could not serialize the tool's output: {e}")),
        }
    }
    fn output_schema() -> Option<JsonObject> {
        Some(schema_object::<T>())
    }
}

/// An `Err` becomes a tool execution error (`isError: true`) carrying its message.
impl<T: IntoToolResult, E: Display + Send + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => CallToolResult::error_text(e.to_string()),
        }
    }
    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}

pub(crate) type ErasedTool = Arc<dyn Fn(ToolCall) -> BoxFuture<Result<CallToolResult, ErrorObject>> + Send + Sync>;

/// An async function usable as a tool handler: up to six [`FromRequest`] parameters in any
/// order, returning an [`IntoToolResult`]. Implemented for such functions only (sealed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool handler",
    label = "not a tool handler",
    note = "a tool handler is an async fn or closure taking up to six extractors in any order \
            (`Args<T>`, `RawArgs`, `RequestContext`, `State<S>`, `CancellationToken`) and returning \
            something that implements `IntoToolResult` (`String`, `Json<T>`, `CallToolResult`, \
            `Vec<ContentBlock>`, `Result<_, impl Display>`, ...)"
)]
pub trait ToolHandler<T>: sealed::Handler<T> + Clone + Send + Sync + 'static {
    /// Run the handler on a call.
    fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, ErrorObject>>;
    /// The input schema implied by the parameters.
    fn input_schema() -> JsonObject;
    /// The output schema implied by the return type.
    fn output_schema() -> Option<JsonObject>;
}

fn reject(r: Rejection) -> Result<CallToolResult, ErrorObject> {
    match r {
        Rejection::InvalidArguments(m) => Ok(CallToolResult::error_text(m)),
        Rejection::Protocol(e) => Err(e),
    }
}

macro_rules! impl_tool_handler {
    ($($t:ident),*) => {
        impl<F, Fut, $($t,)*> ToolHandler<($($t,)*)> for F
        where
            F: Fn($($t),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: IntoToolResult,
            $($t: FromRequest<ToolCall>,)*
        {
            #[allow(non_snake_case)]
            fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, ErrorObject>> {
                let ($($t,)*) = match <($($t,)*) as FromRequest<ToolCall>>::from_request(&call) {
                    Ok(extracted) => extracted,
                    Err(r) => return Box::pin(std::future::ready(reject(r))),
                };
                let fut = (self)($($t),*);
                Box::pin(async move { Ok(fut.await.into_tool_result()) })
            }
            fn input_schema() -> JsonObject {
                <($($t,)*) as FromRequest<ToolCall>>::arguments_schema().unwrap_or_else(object_schema)
            }
            fn output_schema() -> Option<JsonObject> {
                <Fut::Output as IntoToolResult>::output_schema()
            }
        }
    };
}
for_each_arity!(impl_tool_handler);

/// A tool: its description and its handler.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: ErasedTool,
    #[cfg(feature = "validation")]
    pub(crate) validator: Option<Arc<jsonschema::Validator>>,
    /// Tasks extension: the call becomes a task only when the handler detaches.
    pub(crate) task_at_detach: bool,
    /// Switchable at run time ([`Server::set_tool_enabled`](super::Server::set_tool_enabled)):
    /// whether it is on until switched (`None`: always on).
    pub(crate) switch: Option<bool>,
    /// Who sees and calls it (scopes, tags, hidden).
    pub(crate) guard: super::access::Guard,
    /// What it needs of the rest of the server (an MCP App tool: its view, the extension).
    pub(crate) needs: super::registrations::Needs,
    /// What brought it when it came with others (a mount's prefix, an upstream's name).
    pub(crate) source: Option<Arc<str>>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// A tool named `name` served by `handler`; schemas are derived from its types.
    pub fn new<H: ToolHandler<T>, T>(name: impl Into<String>, handler: H) -> Self {
        let mut tool = Tool::new(name, H::input_schema());
        tool.output_schema = H::output_schema();
        ToolDef::served_by(tool, Arc::new(move |call| handler.call(call)))
    }

    /// `tool` served by `handler`, every option at its default (a composed server's
    /// forwarding tools are made this way too).
    pub(crate) fn served_by(tool: Tool, handler: ErasedTool) -> Self {
        ToolDef {
            tool,
            handler,
            #[cfg(feature = "validation")]
            validator: None,
            task_at_detach: false,
            switch: None,
            guard: Default::default(),
            needs: Default::default(),
            source: None,
        }
    }

    /// Declare the tool switchable at run time, on until switched off with
    /// [`Server::set_tool_enabled`](super::Server::set_tool_enabled). A switched-off tool is
    /// neither listed nor callable; instances sharing backends share the switch.
    pub fn switchable(mut self) -> Self {
        self.switch = Some(true);
        self
    }

    /// Declare the tool switchable at run time and off until switched on with
    /// [`Server::set_tool_enabled`](super::Server::set_tool_enabled) (see
    /// [`ToolDef::switchable`]).
    pub fn switched_off(mut self) -> Self {
        self.switch = Some(false);
        self
    }

    /// Human-readable description (shown to the model).
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.tool.description = Some(d.into());
        self
    }

    /// Display title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.tool.title = Some(t.into());
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, a: ToolAnnotations) -> Self {
        self.tool.annotations = Some(a);
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Its `_meta`: metadata for hosts under namespaced keys (e.g. an MCP App's `ui`, or a
    /// vendor's `com.example/…`), sent with the definition in every list. Replaces earlier
    /// `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Whether the tool may run as a task (Tasks extension, SEP-2663; shown to clients as
    /// `execution.taskSupport`). `Optional`: a client that declares the extension gets a task
    /// handle, any other the result. `Required`: a client that does not declare it is refused
    /// with -32021. Needs the extension ([`Tasks`](super::extensions::tasks::Tasks)).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.tool.execution = Some(ToolExecution {
            task_support: Some(support),
        });
        self
    }

    /// With [`ToolDef::task_support`]: the call runs as an ordinary request (its input rounds
    /// on the stateless wire included) until the handler calls
    /// [`RequestContext::detach`]; the client then gets the task handle and the rest of the
    /// handler runs as the task (SEP-2663: input gathered first, then the task). Input asked
    /// for after detaching fails the task.
    pub fn task_at_detach(mut self) -> Self {
        self.task_at_detach = true;
        self
    }

    /// Replace the derived input schema with a hand-written one (kept verbatim).
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// Set or replace the output schema.
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.tool.output_schema = Some(schema);
        self
    }

    /// Validate arguments against the input schema before the handler runs (compiled once, here).
    /// Arguments that fail are answered with a tool execution error naming the problem.
    #[cfg(feature = "validation")]
    pub fn validate_input(mut self) -> Self {
        let schema = Value::Object(self.tool.input_schema.clone());
        match jsonschema::validator_for(&schema) {
            Ok(v) => self.validator = Some(Arc::new(v)),
            Err(e) => tracing::warn!(
                "tool {}: input schema does not compile, not validating: {e}",
                self.tool.name
            ),
        }
        self
    }

    /// The wire description of the tool.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// Without the `validation` feature no tool has a validator: nothing to check.
    #[cfg(not(feature = "validation"))]
    pub(crate) fn check_arguments(&self, _args: Option<&RawValue>) -> Option<CallToolResult> {
        None
    }

    #[cfg(feature = "validation")]
    pub(crate) fn check_arguments(&self, args: Option<&RawValue>) -> Option<CallToolResult> {
        let validator = self.validator.as_ref()?;
        let value: Value = match args {
            Some(raw) => match serde_json::from_str(raw.get()) {
                Ok(v) => v,
                Err(e) => return Some(CallToolResult::error_text(format!("Invalid arguments: {e}"))),
            },
            None => Value::Object(JsonObject::new()),
        };
        let errors: Vec<String> = validator.iter_errors(&value).take(5).map(|e| e.to_string()).collect();
        if errors.is_empty() {
            None
        } else {
            Some(CallToolResult::error_text(format!(
                "Invalid arguments for tool {}: {}",
                self.tool.name,
                errors.join("; ")
            )))
        }
    }
}
