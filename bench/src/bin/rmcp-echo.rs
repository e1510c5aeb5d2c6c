//! `echo` MCP server written with the official Rust SDK (`rmcp`), for the comparison harness.
//!
//! Usage:
//!   rmcp-echo stdio                    stdio transport
//!   rmcp-echo stdio --tools N          stdio, N tools listed (`echo` and N-1 more with the same
//!                                      schema; only `echo` answers calls): the harness's
//!                                      `tools/list` scale curve
//!   rmcp-echo http ADDR                Streamable HTTP at http://ADDR/mcp, rmcp's default (stateful
//!                                      sessions, SSE replies)
//!   rmcp-echo http ADDR --stateless    no sessions, JSON replies (`legacy_session_mode = false`,
//!                                      `json_response = true`)
//! HTTP modes print `listening on http://ADDR/mcp` on stdout once bound. Accepted sockets get
//! TCP_NODELAY (without it a reply written in two pieces waits for the peer's delayed ACK).
//!
//! Tool: `echo {message: string}` → one text content block with the message.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message to echo back.
    message: String,
}

#[derive(Debug, Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Echoes the message back")]
    async fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// `echo` plus N-1 more tools in `tools/list`: the tool router's own `echo` entry, cloned under
/// new names (the list is built once; rmcp's `tool_router` clones its list on every request too).
#[derive(Clone)]
struct ManyTools {
    echo: Echo,
    tools: Arc<Vec<Tool>>,
}

impl ManyTools {
    fn new(count: usize) -> Self {
        let echo = Echo::new();
        let first = echo.tool_router.list_all().into_iter().next();
        let tools = first
            .map(|t| {
                (0..count)
                    .map(|i| {
                        let mut tool = t.clone();
                        if i > 0 {
                            tool.name = format!("tool_{i}").into();
                        }
                        tool
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self { echo, tools: Arc::new(tools) }
    }
}

impl ServerHandler for ManyTools {
    fn get_info(&self) -> ServerConfig {
        self.echo.get_info()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.echo.call_tool(request, context).await
    }
}

fn usage() -> ! {
    eprintln!("usage: rmcp-echo stdio [--tools N] | http ADDR [--stateless]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => {
            let running = Echo::new().serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        ["stdio", "--tools", n] => {
            let count = n.parse().unwrap_or_else(|_| usage());
            let running = ManyTools::new(count).serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        ["http", addr, rest @ ..] => {
            let stateless = match rest {
                [] => false,
                ["--stateless"] => true,
                _ => usage(),
            };
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(!stateless)
                .with_json_response(stateless);
            let service =
                StreamableHttpService::new(|| Ok(Echo::new()), Arc::new(LocalSessionManager::default()), config);
            let app = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(addr).await?;
            println!("listening on http://{}/mcp", listener.local_addr()?);
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app).await?;
        }
        _ => usage(),
    }
    Ok(())
}
