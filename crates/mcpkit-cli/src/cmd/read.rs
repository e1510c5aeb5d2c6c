//! `mcpkit read`: read one resource and print its contents readably (or as raw JSON).

use mcpkit::Client;

use super::{with_client, Globals};
use crate::render::{print_json, print_text, render_contents, Saver};
use crate::target::{one_line, Failure, TargetArgs};

/// Read a resource: `mcpkit read test://static-text`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The resource URI.
    uri: String,
    /// Print the raw JSON result.
    #[arg(long)]
    json: bool,
    /// Save binary contents here (default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    out: Option<std::path::PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, read the resource, print it, disconnect.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let target = self.target.clone();
        with_client("read", &target, globals, |c| self.read(c)).await
    }

    async fn read(self, client: Client) -> Result<u8, Failure> {
        let uri = &self.uri;
        let result = client
            .read_resource(uri)
            .await
            .map_err(|e| Failure::usage(format!("reading {uri}: {}", one_line(&e.to_string()))))?;
        if self.json {
            print_json(&result);
            return Ok(0);
        }
        let mut saver = Saver::new(self.out, "resource");
        let mut out = String::new();
        for c in &result.contents {
            render_contents(&mut out, c, &mut saver);
        }
        print_text(&out);
        Ok(0)
    }
}
