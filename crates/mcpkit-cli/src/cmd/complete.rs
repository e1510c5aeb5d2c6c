//! `mcpkit complete`: complete one argument of a prompt or resource template.

use mcpkit::client::{prompt_ref, resource_ref};
use mcpkit::types::schema::CompletionReference;
use mcpkit::Client;

use super::{with_client, Globals};
use crate::render::print_json;
use crate::target::{one_line, Failure, TargetArgs};

/// Complete an argument: `mcpkit complete --prompt NAME ARG=PARTIAL` or
/// `mcpkit complete --resource TEMPLATE ARG=PARTIAL`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The prompt whose argument to complete.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "resource",
        required_unless_present = "resource"
    )]
    prompt: Option<String>,
    /// The resource template whose variable to complete.
    #[arg(long, value_name = "TEMPLATE")]
    resource: Option<String>,
    /// The argument and what is typed so far.
    #[arg(value_name = "ARG=PARTIAL")]
    pair: String,
    /// Print the raw JSON result.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, ask for completions of `ARG=PARTIAL`, print them one a line, disconnect.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let reference = match (&self.prompt, &self.resource) {
            (Some(p), _) => prompt_ref(p),
            (None, Some(r)) => resource_ref(r),
            (None, None) => return Err(Failure::usage("give --prompt NAME or --resource TEMPLATE")),
        };
        let target = self.target.clone();
        with_client("complete", &target, globals, |c| self.complete(c, reference)).await
    }

    async fn complete(self, client: Client, reference: CompletionReference) -> Result<u8, Failure> {
        let Some((arg, partial)) = self.pair.split_once('=') else {
            return Err(Failure::usage(format!(
                "{:?} is not ARG=PARTIAL (e.g. language=py)",
                self.pair
            )));
        };
        if client.server_capabilities().completions.is_none() {
            return Err(Failure::usage(
                "the server does not offer completions (no `completions` capability)",
            ));
        }
        let result = client
            .complete(reference, arg, partial)
            .await
            .map_err(|e| Failure::usage(format!("completing {arg:?}: {}", one_line(&e.to_string()))))?;
        if self.json {
            print_json(&result);
            return Ok(0);
        }
        for v in &result.completion.values {
            println!("{}", crate::terminal::out(v));
        }
        let c = &result.completion;
        if c.has_more == Some(true) || c.total.is_some_and(|t| t > c.values.len() as u64) {
            eprintln!(
                "({} of {} shown)",
                c.values.len(),
                c.total.map_or("more".to_owned(), |t| t.to_string())
            );
        }
        Ok(0)
    }
}
