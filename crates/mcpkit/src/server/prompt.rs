//! Prompts (spec: `server/prompts`).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use mcpkit_types::schema::{GetPromptResult, Prompt, PromptArgument};
use mcpkit_types::ErrorObject;

use super::completion::{Completer, CompletionFn};
use super::context::RequestContext;
use crate::engine::BoxFuture;

/// One `prompts/get`, as seen by a prompt handler.
#[derive(Debug)]
pub struct PromptRequest {
    /// The arguments given (required ones are checked before the handler runs).
    pub arguments: BTreeMap<String, String>,
    /// The request context.
    pub cx: RequestContext,
}

type ErasedPrompt = Arc<dyn Fn(PromptRequest) -> BoxFuture<Result<GetPromptResult, ErrorObject>> + Send + Sync>;

/// A prompt and how to render it.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) prompt: Prompt,
    pub(crate) get: ErasedPrompt,
    pub(crate) completions: BTreeMap<String, CompletionFn>,
}

impl std::fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDef")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl PromptDef {
    /// A prompt rendered by `handler`.
    pub fn new<F, Fut>(name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(PromptRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        PromptDef {
            prompt: Prompt::new(name),
            get: Arc::new(move |r| Box::pin(handler(r))),
            completions: BTreeMap::new(),
        }
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

    /// Declare an argument.
    pub fn argument(mut self, name: impl Into<String>, description: impl Into<String>, required: bool) -> Self {
        let mut a = PromptArgument::new(name);
        a.description = Some(description.into());
        a.required = Some(required);
        self.prompt.arguments.get_or_insert_with(Vec::new).push(a);
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
