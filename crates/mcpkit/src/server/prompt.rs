//! Prompts (spec: `server/prompts`): async functions whose parameters are extractors, like tools.
//!
//! ```
//! use mcpkit::server::{Args, PromptDef};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Review {
//!     /// The code to review.
//!     code: String,
//!     /// What to look for.
//!     focus: Option<String>,
//! }
//!
//! let review = PromptDef::new("review", |Args(r): Args<Review>| async move {
//!     format!("Review this code for {}:\n{}", r.focus.as_deref().unwrap_or("bugs"), r.code)
//! });
//! let arguments = review.prompt().arguments.as_deref().unwrap_or_default();
//! assert_eq!(arguments[0].name, "code");
//! assert_eq!(arguments[0].description.as_deref(), Some("The code to review."));
//! assert_eq!(arguments[0].required, Some(true));
//! assert_eq!(arguments[1].required, Some(false));
//! ```
//! The argument list comes from the `Args<T>` type's schema, computed once at registration:
//! one argument per property, its doc comment the description, `required` from the schema.
//! Prompt arguments are strings on the wire, so `T`'s fields are `String` or `Option<String>`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcpkit_types::schema::{GetPromptResult, JsonObject, Meta, Prompt, PromptArgument, PromptMessage};
use mcpkit_types::ErrorObject;
use serde_json::Value;

use super::completion::{Completer, CompletionFn};
use super::context::RequestContext;
use super::extract::{for_each_arity, sealed, FromRequest, HandlerRequest};
use crate::engine::BoxFuture;

/// One `prompts/get`, as seen by extractors ([`FromRequest<PromptRequest>`]).
#[derive(Debug)]
pub struct PromptRequest {
    pub(crate) name: String,
    /// The arguments given (required ones are checked before the handler runs).
    pub(crate) arguments: BTreeMap<String, String>,
    pub(crate) cx: RequestContext,
}

impl PromptRequest {
    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The arguments given.
    pub fn arguments(&self) -> &BTreeMap<String, String> {
        &self.arguments
    }
}

impl sealed::Request for PromptRequest {}

impl HandlerRequest for PromptRequest {
    fn context(&self) -> &RequestContext {
        &self.cx
    }
}

/// What a prompt handler may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt handler",
    note = "a prompt handler returns `GetPromptResult`, `Vec<PromptMessage>`, `PromptMessage`, \
            `String` (one user message), or a `Result` of one of these whose error converts into \
            `ErrorObject` (`mcpkit::Error` does)"
)]
pub trait IntoPromptResult: Send + 'static {
    /// Convert to the wire result (an `Err` is the request's error).
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

/// One user text message.
impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        PromptMessage::user_text(self).into_prompt_result()
    }
}

/// One user text message.
impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        PromptMessage::user_text(self).into_prompt_result()
    }
}

/// An `Err` is the error of the `prompts/get` request.
impl<T: IntoPromptResult, E: Into<ErrorObject> + Send + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.map_err(Into::into).and_then(IntoPromptResult::into_prompt_result)
    }
}

/// An async function usable as a prompt handler: up to six [`FromRequest`] parameters in any
/// order, returning an [`IntoPromptResult`]. Implemented for such functions only (sealed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt handler",
    label = "not a prompt handler",
    note = "a prompt handler is an async fn or closure taking up to six extractors in any order \
            (`Args<T>`, `RawArgs`, `RequestContext`, `State<S>`, `CancellationToken`) and returning \
            something that implements `IntoPromptResult` (`GetPromptResult`, `Vec<PromptMessage>`, \
            `String`, `Result<_, impl Into<ErrorObject>>`, ...)"
)]
pub trait PromptHandler<T>: sealed::Handler<T> + Clone + Send + Sync + 'static {
    /// Render the prompt for a request.
    fn call(&self, request: PromptRequest) -> BoxFuture<Result<GetPromptResult, ErrorObject>>;
    /// The schema of the arguments the parameters read, if one does.
    fn arguments_schema() -> Option<JsonObject>;
}

