//! Argument completion (spec: `server/utilities/completion`).

use std::collections::BTreeMap;
use std::sync::Arc;

/// What a completer sees: the partial value and the other arguments already chosen.
#[derive(Debug, Clone)]
pub struct CompletionInput<'a> {
    /// The argument being completed.
    pub argument: &'a str,
    /// What the user typed so far.
    pub value: &'a str,
    /// Previously resolved arguments (`context.arguments`).
    pub context: &'a BTreeMap<String, String>,
}

/// Produces completion candidates. Closures `Fn(&CompletionInput) -> Vec<String>` qualify.
pub trait Completer: Send + Sync + 'static {
    /// Candidates for the input; mcpkit caps the reply at 100 and sets `hasMore`/`total`.
    fn complete(&self, input: &CompletionInput<'_>) -> Vec<String>;
}

impl<F> Completer for F
where
    F: Fn(&CompletionInput<'_>) -> Vec<String> + Send + Sync + 'static,
{
    fn complete(&self, input: &CompletionInput<'_>) -> Vec<String> {
        self(input)
    }
}

/// A completer over a fixed list: the entries starting with what was typed.
pub fn from_list<I, S>(values: I) -> impl Completer
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let values: Vec<String> = values.into_iter().map(Into::into).collect();
    move |input: &CompletionInput<'_>| values.iter().filter(|v| v.starts_with(input.value)).cloned().collect()
}

pub(crate) type CompletionFn = Arc<dyn Completer>;

/// Completions answered elsewhere: the request as received, answered asynchronously (an
/// upstream server's completions, asked through its client).
pub(crate) type ForwardComplete = Arc<
    dyn Fn(
            mcpkit_types::schema::CompleteParams,
        ) -> crate::engine::BoxFuture<Result<mcpkit_types::schema::CompleteResult, mcpkit_types::ErrorObject>>
        + Send
        + Sync,
>;
