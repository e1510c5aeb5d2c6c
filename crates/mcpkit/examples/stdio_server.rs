//! A complete MCP server on stdio: two tools with typed arguments (one with structured output),
//! a resource and a prompt.
//!
//! ```text
//! cargo run -p mcpkit --example stdio_server
//! ```
//!
//! A stdio server is started by its client (a host such as an IDE, or `mcpkit`), which writes
//! JSON-RPC messages to its stdin and reads the answers from its stdout, one per line. Run
//! alone it waits for input. To talk to it, let a client start it:
//!
//! ```text
//! cargo run -p mcpkit --example client                                          # the client example
//! cargo run -p mcpkit-cli -- inspect -- cargo run -q -p mcpkit --example stdio_server  # the mcpkit tool
//! cargo run -p mcpkit-cli -- call add a=2 b=3 -- cargo run -q -p mcpkit --example stdio_server
//! ```
//!
//! (`mcpkit` waits 30 s for the handshake: build the example first, `cargo build -p mcpkit
//! --example stdio_server`, or pass `--timeout 300s`, if cargo has to compile it.)
//!
//! Or type the wire protocol yourself (each line is one message; the server answers each
//! request on one line):
//!
//! ```text
//! -> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"0"}}}
//! <- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"prompts":{"listChanged":true},"logging":{},"completions":{}},"serverInfo":{"name":"example-stdio-server","version":"1.0.0"},"instructions":"Greets people and adds numbers."}}
//! -> {"jsonrpc":"2.0","method":"notifications/initialized"}
//! -> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}
//! <- {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"sum\":5.0}"}],"structuredContent":{"sum":5.0}}}
//! ```

use mcpkit::server::{Args, Json, PromptDef, RequestContext, ResourceDef, ToolDef};
use mcpkit::transport::stdio::stdio;
use mcpkit::Server;
use serde::{Deserialize, Serialize};

/// The arguments of `greet`. The tool's `inputSchema` is generated from this type (by
/// schemars), and the doc comments become the properties' descriptions.
#[derive(Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
    /// How many exclamation marks (default 1).
    #[serde(default)]
    excitement: u8,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// The arguments of the `introduce` prompt (prompt arguments are strings).
#[derive(Deserialize, schemars::JsonSchema)]
struct IntroduceArgs {
    /// Who to introduce yourself to
    name: String,
}

/// `add` returns this as `structuredContent`; its schema becomes the tool's `outputSchema`.
#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: f64,
}

#[tokio::main]
async fn main() -> mcpkit::Result<()> {
    // stdout carries the protocol, so anything else a stdio server prints goes to stderr.
    eprintln!("example-stdio-server: serving MCP on stdin/stdout");

    let server = Server::builder()
        .name("example-stdio-server", "1.0.0")
        .instructions("Greets people and adds numbers.")
        // A tool is a plain async function. Its parameters are extractors: `Args<T>` parses the
        // call's arguments into `T` (a call with bad arguments gets a tool error naming the
        // field, before your code runs); `RequestContext` gives progress, logging, sampling,
        // elicitation and cancellation. Any return type that converts to a tool result works.
        .tool(
            ToolDef::new("greet", |Args(args): Args<GreetArgs>| async move {
                let bangs = "!".repeat(usize::from(args.excitement.max(1)));
                format!("Hello, {}{bangs}", args.name)
            })
            .title("Greet")
            .description("Greets someone by name"),
        )
        // `Json<T>` is structured output: the client gets it as `structuredContent` (and a text
        // copy for older clients), and the tool declares `T`'s schema as its `outputSchema`.
        .tool(
            ToolDef::new("add", |Args(args): Args<AddArgs>, cx: RequestContext| async move {
                // Progress reaches the caller when it asked for it; otherwise this is a no-op.
                cx.progress(1.0, Some(1.0), Some("added"));
                Json(Sum { sum: args.a + args.b })
            })
            .description("Adds two numbers"),
        )
        // A resource with fixed text. `ResourceDef::new` takes an async handler instead, and
        // `ResourceTemplateDef` serves a whole family of URIs (`file:///{path}`).
        .resource(
            ResourceDef::text(
                "example://readme",
                "readme",
                "text/markdown",
                "# Example\nThis server greets people and adds numbers.",
            )
            .description("What this server does"),
        )
        // A prompt: a template the user picks in the host, rendered to messages. It takes the
        // same extractors as a tool: the prompt's argument list is derived from `IntroduceArgs`,
        // and a `String` becomes one user message.
        .prompt(
            PromptDef::new("introduce", |Args(args): Args<IntroduceArgs>| async move {
                format!(
                    "Please introduce yourself to {}, then use the greet tool on them.",
                    args.name
                )
            })
            .description("Asks the model to introduce itself"),
        )
        .build();

    // Serve until the client closes stdin.
    server.serve(stdio()).await
}
