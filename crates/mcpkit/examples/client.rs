//! A client: start (or reach) a server, list its tools, call two of them and read the results,
//! including typed structured output.
//!
//! ```text
//! cargo run -p mcpkit --features http-client --example client                                     # starts the stdio_server example
//! cargo run -p mcpkit --features http-client --example client -- python server.py                 # any stdio server command
//! cargo run -p mcpkit --features http-client --example client -- --url http://127.0.0.1:3000/mcp  # a Streamable HTTP server
//! ```
//!
//! (The last one talks to the `axum_app` example:
//! `cargo run -p mcpkit --features http-server --example axum_app` in another terminal.) The
//! tools called are `greet` and `add`, which the `stdio_server` and `axum_app` examples both
//! have. Output:
//!
//! ```text
//! connected to example-stdio-server 1.0.0 (protocol 2025-11-25)
//! tools:
//!   greet    Greets someone by name
//!   add      Adds two numbers
//! greet: Hello, newcomer!!!
//! add: 2 + 3 = 5
//! ```

use std::error::Error;

use mcpkit::transport::child::ChildTransport;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::Client;
use serde::Deserialize;
use serde_json::json;

/// What `add` returns as `structuredContent`.
#[derive(Deserialize)]
struct Sum {
    sum: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();

    // Connecting runs the `initialize` handshake; the client then knows the server's name,
    // capabilities and the protocol revision both sides agreed on.
    let client = match args.as_slice() {
        // Streamable HTTP (falling back to the legacy HTTP+SSE transport for old servers).
        [flag, url] if flag == "--url" => Client::builder().connect(HttpClientTransport::new(url)?).await?,
        // A stdio server: the client spawns it and speaks over its stdin/stdout. It is stopped
        // (stdin closed, then SIGTERM, then SIGKILL) when the client closes.
        [program, rest @ ..] => Client::builder().connect(ChildTransport::spawn(program, rest)?).await?,
        // By default, the stdio_server example, built and started by cargo (whose progress
        // messages go to stderr: stdout carries only the protocol).
        [] => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let command = ["run", "-p", "mcpkit", "--example", "stdio_server"];
            Client::builder()
                .connect(ChildTransport::spawn(cargo, command)?)
                .await?
        }
    };
    let server = client.server_info();
    println!(
        "connected to {} {} (protocol {})",
        server.name,
        server.version,
        client.protocol_version().as_str()
    );

    // `list_all_tools` follows pagination until the last page.
    println!("tools:");
    for tool in client.list_all_tools().await? {
        println!("  {:<8} {}", tool.name, tool.description.unwrap_or_default());
    }

    // Arguments are anything that serializes to a JSON object. A tool that fails returns a
    // normal result with `is_error` set (the model is meant to see it); protocol problems, such
    // as an unknown tool, are `Err`.
    let greeting = client
        .call_tool("greet", json!({"name": "newcomer", "excitement": 3}))
        .await?;
    if greeting.is_error == Some(true) {
        return Err(format!("greet failed: {:?}", greeting.content).into());
    }
    let text = greeting
        .content
        .first()
        .and_then(|block| block.as_text())
        .unwrap_or_default();
    println!("greet: {text}");

    // Structured output. The client has already checked it against the tool's `outputSchema`
    // (from `tools/list`); deserialize it into your own type.
    let result = client.call_tool("add", json!({"a": 2, "b": 3})).await?;
    let structured = result.structured_content.ok_or("add returned no structuredContent")?;
    let Sum { sum } = serde_json::from_value(structured)?;
    println!("add: 2 + 3 = {sum}");

    // Ends the session (and stops a spawned server).
    client.close().await?;
    Ok(())
}
