//! The official TypeScript SDK client (tests-interop/ts/oauth_step_up.mjs) against an mcpkit
//! server behind the OAuth resource layer, with a tool that requires a scope
//! (`ToolDef::require_scopes`): the SDK does not see the tool at first, its call gets 403 with
//! mcpkit's step-up challenge, the SDK authorizes again asking for the scopes the challenge
//! names, and the retried call is served. The authorization server is mcpkit's test stand-in.

use std::sync::Arc;

use mcpkit::auth::resource::{JwtVerifier, ProtectedResource};
use mcpkit::server::http::HttpServer;
use mcpkit::server::ToolDef;
use mcpkit::Server;
use mcpkit_test_support::auth_server::{listen, spawn, start_auth_server};
use serde_json::{json, Value};
use support::peers::{node, ts_dir};

use crate::support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_follows_the_challenge_and_the_call_is_served() {
    let (listener, base) = listen().await;
    let resource = format!("{base}/mcp");
    let auth = start_auth_server(&resource).await;
    let server = Server::builder()
        .tool(ToolDef::new("read", || async { "read" }))
        .tool(ToolDef::new("write", || async { "written" }).require_scopes(["mcp:write"]))
        .build();
    let verifier = JwtVerifier::new(&auth.issuer, &format!("{}/jwks", auth.issuer), &resource).unwrap();
    let layer = ProtectedResource::new(&resource, [auth.issuer.clone()], Arc::new(verifier))
        .unwrap()
        .scopes_supported(["mcp:read", "mcp:write"])
        .required_scopes(["mcp:read"]);
    spawn(listener, HttpServer::new(server).layer(layer).router());

    let script = ts_dir().join("oauth_step_up.mjs");
    let out = tokio::process::Command::new(node())
        .arg(&script)
        .arg(&resource)
        .arg("write")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or_default()).unwrap();
    assert_eq!(report["before"], json!(["read"]), "{report}");
    assert_eq!(report["result"], json!("written"), "{report}");
    assert_eq!(report["after"], json!(["read", "write"]), "{report}");
    let scopes = auth.seen.lock().unwrap().authorize_scopes.clone();
    assert_eq!(
        scopes.last().cloned().flatten().as_deref(),
        Some("mcp:read mcp:write"),
        "the SDK asked for the scopes the challenge named: {scopes:?}"
    );
}
