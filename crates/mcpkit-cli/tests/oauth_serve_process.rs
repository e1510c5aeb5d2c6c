//! OAuth 2.1 end to end with a real process: `mcpkit serve --http 127.0.0.1:0` protected by the
//! resource-server layer (`--auth-issuer`, `--auth-jwks`, `--auth-scope`, `--auth-method-scope`),
//! the authorization-server stand-in written for mcpkit's tests (dynamic registration,
//! authorization code + PKCE, refresh, ES256 JWT access tokens; its first token is already
//! expired), and the mcpkit OAuth client completing the whole flow against the spawned process
//! on both eras: discovery from the 401, registration, authorization, refreshing the expired
//! token, and stepping up scope when `tools/call` needs more.

use std::sync::Arc;
use std::time::Duration;

use mcpkit::auth::{HeadlessAuthorizer, OAuthClient};
use mcpkit::client::ConnectMode;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::schema::{ElicitParams, ElicitResult, JsonObject};
use mcpkit::types::ProtocolVersion;
use mcpkit::Client;
use mcpkit_test_support::auth_server::{listen, start_auth_server_on, AuthServer};
use mcpkit_test_support::within;
use serde_json::{json, Value};
use tokio::process::Child;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

use crate::support;
use support::serve_http as serve;

/// How the protected process checks tokens.
#[derive(Clone, Copy, PartialEq)]
enum Verify {
    Jwks,
    Introspection,
}

/// A protected `mcpkit serve` process and the authorization server that issues its tokens.
async fn protected_process(verify: Verify) -> (Child, String, Arc<AuthServer>) {
    // The authorization server's port is bound first: the process is told its issuer URL, and
    // the stand-in learns the process's resource URL once it listens.
    let (as_listener, issuer) = listen().await;
    let jwks = format!("{issuer}/jwks");
    let introspect = format!("{issuer}/introspect");
    let verifier: Vec<&str> = match verify {
        Verify::Jwks => vec!["--auth-jwks", &jwks],
        Verify::Introspection => vec![
            "--auth-introspect",
            &introspect,
            "--auth-client-id",
            "rs",
            "--auth-client-secret",
            "rs-secret",
        ],
    };
    let (child, url, _stderr) = serve(
        &[
            &["--auth-issuer", &issuer][..],
            &verifier,
            &[
                "--auth-scopes-supported",
                "mcp:read,mcp:write",
                "--auth-scope",
                "mcp:read",
                "--auth-method-scope",
                "tools/call=mcp:write",
            ],
        ]
        .concat(),
    )
    .await;
    let auth = start_auth_server_on(as_listener, issuer, &url);
    (child, url, auth)
}

