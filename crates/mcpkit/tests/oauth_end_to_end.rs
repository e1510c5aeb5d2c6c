//! OAuth 2.1 end to end on 127.0.0.1: an mcpkit HTTP server protected by the resource-server
//! layer (JWT verification against a JWKS), a small authorization server written for the test
//! (dynamic registration, authorization code + PKCE, refresh, ES256 JWT access tokens), and the
//! mcpkit client completing the whole flow, refreshing an expired token and stepping up scope.
//! Also: the layer answers malformed, expired, wrong-audience and wrongly signed tokens with 401,
//! never forwards the client's token, and hands the verified identity to the application.
#![cfg(all(feature = "auth", feature = "client", feature = "server"))]

use crate::common;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Router};
use base64::Engine as _;
use common::within;
use mcpkit::auth::resource::{JwtVerifier, ProtectedResource};
use mcpkit::auth::{HeadlessAuthorizer, OAuthClient};
use mcpkit::client::ConnectMode;
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::transport::AuthInfo;
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use mcpkit_test_support::auth_server::{form, listen, new_key, now, sign, spawn, start_auth_server, AuthServer};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_authorizes_refreshes_and_steps_up() {
    authorize_refresh_step_up(ConnectMode::Handshake).await;
}

/// The same flow on the stateless wire: each 2026-07-28 POST is authorized (and re-authorized
/// on 401/403) exactly like a session's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_client_authorizes_refreshes_and_steps_up() {
    authorize_refresh_step_up(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)).await;
}

/// `server` on 127.0.0.1 behind the resource layer (scopes `mcp:read` needed, `mcp:write`
/// known; `layer` may add more), tokens from a new test authorization server; and an mcpkit
/// client logged in through it (headlessly) in `mode`.
async fn protected_client(
    server: Server,
    layer: impl FnOnce(ProtectedResource) -> ProtectedResource,
    mode: ConnectMode,
) -> (Client, OAuthClient, Arc<AuthServer>) {
    let (mcp_listener, base) = listen().await;
    let resource = format!("{base}/mcp");
    let auth = start_auth_server(&resource).await;
    let verifier = JwtVerifier::new(&auth.issuer, &format!("{}/jwks", auth.issuer), &resource).unwrap();
    let app = ProtectedResource::new(&resource, [auth.issuer.clone()], Arc::new(verifier))
        .unwrap()
        .scopes_supported(["mcp:read", "mcp:write"])
        .required_scopes(["mcp:read"]);
    spawn(mcp_listener, HttpServer::new(server).layer(layer(app)).router());
    let oauth = OAuthClient::builder(&resource)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(Arc::new(HeadlessAuthorizer::new().unwrap()))
        .build()
        .unwrap();
    let transport = HttpClientTransport::builder(&resource)
        .auth(Arc::new(oauth.clone()))
        .build()
        .unwrap();
    let client = within("connect", Client::builder().mode(mode).connect(transport))
        .await
        .unwrap();
    (client, oauth, auth)
}

async fn authorize_refresh_step_up(mode: ConnectMode) {
    let server = Server::builder()
        .name("protected", "1.0.0")
        .tool(ToolDef::new("write", || async { "written" }))
        .build();
    let (client, oauth, auth) =
        protected_client(server, |app| app.method_scopes("tools/call", ["mcp:write"]), mode).await;
    assert_eq!(client.is_stateless(), mode != ConnectMode::Handshake);
    let tools = within("tools/list", client.list_all_tools()).await.unwrap();
    assert_eq!(tools.len(), 1);
    {
        let seen = auth.seen.lock().unwrap();
        assert_eq!(seen.registrations, 1);
        assert_eq!(
            seen.authorize_scopes,
            vec![Some("mcp:read".to_owned())],
            "scope from the challenge"
        );
        assert_eq!(seen.refresh_grants, 1, "the expired first token was refreshed");
    }
    let result = within("tools/call", client.call_tool("write", json!({})))
        .await
        .unwrap();
    assert_eq!(result.content.as_slice()[0].as_text(), Some("written"));
    {
        let seen = auth.seen.lock().unwrap();
        assert_eq!(
            seen.authorize_scopes,
            vec![Some("mcp:read".to_owned()), Some("mcp:read mcp:write".to_owned())],
            "step-up asks for the union of the scopes"
        );
        assert_eq!(seen.registrations, 1, "the registration is reused for the same issuer");
    }
    assert_eq!(oauth.tokens().unwrap().scope.as_deref(), Some("mcp:read mcp:write"));
    within("close", client.close()).await.unwrap();
}

