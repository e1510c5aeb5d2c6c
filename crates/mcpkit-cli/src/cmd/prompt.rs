//! `mcpkit prompt`: get one prompt, its arguments checked against the ones it declares, and
//! print its messages readably (or as raw JSON).

use std::fmt::Write as _;

use mcpkit::Client;

use super::{with_client, Globals};
use crate::render::{print_json, print_text, render_block, Saver};
use crate::target::{one_line, Failure, TargetArgs};

/// Get a prompt: `mcpkit prompt test_prompt_with_arguments arg1=a arg2=b`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The prompt.
    name: String,
    /// Arguments as key=value.
    #[arg(value_name = "KEY=VALUE")]
    pairs: Vec<String>,
    /// Print the raw JSON result.
    #[arg(long)]
    json: bool,
    /// Save images and audio here (default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, get the prompt, print it, disconnect.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let target = self.target.clone();
        with_client("prompt", &target, globals, |c| self.prompt(c)).await
    }

    async fn prompt(self, client: Client) -> Result<u8, Failure> {
        let name = self.name.as_str();
        let args = crate::args::string_pairs(&self.pairs)?;
        let prompts = client.list_all_prompts().await?;
        let Some(p) = prompts.iter().find(|p| p.name == name) else {
            let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
            names.sort_unstable();
            return Err(Failure::usage(format!(
                "the server has no prompt {name:?} (it has: {})",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )));
        };
        let declared: Vec<&str> = p.arguments.iter().flatten().map(|a| a.name.as_str()).collect();
        for (k, _) in &args {
            if !declared.contains(&k.as_str()) {
                return Err(Failure::usage(format!(
                    "prompt {name:?} has no argument {k:?} (it takes: {})",
                    if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    }
                )));
            }
        }
        for a in p.arguments.iter().flatten() {
            if a.required == Some(true) && !args.iter().any(|(k, _)| k == &a.name) {
                return Err(Failure::usage(format!(
                    "prompt {name:?} needs the argument {:?} ({}={}…)",
                    a.name, a.name, "VALUE"
                )));
            }
        }
        let result = client
            .get_prompt(name, args)
            .await
            .map_err(|e| Failure::usage(format!("prompt {name:?}: {}", one_line(&e.to_string()))))?;
        if self.json {
            print_json(&result);
            return Ok(0);
        }
        let mut out = String::new();
        if let Some(d) = &result.description {
            let _ = writeln!(out, "{d}\n");
        }
        let mut saver = Saver::new(self.out, name);
        for m in &result.messages {
            let role = serde_json::to_value(m.role)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let _ = writeln!(out, "[{role}]");
            render_block(&mut out, &m.content, &mut saver);
        }
        print_text(&out);
        Ok(0)
    }
}
