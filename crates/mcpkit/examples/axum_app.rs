//! An MCP server over Streamable HTTP, mounted at `/mcp` in an existing axum application
//! beside the application's own routes.
//!
//! ```text
//! cargo run -p mcpkit --features http-server --example axum_app                                   # listens on 127.0.0.1:3000
//! cargo run -p mcpkit --features http-server --example axum_app -- 127.0.0.1:8080                 # another address
//! ```
//!
//! Then, in another terminal:
//!
//! ```text
//! curl http://127.0.0.1:3000/                                              # the app's own route
//! cargo run -p mcpkit --features http-client --example client -- --url http://127.0.0.1:3000/mcp  # the client example
//! cargo run -p mcpkit-cli -- inspect --server http://127.0.0.1:3000/mcp                           # the mcpkit tool
//! ```
//!
//! A request the endpoint refuses, because it comes from a web page on another site (the
//! `Origin` check that stops DNS-rebinding attacks on local servers):
//!
//! ```text
//! -> POST /mcp  Host: 127.0.0.1:3000  Origin: http://evil.example
//! <- 403 Forbidden
//! ```

use std::error::Error;

use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{Args, Json, ToolDef};
use mcpkit::Server;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

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

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // Bind to loopback unless you mean to expose the server (and then put it behind TLS and
    // authentication: see the protected_server example).
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:3000".into());

    let server = Server::builder()
        .name("example-axum-app", "1.0.0")
        .tool(
            ToolDef::new("greet", |Args(args): Args<GreetArgs>| async move {
                format!(
                    "Hello, {}{}",
                    args.name,
                    "!".repeat(usize::from(args.excitement.max(1)))
                )
            })
            .description("Greets someone by name"),
        )
        .tool(
            ToolDef::new("add", |Args(args): Args<AddArgs>| async move {
                Json(Sum { sum: args.a + args.b })
            })
            .description("Adds two numbers"),
        )
        .build();

    // The defaults are the secure ones: `Host` must be a loopback name (so a DNS-rebinding
    // page cannot reach the server through a name it controls), a browser's `Origin` must be a
    // loopback origin too, bodies are capped at 4 MiB, session ids come from the OS's CSPRNG
    // and idle sessions expire. Served under a public name, allow it explicitly:
    // `config.allowed_hosts.push("mcp.example.com".into())` (and `allowed_origins` for
    // browser clients).
    let config = HttpConfig::default();

    // Fired at Ctrl-C: ends the endpoint's open SSE streams so the graceful shutdown finishes.
    let shutdown = CancellationToken::new();

    // The MCP endpoint is an ordinary axum `Router` serving the path it is given; merge it with
    // the application's own routes (and add your layers: tracing, CORS, auth…).
    let app = Router::new()
        .route("/", get(|| async { "This is the application; MCP is at /mcp.\n" }))
        .route("/health", get(|| async { "ok\n" }))
        .merge(
            HttpServer::new(server)
                .config(config)
                .path("/mcp")
                .shutdown(shutdown.clone())
                .router(),
        );

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    // The application serves itself, so it sets what `HttpServer::serve` would: TCP_NODELAY
    // (without it a reply written in two parts can wait ~40 ms for a delayed ACK).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });

    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            shutdown.cancel();
        })
        .await?;
    Ok(())
}