/// A tool that requires a scope (`require_scopes`, not a method scope): the client does not
/// see it at first; calling it by name gets 403 with the item's step-up challenge, the client
/// asks for the union of the scopes, and the retried call is served — in both eras.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_steps_up_for_a_tool_requiring_a_scope() {
    for mode in [
        ConnectMode::Handshake,
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        let server = Server::builder()
            .tool(ToolDef::new("read", || async { "read" }))
            .tool(ToolDef::new("write", || async { "written" }).require_scopes(["mcp:write"]))
            .build();
        let (client, _, auth) = protected_client(server, |app| app, mode).await;
        let names = |tools: Vec<mcpkit::types::schema::Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
        let tools = within("tools/list", client.list_all_tools()).await.unwrap();
        assert_eq!(names(tools), ["read"], "{mode:?}");
        let result = within("tools/call", client.call_tool("write", json!({})))
            .await
            .unwrap();
        assert_eq!(result.content.as_slice()[0].as_text(), Some("written"), "{mode:?}");
        let scopes = auth.seen.lock().unwrap().authorize_scopes.clone();
        assert_eq!(
            scopes.last().cloned().flatten().as_deref(),
            Some("mcp:read mcp:write"),
            "{mode:?}: step-up asks for the union: {scopes:?}"
        );
        let tools = within("tools/list", client.list_all_tools()).await.unwrap();
        assert_eq!(names(tools), ["read", "write"], "{mode:?}");
        within("close", client.close()).await.unwrap();
    }
}

