//! An MCP server on stdio with N tools (`echo` plus `tool_1` … `tool_{N-1}`, each with a small
//! typed input schema), for the `tools/list` scale curve of the performance harness
//! (bench/curves.py): how the cost of listing grows with 10, 1,000 and 10,000 tools.
//!
//! ```text
//! cargo build --release -p mcpkit-cli --example many_tools
//! target/release/examples/many_tools 1000
//! ```

use mcpkit::server::{Args, ToolDef};
use mcpkit::transport::stdio::stdio;
use mcpkit::Server;
use serde::Deserialize;

/// The arguments of every tool: one string, as the harness's `echo`.
#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message to echo back.
    message: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> mcpkit::Result<()> {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10)
        .max(1);
    let mut builder = Server::builder().name("many-tools", "0.0.0");
    for i in 0..count {
        let name = if i == 0 { "echo".to_owned() } else { format!("tool_{i}") };
        builder = builder.tool(
            ToolDef::new(name, |Args(args): Args<EchoArgs>| async move { args.message })
                .description("Echoes the message back"),
        );
    }
    builder.build().serve(stdio()).await
}
