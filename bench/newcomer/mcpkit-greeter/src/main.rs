use mcpkit::{stdio, Server};

/// Greets someone by name
#[mcpkit::tool]
async fn greet(#[arg(description = "Who to greet.")] name: String) -> String {
    format!("Hello, {name}!")
}

#[tokio::main]
async fn main() -> mcpkit::Result<()> {
    Server::builder().name("greeter", "1.0.0").tool(greet_tool()).build().serve(stdio()).await
}
