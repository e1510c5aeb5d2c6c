//! Extractors: what a tool, prompt or resource handler takes as parameters.
//!
//! Every catalogue item is served by an async function whose parameters are extractors, in any
//! order, up to six of them. The same extractors work for all three kinds of request:
//!
//! | extractor | tool (`tools/call`) | prompt (`prompts/get`) | resource (`resources/read`) |
//! | --- | --- | --- | --- |
//! | [`Args<T>`] | `arguments`; gives `inputSchema` | `arguments`; gives the argument list | template variables |
//! | [`RawArgs`] | `arguments` as an object | `arguments` as an object of strings | variables as an object of strings |
//! | [`RequestContext`] | ✓ | ✓ | ✓ |
//! | [`State<S>`] | ✓ | ✓ | ✓ |
//! | [`CancellationToken`] | ✓ | ✓ | ✓ |
//! | [`Uri`] | | | the URI read |
//!
//! Write your own by implementing [`FromRequest`] for the requests it applies to
//! ([`ToolCall`](super::ToolCall), [`PromptRequest`](super::PromptRequest),
//! [`ResourceRequest`](super::ResourceRequest), or any [`HandlerRequest`]).

use std::collections::BTreeMap;

use mcpkit_types::schema::JsonObject;
use mcpkit_types::ErrorObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::context::RequestContext;
use super::prompt::PromptRequest;
use super::resource::ResourceRequest;
use super::tool::ToolCall;

mod argument_error;
mod strings;
pub(super) use argument_error::resolve as resolve_schema;

/// Why an extractor refused a request.
#[derive(Debug)]
pub enum Rejection {
    /// The arguments did not fit. A tool reports it as a tool execution error (`isError: true`,
    /// as 2025-11-25 asks, so the model can correct itself); a prompt or a resource answers
    /// with invalid params (-32602).
    InvalidArguments(String),
    /// A protocol error.
    Protocol(ErrorObject),
}

impl Rejection {
    /// The error of a prompt or resource request whose extractor refused: invalid arguments
    /// are invalid params (-32602).
    pub(crate) fn into_error(self) -> ErrorObject {
        match self {
            Rejection::InvalidArguments(m) => ErrorObject::invalid_params(m),
            Rejection::Protocol(e) => e,
        }
    }
}

/// One request to a catalogue item (a `tools/call`, `prompts/get` or `resources/read`), as
/// extractors see it. Implemented by [`ToolCall`](super::ToolCall),
/// [`PromptRequest`](super::PromptRequest) and [`ResourceRequest`](super::ResourceRequest) only.
pub trait HandlerRequest: sealed::Request + Send + Sync + 'static {
    /// The request context.
    fn context(&self) -> &RequestContext;
}

/// Something a handler can take as a parameter, extracted from a request of type `R`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be extracted from a `{R}`",
    note = "handler parameters are extractors: `Args<T>`, `RawArgs`, `RequestContext`, `State<S>` \
            (S: Clone), `CancellationToken`, and for resources `Uri`"
)]
pub trait FromRequest<R>: Sized + Send + 'static {
    /// Extract from the request.
    fn from_request(request: &R) -> Result<Self, Rejection>;
    /// The schema of the arguments this extractor reads, if it reads them: a tool's
    /// `inputSchema`, a prompt's argument list. Computed once, at registration.
    fn arguments_schema() -> Option<JsonObject> {
        None
    }
}

/// Typed arguments: a tool's `arguments`, a prompt's `arguments` (strings), or the variables a
/// resource template matched. Absent arguments read as `{}`.
///
/// `T`'s schema (schemars) becomes the tool's `inputSchema`, or the prompt's `arguments` list:
/// each property is an argument, its doc comment the description, `required` from the schema.
#[derive(Debug, Clone)]
pub struct Args<T>(pub T);

/// The arguments as a JSON object, unchecked (for a tool with a hand-written schema, or a
/// prompt declared with [`PromptDef::argument`](super::PromptDef::argument)). For prompts and
/// resource templates every value is a string.
#[derive(Debug, Clone, Default)]
pub struct RawArgs(pub JsonObject);

/// Shared state registered with [`ServerBuilder::state`](super::ServerBuilder::state): a clone of
/// it. Register an `Arc<T>` (and take `State<Arc<T>>`) for state the handlers share.
#[derive(Debug, Clone, Copy, Default)]
pub struct State<S>(pub S);

/// The URI a `resources/read` asked for (for a template: the URI that matched it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri(pub String);

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

/// `message` naming where in the arguments decoding failed ("expected a string" alone does not
/// say which one).
fn invalid(what: &str, path: &str, e: impl std::fmt::Display) -> Rejection {
    let at = if path == "." {
        String::new()
    } else {
        format!(" at `{path}`")
    };
    Rejection::InvalidArguments(format!("Invalid arguments for {what}{at}: {e}"))
}

/// Decode `T` from string-valued arguments (prompt arguments, template variables): a field of
/// another type than a string is parsed from its value (`id: i64` from `"42"`), and a value that
/// does not parse is an error naming the field and the type it should have been.
fn from_strings<T: DeserializeOwned>(
    what: impl FnOnce() -> String,
    values: &BTreeMap<String, String>,
) -> Result<T, Rejection> {
    serde_path_to_error::deserialize(strings::deserializer(values))
        .map_err(|e| invalid(&what(), &e.path().to_string(), e.into_inner()))
}