/// The full flow against the process, in `mode`.
async fn authorize_refresh_step_up(mode: ConnectMode, verify: Verify) {
    let (_child, url, auth) = protected_process(verify).await;
    let oauth = OAuthClient::builder(&url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(Arc::new(HeadlessAuthorizer::new().unwrap()))
        .build()
        .unwrap();
    let transport = HttpClientTransport::builder(&url)
        .auth(Arc::new(oauth.clone()))
        .build()
        .unwrap();
    let client = within("connect", Client::builder().mode(mode).connect(transport))
        .await
        .unwrap();
    assert_eq!(client.is_stateless(), mode != ConnectMode::Handshake);
    let tools = within("tools/list", client.list_all_tools()).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "the reference server's tools");
    {
        let seen = auth.seen.lock().unwrap();
        assert_eq!(seen.registrations, 1, "dynamic registration");
        assert_eq!(
            seen.authorize_scopes,
            vec![Some("mcp:read".to_owned())],
            "the scope of the 401 challenge"
        );
        assert_eq!(seen.code_grants, 1);
        assert_eq!(seen.refresh_grants, 1, "the expired first token was refreshed");
    }
    let result = within("tools/call", client.call_tool("echo", json!({"message": "authorized"})))
        .await
        .unwrap();
    assert_eq!(result.content.as_slice()[0].as_text(), Some("authorized"));
    {
        let seen = auth.seen.lock().unwrap();
        assert_eq!(
            seen.authorize_scopes,
            vec![Some("mcp:read".to_owned()), Some("mcp:read mcp:write".to_owned())],
            "step-up asks for the union of the scopes"
        );
        assert_eq!(seen.registrations, 1, "the registration is reused for the same issuer");
        assert_eq!(seen.code_grants, 2);
    }
    assert_eq!(oauth.tokens().unwrap().scope.as_deref(), Some("mcp:read mcp:write"));
    assert_eq!(
        auth.seen.lock().unwrap().introspections > 0,
        verify == Verify::Introspection,
        "tokens are introspected exactly when the process was told to"
    );
    within("close", client.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_serve_process_is_authorized_refreshed_and_stepped_up() {
    authorize_refresh_step_up(ConnectMode::Handshake, Verify::Jwks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serve_process_verifying_by_introspection_is_authorized_refreshed_and_stepped_up() {
    authorize_refresh_step_up(ConnectMode::Handshake, Verify::Introspection).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_serve_process_is_authorized_on_the_stateless_wire() {
    authorize_refresh_step_up(ConnectMode::Pinned(ProtocolVersion::V2026_07_28), Verify::Jwks).await;
}

/// Without a token the process answers 401 with the challenge, and serves its metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_serve_process_challenges_and_publishes_its_metadata() {
    let (_child, url, auth) = protected_process(Verify::Jwks).await;
    let http = reqwest::Client::new();
    let refused = within(
        "unauthenticated POST",
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(refused.status().as_u16(), 401);
    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        refused.headers()["www-authenticate"].to_str().unwrap(),
        format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"mcp:read\"")
    );
    let prm: Value = serde_json::from_slice(
        &within("metadata", http.get(&metadata_url).send())
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(prm["resource"], url);
    assert_eq!(prm["authorization_servers"], json!([auth.issuer]));
    assert_eq!(prm["scopes_supported"], json!(["mcp:read", "mcp:write"]));
    // The legacy HTTP+SSE endpoint is behind the layer too.
    let sse = within("unauthenticated GET /sse", http.get(url.replace("/mcp", "/sse")).send())
        .await
        .unwrap();
    assert_eq!(sse.status().as_u16(), 401);
}

/// Incomplete protection flags are a usage error naming what is missing, not an open server.
#[test]
fn auth_flags_without_a_verifier_are_refused() {
    let out = std::process::Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--auth-jwks or --auth-introspect"), "{stderr}");
}

/// A client that answers every elicitation at once, with `oauth` as its transport's auth.
async fn eliciting_client(url: &str, oauth: Option<OAuthClient>) -> Client {
    let mut transport = HttpClientTransport::builder(url);
    if let Some(oauth) = oauth {
        transport = transport.auth(Arc::new(oauth));
    }
    let builder = Client::builder()
        .on_elicitation(|_params: ElicitParams| async move { Ok(ElicitResult::accept(JsonObject::new())) });
    within("connect", builder.connect(transport.build().unwrap()))
        .await
        .unwrap()
}

/// The median time of `calls` sequential `test_elicitation_sep1034_defaults` calls: each is
/// answered on an SSE stream written twice (the elicitation request, then, once the client
/// answered it, the result), so without `TCP_NODELAY` the second write waits for the client's
/// delayed ACK.
async fn median_sse_call(client: &Client, calls: usize) -> Duration {
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = std::time::Instant::now();
        let result = within(
            "an elicitation call",
            client.call_tool("test_elicitation_sep1034_defaults", json!({})),
        )
        .await
        .unwrap();
        times.push(start.elapsed());
        let text = result.content.as_slice()[0].as_text().unwrap_or_default();
        assert!(text.starts_with("Elicitation completed"), "{text}");
    }
    times.sort();
    times[calls / 2]
}

/// `serve --http --auth-*` serves through the same `HttpServer::serve` as the unprotected
/// server, so its SSE replies do not wait ~40 ms for a delayed ACK (they did when the protected
/// path bound its own listener without `TCP_NODELAY`). Compared with the unprotected path in
/// the same test, not against a fixed time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_serve_process_answers_sse_calls_as_fast_as_an_unprotected_one() {
    const CALLS: usize = 20;
    let (_plain_child, plain_url, _plain_stderr) = serve(&[]).await;
    let plain = eliciting_client(&plain_url, None).await;
    let (_child, url, _auth) = protected_process(Verify::Jwks).await;
    let oauth = OAuthClient::builder(&url)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(Arc::new(HeadlessAuthorizer::new().unwrap()))
        .build()
        .unwrap();
    let protected = eliciting_client(&url, Some(oauth)).await;
    // Warm up both (the protected client steps its token up to `tools/call`'s scope here).
    median_sse_call(&plain, 2).await;
    median_sse_call(&protected, 2).await;
    let unprotected = median_sse_call(&plain, CALLS).await;
    let protected_time = median_sse_call(&protected, CALLS).await;
    eprintln!("median SSE call: unprotected {unprotected:?}, protected {protected_time:?}");
    assert!(
        protected_time < unprotected * 3 + Duration::from_millis(10),
        "a protected SSE call takes {protected_time:?}, an unprotected one {unprotected:?}: \
         the protected path waits for delayed ACKs (TCP_NODELAY missing?)"
    );
    within("close", plain.close()).await.unwrap();
    within("close", protected.close()).await.unwrap();
}
