//! `mcpkit ping`: check the server answers.

use mcpkit::Client;

use super::{with_client, Globals};
use crate::target::{one_line, Failure, TargetArgs};

/// Check the server answers: prints `ok` (and the round-trip time on stderr).
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    target: TargetArgs,
}

impl Args {
    /// Connect, ping, print `ok` on stdout and the round-trip time on stderr, disconnect.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        with_client("ping", &self.target, globals, ping).await
    }
}

async fn ping(client: Client) -> Result<u8, Failure> {
    let t0 = std::time::Instant::now();
    client
        .ping()
        .await
        .map_err(|e| Failure::usage(format!("ping: {}", one_line(&e.to_string()))))?;
    println!("ok");
    eprintln!("round trip {:.3} ms", t0.elapsed().as_secs_f64() * 1000.0);
    Ok(0)
}