/// An app behind the layer that reports what reached it.
async fn echo(headers: HeaderMap, Extension(info): Extension<AuthInfo>) -> String {
    json!({
        "authorization": headers.get(header::AUTHORIZATION).is_some(),
        "subject": info.subject,
        "scopes": info.scopes,
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_server_refuses_bad_tokens_and_hides_the_good_one() {
    let (mcp_listener, base) = listen().await;
    let resource = format!("{base}/mcp");
    let auth = start_auth_server(&resource).await;
    let verifier = JwtVerifier::new(&auth.issuer, &format!("{}/jwks", auth.issuer), &resource).unwrap();
    let rs = ProtectedResource::new(&resource, [auth.issuer.clone()], Arc::new(verifier))
        .unwrap()
        .required_scopes(["mcp:read"]);
    let metadata_url = rs.metadata_url().to_owned();
    spawn(mcp_listener, Router::new().route("/mcp", post(echo)).layer(rs));
    let http = reqwest::Client::new();
    let call = |token: Option<String>| {
        let mut r = http.post(&resource).body("{}");
        if let Some(t) = token {
            r = r.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        r.send()
    };

    // Metadata at the path-suffixed well-known URL.
    assert_eq!(metadata_url, format!("{base}/.well-known/oauth-protected-resource/mcp"));
    let prm: Value = http.get(&metadata_url).send().await.unwrap().json().await.unwrap();
    assert_eq!(prm["resource"], resource);
    assert_eq!(prm["authorization_servers"][0], auth.issuer);

    // No token: 401 with the challenge.
    let r = call(None).await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let challenge = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().to_owned();
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"mcp:read\"")
    );

    let claims = |aud: &str, exp: i64, scope: &str| json!({"iss": auth.issuer, "sub": "user-1", "aud": aud, "exp": exp, "scope": scope});
    let good = claims(&resource, now() + 600, "mcp:read");
    let other_key = new_key("as-key");
    let cases = [
        ("malformed", "not-a-jwt".to_owned()),
        ("garbage segments", "a.b.c".to_owned()),
        (
            "expired",
            sign(&auth.key, "as-key", &claims(&resource, now() - 600, "mcp:read")),
        ),
        (
            "wrong audience",
            sign(
                &auth.key,
                "as-key",
                &claims("https://other.example/mcp", now() + 600, "mcp:read"),
            ),
        ),
        ("wrongly signed", sign(&other_key, "as-key", &good)),
        ("unknown key id", sign(&auth.key, "nope", &good)),
        (
            "wrong issuer",
            sign(
                &auth.key,
                "as-key",
                &json!({"iss": "https://evil.example", "sub": "u", "aud": resource, "exp": now() + 600}),
            ),
        ),
    ];
    for (what, token) in cases {
        let r = call(Some(token)).await.unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{what}");
        let h = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
        assert!(h.contains("error=\"invalid_token\""), "{what}: {h}");
    }

    // Valid but without the scope: 403 insufficient_scope naming it.
    let r = call(Some(sign(
        &auth.key,
        "as-key",
        &claims(&resource, now() + 600, "other"),
    )))
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let h = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
    assert!(
        h.contains("error=\"insufficient_scope\"") && h.contains("scope=\"mcp:read\""),
        "{h}"
    );

    // Valid: the app sees the identity, not the token.
    let r = call(Some(sign(&auth.key, "as-key", &good))).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let seen: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    assert_eq!(
        seen,
        json!({"authorization": false, "subject": "user-1", "scopes": ["mcp:read"]})
    );
}

/// An RFC 7662 endpoint that knows a few opaque tokens and checks the resource server's
/// credentials.
async fn introspect(State(resource): State<Arc<String>>, headers: HeaderMap, body: Bytes) -> Response {
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("rs:rs-secret")
    );
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let token = form(&body).remove("token").unwrap_or_default();
    let claims = match token.as_str() {
        "good" => json!({"active": true, "sub": "user-2", "aud": *resource, "scope": "mcp:read", "exp": now() + 600}),
        "expired" => json!({"active": true, "sub": "user-2", "aud": *resource, "exp": now() - 600}),
        "elsewhere" => json!({"active": true, "sub": "user-2", "aud": "https://other.example/mcp"}),
        "unbound" => json!({"active": true, "sub": "user-2", "scope": "mcp:read"}),
        _ => json!({"active": false}),
    };
    ([(header::CONTENT_TYPE, "application/json")], claims.to_string()).into_response()
}

#[tokio::test]
async fn introspection_verifier_accepts_only_active_tokens_for_this_resource() {
    use mcpkit::auth::resource::{IntrospectionVerifier, TokenVerifier, VerifyError};
    let (l, base) = listen().await;
    let resource = "http://127.0.0.1:1/mcp".to_owned();
    spawn(
        l,
        Router::new()
            .route("/introspect", post(introspect))
            .with_state(Arc::new(resource.clone())),
    );
    let endpoint = format!("{base}/introspect");
    let verifier = IntrospectionVerifier::new(&endpoint, "rs", "rs-secret", &resource).unwrap();
    let info = verifier.verify("good").await.unwrap();
    assert_eq!(info.subject.as_deref(), Some("user-2"));
    assert_eq!(info.scopes, vec!["mcp:read"]);
    for bad in ["expired", "elsewhere", "unbound", "unknown", ""] {
        assert!(
            matches!(verifier.verify(bad).await, Err(VerifyError::Invalid(_))),
            "{bad:?} must be refused as invalid"
        );
    }
    // Wrong resource-server credentials: the endpoint refuses, which is not the token's fault.
    let wrong = IntrospectionVerifier::new(&endpoint, "rs", "nope", &resource).unwrap();
    assert!(matches!(wrong.verify("good").await, Err(VerifyError::Unavailable(_))));
}

/// A protected server whose `whoami` tool reports the caller's verified identity, on `config`
/// (Streamable HTTP at /mcp, HTTP+SSE at /sse + /messages); returns its resource URL and the
/// authorization server stand-in.
async fn protected_whoami(config: HttpConfig) -> (String, Arc<AuthServer>) {
    let (mcp_listener, base) = listen().await;
    let resource = format!("{base}/mcp");
    let auth = start_auth_server(&resource).await;
    let server = Server::builder()
        .name("protected", "1.0.0")
        .tool(ToolDef::new("whoami", |cx: RequestContext| async move {
            let Some(info) = cx.auth() else {
                return "anonymous".to_owned();
            };
            json!({
                "subject": info.subject,
                "client_id": info.client_id,
                "issuer": info.issuer,
                "scopes": info.scopes,
                "audience": info.audience,
                "expires": info.expires_at.is_some(),
                "claims_sub": info.claims.get("sub"),
            })
            .to_string()
        }))
        .build();
    let verifier = JwtVerifier::new(&auth.issuer, &format!("{}/jwks", auth.issuer), &resource).unwrap();
    let protection = ProtectedResource::new(&resource, [auth.issuer.clone()], Arc::new(verifier))
        .unwrap()
        .required_scopes(["mcp:read"]);
    let app = HttpServer::new(server)
        .config(config)
        .sse_legacy(true)
        .layer(protection)
        .router();
    spawn(mcp_listener, app);
    (resource, auth)
}

/// Connect the OAuth client to `url` in `mode`, call `whoami`, return what it reported.
async fn whoami(url: &str, resource: &str, mode: ConnectMode) -> Value {
    let oauth = OAuthClient::builder(resource)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(Arc::new(HeadlessAuthorizer::new().unwrap()))
        .build()
        .unwrap();
    let transport = if url.ends_with("/sse") {
        HttpClientTransport::builder(url).sse_legacy(true)
    } else {
        HttpClientTransport::builder(url)
    }
    .auth(Arc::new(oauth))
    .build()
    .unwrap();
    let client = within("connect", Client::builder().mode(mode).connect(transport))
        .await
        .unwrap();
    let result = within("whoami", client.call_tool("whoami", ())).await.unwrap();
    within("close", client.close()).await.unwrap();
    let text = result.content.as_slice()[0].as_text().unwrap().to_owned();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("whoami said {text:?}"))
}