macro_rules! impl_prompt_handler {
    ($($t:ident),*) => {
        impl<F, Fut, $($t,)*> PromptHandler<($($t,)*)> for F
        where
            F: Fn($($t),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future + Send + 'static,
            Fut::Output: IntoPromptResult,
            $($t: FromRequest<PromptRequest>,)*
        {
            #[allow(non_snake_case)]
            fn call(&self, request: PromptRequest) -> BoxFuture<Result<GetPromptResult, ErrorObject>> {
                let ($($t,)*) = match <($($t,)*) as FromRequest<PromptRequest>>::from_request(&request) {
                    Ok(extracted) => extracted,
                    Err(r) => return Box::pin(std::future::ready(Err(r.into_error()))),
                };
                let fut = (self)($($t),*);
                Box::pin(async move { fut.await.into_prompt_result() })
            }
            fn arguments_schema() -> Option<JsonObject> {
                <($($t,)*) as FromRequest<PromptRequest>>::arguments_schema()
            }
        }
    };
}
for_each_arity!(impl_prompt_handler);

type ErasedPrompt = Arc<dyn Fn(PromptRequest) -> BoxFuture<Result<GetPromptResult, ErrorObject>> + Send + Sync>;

/// A prompt and how to render it.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) get: ErasedPrompt,
    pub(crate) completions: BTreeMap<String, CompletionFn>,
    /// Switchable at run time ([`Server::set_prompt_enabled`](super::Server::set_prompt_enabled)):
    /// whether it is on until switched (`None`: always on).
    pub(crate) switch: Option<bool>,
    /// Who sees and gets it (scopes, tags, hidden).
    pub(crate) guard: super::access::Guard,
    /// What brought it when it came with others (a mount's prefix, an upstream's name).
    pub(crate) source: Option<Arc<str>>,
    /// Completions answered elsewhere (an upstream's), instead of by `completions`.
    pub(crate) forward_complete: Option<super::completion::ForwardComplete>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

/// A prompt's argument list from the schema of its arguments: one per property.
fn arguments_of(schema: &JsonObject) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let mut a = PromptArgument::new(name).required(required.contains(&name.as_str()));
            a.description = property.get("description").and_then(Value::as_str).map(str::to_owned);
            a
        })
        .collect()
}

impl PromptDef {
    /// A prompt rendered by `handler`; its argument list comes from an [`Args<T>`](super::Args)
    /// parameter's type, if it has one (see [`PromptDef::argument`] otherwise).
    pub fn new<H: PromptHandler<T>, T>(name: impl Into<String>, handler: H) -> Self {
        let mut prompt = Prompt::new(name);
        let arguments = H::arguments_schema().map(|s| arguments_of(&s)).unwrap_or_default();
        if !arguments.is_empty() {
            prompt.arguments = Some(arguments);
        }
        PromptDef {
            prompt,
            get: Arc::new(move |r| handler.call(r)),
            completions: BTreeMap::new(),
            switch: None,
            guard: Default::default(),
            source: None,
            forward_complete: None,
        }
    }

    /// Declare the prompt switchable at run time, on until switched off with
    /// [`Server::set_prompt_enabled`](super::Server::set_prompt_enabled). A switched-off prompt
    /// is neither listed nor served; instances sharing backends share the switch.
    pub fn switchable(mut self) -> Self {
        self.switch = Some(true);
        self
    }

    /// Declare the prompt switchable at run time and off until switched on with
    /// [`Server::set_prompt_enabled`](super::Server::set_prompt_enabled) (see
    /// [`PromptDef::switchable`]).
    pub fn switched_off(mut self) -> Self {
        self.switch = Some(false);
        self
    }

    /// Description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.prompt.description = Some(d.into());
        self
    }

    /// Display title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.prompt.title = Some(t.into());
        self
    }

    /// Its `_meta`: metadata for hosts under namespaced keys (e.g. an MCP App's `ui`, or a
    /// vendor's `com.example/…`), sent with the definition in every list. Replaces earlier
    /// `_meta`.
    pub fn meta(mut self, meta: Meta) -> Self {
        self.prompt.meta = Some(meta);
        self
    }

    /// Declare an argument, or replace the one of that name (for handlers that read
    /// [`RawArgs`](super::RawArgs) rather than a typed [`Args<T>`](super::Args)).
    pub fn argument(mut self, name: impl Into<String>, description: impl Into<String>, required: bool) -> Self {
        let argument = PromptArgument::new(name)
            .with_description(description)
            .required(required);
        let arguments = self.prompt.arguments.get_or_insert_with(Vec::new);
        match arguments.iter_mut().find(|a| a.name == argument.name) {
            Some(a) => *a = argument,
            None => arguments.push(argument),
        }
        self
    }

    /// Offer completions for an argument (`completion/complete` with `ref/prompt`).
    pub fn complete(mut self, argument: impl Into<String>, completer: impl Completer) -> Self {
        self.completions.insert(argument.into(), Arc::new(completer));
        self
    }

    /// The wire description.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }

    pub(crate) fn missing_required<'a>(&'a self, given: &BTreeMap<String, String>) -> Option<&'a str> {
        self.prompt
            .arguments
            .iter()
            .flatten()
            .find(|a| a.required == Some(true) && !given.contains_key(&a.name))
            .map(|a| a.name.as_str())
    }
}
