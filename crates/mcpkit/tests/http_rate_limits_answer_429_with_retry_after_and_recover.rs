//! `RateLimit` over Streamable HTTP, through the router with `oneshot`, in both eras: a
//! client over its rate gets HTTP 429 with `Retry-After` and a JSON-RPC error -32029 keeping
//! the request's id; another client (another address) is not limited by it; the limit
//! recovers after the refill time; a per-tool limit touches only that tool; a global limit
//! counts every client together. The session keeps serving throughout.
#![cfg(all(feature = "http-server", feature = "http-client"))]

use std::time::Duration;

use mcpkit::server::backend::Rate;
use mcpkit::server::middleware::RateLimit;
use mcpkit::server::{Args, ToolDef};
use mcpkit::Server;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::http::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

fn server(limit: RateLimit) -> Server {
    Server::builder()
        .tool(ToolDef::new("echo", |Args(t): Args<Text>| async move { t.text }))
        .tool(ToolDef::new("other", || async { "other" }))
        .middleware(limit)
        .build()
}

/// A session-era `tools/call` of `tool` from `peer`: status, `Retry-After`, body.
async fn call_from(mcp: &Mcp, session: &str, peer: &str, id: i64, tool: &str) -> (StatusCode, Option<String>, Value) {
    let body = request(id, "tools/call", json!({ "name": tool, "arguments": { "text": "x" } }));
    let r = send(mcp.post(Some(session), body).sent_from(peer)).await;
    let (status, retry) = (r.status(), header(&r, "retry-after"));
    (status, retry, json_body(r).await)
}

/// The same on the 2026-07-28 wire (no session).
async fn stateless_from(mcp: &Mcp, peer: &str, id: i64, tool: &str) -> (StatusCode, Option<String>, Value) {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": { "text": "x" },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" }
            }
        }
    });
    let req = mcp
        .post_with(
            None,
            body.to_string(),
            &[
                ("mcp-protocol-version", Some("2026-07-28")),
                ("mcp-method", Some("tools/call")),
                ("mcp-name", Some(tool)),
            ],
        )
        .sent_from(peer);
    let r = send(req).await;
    let (status, retry) = (r.status(), header(&r, "retry-after"));
    (status, retry, json_body(r).await)
}

fn assert_refused(reply: &(StatusCode, Option<String>, Value), id: i64, limit: &str) {
    let (status, retry, body) = reply;
    assert_eq!(*status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(retry.as_deref(), Some("1"), "{body}");
    assert_eq!(body["id"], json!(id), "{body}");
    assert_eq!(body["error"]["code"], json!(-32029), "{body}");
    assert_eq!(body["error"]["data"]["limit"], json!(limit), "{body}");
    let ms = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
    assert!((1..=1000).contains(&ms), "{body}");
}

const A: &str = "10.0.0.1:1000";
const B: &str = "10.0.0.2:1000";

#[tokio::test]
async fn a_client_over_its_rate_gets_429_and_recovers_in_both_eras() {
    let mcp = in_process(server(RateLimit::new().per_client(Rate::per_second(2))), config());
    let session = mcp.open_session().await;
    for id in 1..=2 {
        let (status, _, body) = call_from(&mcp, &session, A, id, "echo").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    assert_refused(&call_from(&mcp, &session, A, 3, "echo").await, 3, "client");
    // Another address has a bucket of its own, on the same session.
    assert_eq!(call_from(&mcp, &session, B, 4, "echo").await.0, StatusCode::OK);
    // A token comes back every 500 ms.
    tokio::time::sleep(Duration::from_millis(550)).await;
    assert_eq!(call_from(&mcp, &session, A, 5, "echo").await.0, StatusCode::OK);

    // The stateless wire counts the same client in the same bucket.
    tokio::time::sleep(Duration::from_millis(1050)).await;
    for id in 6..=7 {
        let (status, _, body) = stateless_from(&mcp, A, id, "echo").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["result"]["resultType"], json!("complete"), "{body}");
    }
    assert_refused(&stateless_from(&mcp, A, 8, "echo").await, 8, "client");
    assert_eq!(stateless_from(&mcp, B, 9, "echo").await.0, StatusCode::OK);
    // Pings are never limited, and the session still serves.
    mcp.assert_serves(&session, "the limit").await;
}

#[tokio::test]
async fn a_tool_limit_touches_only_its_tool_and_a_global_limit_counts_everyone() {
    let mcp = in_process(server(RateLimit::new().tool("echo", Rate::per_minute(1))), config());
    let session = mcp.open_session().await;
    assert_eq!(call_from(&mcp, &session, A, 1, "echo").await.0, StatusCode::OK);
    let refused = call_from(&mcp, &session, A, 2, "echo").await;
    assert_eq!(refused.0, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.2["error"]["data"]["limit"], json!("tool"));
    // A minute's refill: Retry-After in whole seconds, rounded up.
    let retry: u64 = refused.1.unwrap().parse().unwrap();
    assert!((59..=60).contains(&retry), "{retry}");
    assert_eq!(call_from(&mcp, &session, A, 3, "other").await.0, StatusCode::OK);
    assert_eq!(call_from(&mcp, &session, B, 4, "echo").await.0, StatusCode::OK);

    let mcp = in_process(server(RateLimit::new().global(Rate::per_second(2))), config());
    let session = mcp.open_session().await;
    assert_eq!(call_from(&mcp, &session, A, 1, "echo").await.0, StatusCode::OK);
    assert_eq!(call_from(&mcp, &session, B, 2, "echo").await.0, StatusCode::OK);
    assert_refused(&call_from(&mcp, &session, A, 3, "other").await, 3, "global");
}
