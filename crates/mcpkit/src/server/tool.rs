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
//!     let _ = cx.progress(1.0, Some(1.0), None);
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

use mcpkit_types::schema::{CallToolResult, ContentBlock, Icon, JsonObject, Tool, ToolAnnotations};
use mcpkit_types::ErrorObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::RequestContext;
use crate::engine::BoxFuture;

/// One `tools/call`, as seen by extractors.
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
    /// The request context.
    pub fn context(&self) -> &RequestContext {
        &self.cx
    }
}

/// Why an extractor refused a call.
#[derive(Debug)]
pub enum Rejection {
    /// The arguments did not fit: reported as a tool execution error (`isError: true`), as
    /// 2025-11-25 asks, so the model can correct itself.
    InvalidArguments(String),
    /// A protocol error.
    Protocol(ErrorObject),
}

/// Something a tool handler can take as a parameter.
pub trait FromToolCall: Sized + Send + 'static {
    /// Extract from the call.
    fn from_tool_call(call: &ToolCall) -> Result<Self, Rejection>;
    /// The input schema this extractor implies, if any.
    fn input_schema() -> Option<JsonObject> {
        None
    }
}

/// Typed tool arguments, deserialized from `arguments` (absent arguments read as `{}`).
#[derive(Debug, Clone)]
pub struct Args<T>(pub T);

/// The schema of a type as a JSON object (draft 2020-12), for `inputSchema`/`outputSchema`.
pub fn schema_object<T: JsonSchema>() -> JsonObject {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    match schema.to_value() {
        Value::Object(mut m) => {
            // The Rust type's name means nothing to the model.
            m.remove("title");
            if !m.contains_key("type") {
                m.insert("type".into(), Value::String("object".into()));
            }
            m
        }
        _ => object_schema(),
    }
}

/// `{"type":"object"}`: the schema of a tool without arguments.
pub fn object_schema() -> JsonObject {
    let mut m = JsonObject::new();
    m.insert("type".into(), Value::String("object".into()));
    m
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromToolCall for Args<T> {
    fn from_tool_call(call: &ToolCall) -> Result<Self, Rejection> {
        let raw = call.arguments.as_deref().map_or("{}", RawValue::get);
        crate::wire::decode_with_path(raw).map(Args).map_err(|(path, e)| {
            // Name the offending argument: "expected a string" alone does not say which one.
            let at = if path == "." {
                String::new()
            } else {
                format!(" at `{path}`")
            };
            Rejection::InvalidArguments(format!("Invalid arguments for tool {}{at}: {e}", call.name))
        })
    }
    fn input_schema() -> Option<JsonObject> {
        Some(schema_object::<T>())
    }
}

impl FromToolCall for RequestContext {
    fn from_tool_call(call: &ToolCall) -> Result<Self, Rejection> {
        Ok(call.cx.clone())
    }
}

impl FromToolCall for CancellationToken {
    fn from_tool_call(call: &ToolCall) -> Result<Self, Rejection> {
        Ok(call.cx.cancel.clone())
    }
}

/// The raw arguments as a JSON object (for tools with a hand-written schema).
#[derive(Debug, Clone, Default)]
pub struct RawArgs(pub JsonObject);

impl FromToolCall for RawArgs {
    fn from_tool_call(call: &ToolCall) -> Result<Self, Rejection> {
        let raw = call.arguments.as_deref().map_or("{}", RawValue::get);
        serde_json::from_str(raw)
            .map(RawArgs)
            .map_err(|e| Rejection::InvalidArguments(format!("Invalid arguments for tool {}: {e}", call.name)))
    }
}

/// Shared state registered with [`ServerBuilder::state`](super::ServerBuilder::state).
#[derive(Debug)]
pub struct State<T>(pub Arc<T>);

impl<T: Send + Sync + 'static> FromToolCall for State<T> {
    fn from_tool_call(call: &ToolCall) -> Result<Self, Rejection> {
        call.cx.state::<T>().map(State).ok_or_else(|| {
            Rejection::Protocol(ErrorObject::internal(format!(
                "no state of type {} was registered",
                std::any::type_name::<T>()
            )))
        })
    }
}

/// Structured tool output: becomes `structuredContent` (plus a text copy), and its type gives
/// the tool an `outputSchema`.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

/// What a tool handler may return.
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

/// An async function usable as a tool handler: any arity up to six of [`FromToolCall`]
/// parameters, returning an [`IntoToolResult`].
pub trait ToolHandler<T>: Clone + Send + Sync + 'static {
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
        #[allow(non_snake_case, unused_variables, unused_mut)]
        impl<F, Fut, R, $($t,)*> ToolHandler<($($t,)*)> for F
        where
            F: Fn($($t),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = R> + Send + 'static,
            R: IntoToolResult,
            $($t: FromToolCall,)*
        {
            fn call(&self, call: ToolCall) -> BoxFuture<Result<CallToolResult, ErrorObject>> {
                $(
                    let $t = match $t::from_tool_call(&call) {
                        Ok(v) => v,
                        Err(r) => return Box::pin(std::future::ready(reject(r))),
                    };
                )*
                let fut = (self)($($t),*);
                Box::pin(async move { Ok(fut.await.into_tool_result()) })
            }
            fn input_schema() -> JsonObject {
                let mut schema = None;
                $( if schema.is_none() { schema = $t::input_schema(); } )*
                schema.unwrap_or_else(object_schema)
            }
            fn output_schema() -> Option<JsonObject> {
                R::output_schema()
            }
        }
    };
}

impl_tool_handler!();
impl_tool_handler!(T1);
impl_tool_handler!(T1, T2);
impl_tool_handler!(T1, T2, T3);
impl_tool_handler!(T1, T2, T3, T4);
impl_tool_handler!(T1, T2, T3, T4, T5);
impl_tool_handler!(T1, T2, T3, T4, T5, T6);

/// A tool: its description and its handler.
#[derive(Clone)]
pub struct ToolDef {
    pub(crate) tool: Tool,
    pub(crate) handler: ErasedTool,
    pub(crate) validator: Option<Arc<jsonschema::Validator>>,
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
        let handler: ErasedTool = Arc::new(move |call| handler.call(call));
        ToolDef {
            tool,
            handler,
            validator: None,
        }
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
