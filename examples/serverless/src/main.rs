//! An MCP server as a serverless function: mcpkit's Streamable HTTP endpoint, as the plain
//! tower service of `HttpServer::into_service`, handed to the `lambda_http` adapter, which turns
//! each function invocation (an HTTP API or function URL event, payload format 2.0) into an
//! `http::Request` and the service's response into the invocation's answer.
//!
//! A function instance keeps no connection and may be replaced between two requests, so the
//! endpoint holds no session:
//! - 2026-07-28 (the stateless era) clients need none: every request carries its own protocol
//!   version and capabilities in `_meta`.
//! - Handshake-era clients are served in sessionless mode (`HttpConfig::sessionless`):
//!   `initialize` is answered without `Mcp-Session-Id`, and each later POST is served alone.
//!
//! The public host name the function is reached at must be allowed (the `Host` check that
//! protects local servers from DNS rebinding stays on): set `MCP_ALLOWED_HOSTS` to it
//! (comma-separated for several, e.g. `abc123.lambda-url.us-east-1.on.aws`).
//!
//! Build and deploy it as any Rust function (e.g. `cargo lambda build --release -p
//! mcpkit-serverless-example`); `tests/` runs it locally against a runtime API stand-in.

use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{Args, ToolDef};
use mcpkit::Server;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

/// The MCP server this function serves: two small tools.
fn server() -> Server {
    Server::builder()
        .name("serverless-example", env!("CARGO_PKG_VERSION"))
        .tool(ToolDef::new("echo", |Args(e): Args<Echo>| async move { e.text }).description("Echoes the text back"))
        .tool(
            ToolDef::new("add", |Args(n): Args<Add>| async move {
                n.a.saturating_add(n.b).to_string()
            })
            .description("Adds two integers"),
        )
        .build()
}

/// The endpoint's configuration: sessionless, and the host names in `allowed_hosts` (plus the
/// loopback ones) accepted in `Host`.
fn config(allowed_hosts: Option<&str>) -> HttpConfig {
    let mut config = HttpConfig {
        sessionless: true,
        ..HttpConfig::default()
    };
    let extra = allowed_hosts.unwrap_or_default().split(',').map(str::trim);
    config
        .allowed_hosts
        .extend(extra.filter(|h| !h.is_empty()).map(str::to_owned));
    config
}

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    let allowed = std::env::var("MCP_ALLOWED_HOSTS").ok();
    let service = HttpServer::new(server())
        .config(config(allowed.as_deref()))
        .into_service();
    lambda_http::run(service).await
}
