//! `Server::call::<M>` runs a server's method table with no transport, client or framing: the
//! handshake-era table by default, the stateless-era table with `call_as(2026-07-28, …)`.
//! Pinned here: the exact `tools/list` page and `tools/call` result in each era, -32601 for a
//! method no table holds and for a handshake-only method on the stateless table, and a client
//! notification reaching its handler.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcpkit::server::{Args, ToolDef};
use mcpkit::types::method::{CallTool, ListTools, Method, Ping, RootsListChanged};
use mcpkit::types::schema::{CallToolParams, EmptyResult, PaginatedParams, RequestParams};
use mcpkit::types::{ErrorCode, ProtocolVersion};
use mcpkit::Server;
use serde::Deserialize;
use serde_json::{json, Value};

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// What to say back.
    message: String,
}

fn server() -> Server {
    Server::builder()
        .name("call-test", "1.0.0")
        .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.message }).description("Say it back"))
        .build()
}

fn echo(message: &str) -> CallToolParams {
    CallToolParams::new("echo")
        .with_arguments(&json!({ "message": message }))
        .unwrap()
}

fn echo_tool() -> Value {
    json!({
        "name": "echo",
        "description": "Say it back",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to say back."}},
            "required": ["message"],
            "$schema": "https://json-schema.org/draft/2020-12/schema"
        }
    })
}

/// A method no revision of MCP has.
struct Nonexistent;

impl Method for Nonexistent {
    const NAME: &'static str = "nonexistent/method";
    type Params = RequestParams;
    type Result = EmptyResult;
}

#[tokio::test]
async fn tools_list_is_the_prebuilt_page() {
    let page = server().call::<ListTools>(PaginatedParams::default()).await.unwrap();
    assert_eq!(serde_json::to_value(page).unwrap(), json!({ "tools": [echo_tool()] }));
}

#[tokio::test]
async fn tools_call_runs_the_tool() {
    let result = server().call::<CallTool>(echo("hello")).await.unwrap();
    assert_eq!(
        serde_json::to_value(result).unwrap(),
        json!({ "content": [{"type": "text", "text": "hello"}] })
    );
}

#[tokio::test]
async fn a_method_no_table_holds_is_not_found() {
    let e = server()
        .call::<Nonexistent>(RequestParams::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(e.message, "Method not found: nonexistent/method");
    let e = server()
        .call_as::<Nonexistent>(ProtocolVersion::V2026_07_28, RequestParams::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn the_stateless_table_completes_results_and_has_no_handshake_methods() {
    let server = server();
    let info = json!({ "name": "call-test", "version": "1.0.0" });
    let page = server
        .call_as::<ListTools>(ProtocolVersion::V2026_07_28, PaginatedParams::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(page).unwrap(),
        json!({
            "tools": [echo_tool()],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": { "io.modelcontextprotocol/serverInfo": info }
        })
    );
    let result = server
        .call_as::<CallTool>(ProtocolVersion::V2026_07_28, echo("hi"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(result).unwrap(),
        json!({
            "content": [{"type": "text", "text": "hi"}],
            "resultType": "complete",
            "_meta": { "io.modelcontextprotocol/serverInfo": info }
        })
    );
    // `ping` is gone from 2026-07-28.
    let e = server
        .call_as::<Ping>(ProtocolVersion::V2026_07_28, Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
    assert_eq!(e.message, "Method not found: ping");
}

#[tokio::test]
async fn a_client_notification_reaches_its_handler() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let server = Server::builder()
        .on_roots_changed(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        })
        .build();
    server.call_notification::<RootsListChanged>(Default::default()).await;
    assert_eq!(seen.load(Ordering::Relaxed), 1);
}
