//! Per-item authorization: an item that requires scopes (`require_scopes`, or the macros'
//! `scopes = [..]`) is listed only to callers whose token carries them, and using it without
//! them is refused with -32003 naming the scopes — over HTTP with `403` and, behind the OAuth
//! resource layer, the step-up challenge `error="insufficient_scope", scope="…"` (the JSON-RPC
//! body keeps the request's id). In both eras. The `authorize` hook hides items beyond scopes
//! (not listed, not found). Without authorization (no token) no caller has scopes. Through the
//! router with `oneshot`, behind the real resource layer; and the tables without a transport.
#![cfg(all(feature = "auth", feature = "server", feature = "macros"))]

use mcpkit::server::{Item, PromptDef, ResourceDef, ToolDef};
use mcpkit::types::method::{CallTool, ListTools};
use mcpkit::types::schema::{CallToolParams, PaginatedParams};
use mcpkit::types::ErrorCode;
use mcpkit::Server;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::common::callers::protected;
use crate::common::http::*;

/// Writes a file (the macros' form of `require_scopes`).
#[mcpkit::tool(scopes = ["files:write"])]
async fn write() -> &'static str {
    "written"
}

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("read", || async { "read" }))
        .tool(write_tool())
        .tool(ToolDef::new("secret", || async { "secret" }))
        .prompt(PromptDef::new("plan", || async { "plan" }).require_scopes(["plans"]))
        .resource(
            ResourceDef::new("mem://private", "private", || async { "private".to_owned() })
                .require_scopes(["files:read"]),
        )
        // Beyond scopes: `secret` only for bob.
        .authorize(|auth, item| {
            !matches!(item, Item::Tool(t) if t.name == "secret")
                || auth.and_then(|a| a.subject.as_deref()) == Some("bob")
        })
        .build()
}

/// The tool names listed to `token` on a session of its own.
async fn listed(mcp: &Mcp, token: &str) -> (String, Vec<String>) {
    let r = send(mcp.post(None, initialize_body(0)).header("authorization", token)).await;
    let session = header(&r, "mcp-session-id").expect("a session");
    let r = send(
        mcp.post(Some(&session), request(1, "tools/list", json!({})))
            .header("authorization", token),
    )
    .await;
    let body = json_body(r).await;
    let names = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    (session, names)
}

#[tokio::test]
async fn a_caller_sees_and_uses_only_what_its_scopes_allow() {
    let mcp = protected(server(), config());
    let (session, names) = listed(&mcp, "Bearer user-alice").await;
    assert_eq!(names, ["read"]);
    let r = send(
        mcp.post(
            Some(&session),
            request(7, "tools/call", json!({ "name": "write", "arguments": {} })),
        )
        .header("authorization", "Bearer user-alice"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let challenge = header(&r, "www-authenticate").expect("a step-up challenge");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#) && challenge.contains(r#"scope="files:write""#),
        "{challenge}"
    );
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    assert_eq!(
        json_body(r).await,
        json!({ "jsonrpc": "2.0", "id": 7, "error": {
            "code": -32003,
            "message": "The tool write needs the scopes files:write; the token lacks some",
            "data": { "requiredScopes": ["files:write"] }
        }})
    );
    // The hidden tool is unknown, not forbidden.
    let r = send(
        mcp.post(
            Some(&session),
            request(8, "tools/call", json!({ "name": "secret", "arguments": {} })),
        )
        .header("authorization", "Bearer user-alice"),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(json_body(r).await["error"]["message"], "Unknown tool: secret");
    let r = send(
        mcp.post(Some(&session), request(9, "ping", json!({})))
            .header("authorization", "Bearer user-alice"),
    )
    .await;
    assert_eq!(json_body(r).await, json!({ "jsonrpc": "2.0", "id": 9, "result": {} }));

    // With the scope (a stepped-up token), the tool is listed and served; bob sees the secret.
    let (session, names) = listed(&mcp, "Bearer user-alice#files:write").await;
    assert_eq!(names, ["read", "write"]);
    let r = send(
        mcp.post(
            Some(&session),
            request(9, "tools/call", json!({ "name": "write", "arguments": {} })),
        )
        .header("authorization", "Bearer user-alice#files:write"),
    )
    .await;
    assert_eq!(result_text(&json_body(r).await), "written");
    assert_eq!(listed(&mcp, "Bearer user-bob").await.1, ["read", "secret"]);
}

#[tokio::test]
async fn prompts_and_resources_are_refused_the_same_way_on_the_stateless_wire() {
    let mcp = protected(server(), config());
    let post = |method: &'static str, params: Value, name: &'static str| {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" }
        });
        mcp.post_with(
            None,
            json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": params }).to_string(),
            &[
                ("mcp-protocol-version", Some("2026-07-28")),
                ("mcp-method", Some(method)),
                ("mcp-name", Some(name)),
            ],
        )
        .header("authorization", "Bearer user-alice")
    };
    let r = send(post("prompts/get", json!({ "name": "plan" }), "plan")).await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(header(&r, "www-authenticate").unwrap().contains(r#"scope="plans""#));
    assert_eq!(json_body(r).await["error"]["data"]["requiredScopes"], json!(["plans"]));
    let r = send(post(
        "resources/read",
        json!({ "uri": "mem://private" }),
        "mem://private",
    ))
    .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let body = json_body(r).await;
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (json!(3), json!(-32003))
    );
    // Lists leave them out, with a private caching hint (another caller sees another list).
    let r = send(post("resources/list", json!({}), "")).await;
    let body = json_body(r).await;
    assert_eq!(body["result"]["resources"], json!([]), "{body}");
    assert_eq!(body["result"]["cacheScope"], json!("private"), "{body}");
}

#[tokio::test]
async fn without_a_token_no_caller_has_scopes() {
    let server = server();
    let page = server.call::<ListTools>(PaginatedParams::default()).await.unwrap();
    let names: Vec<_> = page.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read"]);
    let p: CallToolParams = serde_json::from_value(json!({ "name": "write", "arguments": {} })).unwrap();
    let e = server.call::<CallTool>(p).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INSUFFICIENT_SCOPE);
    // Unprotected HTTP: 403, and no challenge (no authorization server to step up with).
    let mcp = in_process(server, config());
    let session = mcp.open_session().await;
    let r = send(mcp.post(
        Some(&session),
        request(2, "tools/call", json!({ "name": "write", "arguments": {} })),
    ))
    .await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(header(&r, "www-authenticate"), None);
}

#[tokio::test]
async fn a_server_without_guarded_items_lists_the_shared_pages() {
    // No scopes, no hook: the pre-serialized page, with the list's public caching hint.
    let server = Server::builder()
        .tool(ToolDef::new("read", || async { "read" }))
        .build();
    let page = server
        .call_as::<ListTools>(mcpkit::types::ProtocolVersion::V2026_07_28, PaginatedParams::default())
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(page.cache_scope).unwrap(), json!("public"));
}