fn strings_object(values: &BTreeMap<String, String>) -> JsonObject {
    values
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect()
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromRequest<ToolCall> for Args<T> {
    fn from_request(call: &ToolCall) -> Result<Self, Rejection> {
        let raw = call.arguments().map_or("{}", RawValue::get);
        // The plain decoder first: tracking the path costs on every field, and only a
        // failure needs it.
        if let Ok(args) = serde_json::from_str(raw) {
            return Ok(Args(args));
        }
        let what = format!("tool {}", call.name());
        let de = &mut serde_json::Deserializer::from_str(raw);
        let e = match serde_path_to_error::deserialize(de) {
            Ok(args) => return Ok(Args(args)),
            Err(e) => e,
        };
        // In the input schema's words when it can say what is wrong, else in serde's.
        let explained = serde_json::from_str::<Value>(raw)
            .ok()
            .and_then(|value| argument_error::explain(&schema_object::<T>(), &value, e.path()));
        Err(match explained {
            Some(message) => Rejection::InvalidArguments(format!("Invalid arguments for {what}: {message}")),
            None => invalid(&what, &e.path().to_string(), e.into_inner()),
        })
    }
    fn arguments_schema() -> Option<JsonObject> {
        Some(schema_object::<T>())
    }
}

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromRequest<PromptRequest> for Args<T> {
    fn from_request(request: &PromptRequest) -> Result<Self, Rejection> {
        from_strings(|| format!("prompt {}", request.name()), request.arguments()).map(Args)
    }
    fn arguments_schema() -> Option<JsonObject> {
        Some(schema_object::<T>())
    }
}

impl<T: DeserializeOwned + Send + 'static> FromRequest<ResourceRequest> for Args<T> {
    fn from_request(request: &ResourceRequest) -> Result<Self, Rejection> {
        from_strings(|| format!("resource {}", request.uri()), request.variables()).map(Args)
    }
}

impl FromRequest<ToolCall> for RawArgs {
    fn from_request(call: &ToolCall) -> Result<Self, Rejection> {
        let raw = call.arguments().map_or("{}", RawValue::get);
        serde_json::from_str(raw)
            .map(RawArgs)
            .map_err(|e| invalid(&format!("tool {}", call.name()), ".", e))
    }
}

impl FromRequest<PromptRequest> for RawArgs {
    fn from_request(request: &PromptRequest) -> Result<Self, Rejection> {
        Ok(RawArgs(strings_object(request.arguments())))
    }
}

impl FromRequest<ResourceRequest> for RawArgs {
    fn from_request(request: &ResourceRequest) -> Result<Self, Rejection> {
        Ok(RawArgs(strings_object(request.variables())))
    }
}

impl FromRequest<ResourceRequest> for Uri {
    fn from_request(request: &ResourceRequest) -> Result<Self, Rejection> {
        Ok(Uri(request.uri().to_owned()))
    }
}

impl<R: HandlerRequest> FromRequest<R> for RequestContext {
    fn from_request(request: &R) -> Result<Self, Rejection> {
        Ok(request.context().clone())
    }
}

impl<R: HandlerRequest> FromRequest<R> for CancellationToken {
    fn from_request(request: &R) -> Result<Self, Rejection> {
        Ok(request.context().cancel.clone())
    }
}

impl<R: HandlerRequest, S: Clone + Send + Sync + 'static> FromRequest<R> for State<S> {
    fn from_request(request: &R) -> Result<Self, Rejection> {
        request.context().state::<S>().cloned().map(State).ok_or_else(|| {
            Rejection::Protocol(ErrorObject::internal(format!(
                "no state of type {} was registered",
                std::any::type_name::<S>()
            )))
        })
    }
}

/// Runs `$m!` once per handler arity: no extractor up to six.
macro_rules! for_each_arity {
    ($m:ident) => {
        $m!();
        $m!(T1);
        $m!(T1, T2);
        $m!(T1, T2, T3);
        $m!(T1, T2, T3, T4);
        $m!(T1, T2, T3, T4, T5);
        $m!(T1, T2, T3, T4, T5, T6);
    };
}
pub(crate) use for_each_arity;

// A handler's extractors, taken together: each in turn, the first rejection wins; the
// arguments schema is the first extractor's that has one.
macro_rules! impl_extractors {
    ($($t:ident),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<R, $($t,)*> FromRequest<R> for ($($t,)*)
        where
            R: HandlerRequest,
            $($t: FromRequest<R>,)*
        {
            fn from_request(request: &R) -> Result<Self, Rejection> {
                Ok(($(<$t as FromRequest<R>>::from_request(request)?,)*))
            }
            fn arguments_schema() -> Option<JsonObject> {
                None $(.or_else(<$t as FromRequest<R>>::arguments_schema))*
            }
        }
    };
}
for_each_arity!(impl_extractors);

// Only async functions over extractors are handlers.
macro_rules! impl_sealed {
    ($($t:ident),*) => {
        impl<F, Fut, $($t,)*> sealed::Handler<($($t,)*)> for F where F: Fn($($t),*) -> Fut {}
    };
}
for_each_arity!(impl_sealed);

pub(crate) mod sealed {
    //! The private supertraits that keep the handler traits and [`HandlerRequest`](super::HandlerRequest)
    //! closed: their shapes may change without breaking anyone.
    #![allow(unreachable_pub)]

    /// Implemented for functions of up to six parameters.
    pub trait Handler<T> {}
    /// Implemented for the three catalogue requests.
    pub trait Request {}
}