/// Handlers read who called from their request context — subject, client, issuer, scopes,
/// audience, expiry, claims — on both eras and on every HTTP path: sessions, stateless
/// handshake-era POSTs, 2026-07-28 POSTs and the legacy HTTP+SSE transport.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_see_the_verified_caller_on_every_http_path() {
    let stateless_config = HttpConfig {
        sessionless: true,
        ..HttpConfig::default()
    };
    let pinned_2026 = ConnectMode::Pinned(ProtocolVersion::V2026_07_28);
    for (what, config, path, mode) in [
        ("session", HttpConfig::default(), "/mcp", ConnectMode::Handshake),
        ("2026-07-28", HttpConfig::default(), "/mcp", pinned_2026),
        (
            "stateless handshake era",
            stateless_config.clone(),
            "/mcp",
            ConnectMode::Handshake,
        ),
        ("stateless server, 2026-07-28", stateless_config, "/mcp", pinned_2026),
        ("HTTP+SSE", HttpConfig::default(), "/sse", ConnectMode::Handshake),
    ] {
        let (resource, auth) = protected_whoami(config).await;
        let url = resource.replace("/mcp", path);
        let seen = whoami(&url, &resource, mode).await;
        assert_eq!(
            seen,
            json!({
                "subject": "user-1", "client_id": "client-1", "issuer": auth.issuer,
                "scopes": ["mcp:read"], "audience": [resource], "expires": true, "claims_sub": "user-1",
            }),
            "{what}"
        );
    }
}

/// Without the layer a handler sees no identity, and a token sent anyway is not one.
#[tokio::test]
async fn an_unprotected_server_reports_no_caller() {
    let server = Server::builder()
        .tool(ToolDef::new("whoami", |cx: RequestContext| async move {
            cx.auth().map_or("anonymous".to_owned(), |i| format!("{:?}", i.subject))
        }))
        .build();
    let (l, base) = listen().await;
    spawn(l, HttpServer::new(server).router());
    let transport = HttpClientTransport::builder(format!("{base}/mcp"))
        .bearer_auth("forged")
        .build()
        .unwrap();
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    let result = within("whoami", client.call_tool("whoami", ())).await.unwrap();
    assert_eq!(result.content.as_slice()[0].as_text(), Some("anonymous"));
    within("close", client.close()).await.unwrap();
}
