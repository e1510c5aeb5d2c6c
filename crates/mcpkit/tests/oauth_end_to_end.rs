//! OAuth 2.1 end to end on 127.0.0.1: an mcpkit HTTP server protected by the resource-server
//! layer (JWT verification against a JWKS), a small authorization server written for the test
//! (dynamic registration, authorization code + PKCE, refresh, ES256 JWT access tokens), and the
//! mcpkit client completing the whole flow, refreshing an expired token and stepping up scope.
//! Also: the layer answers malformed, expired, wrong-audience and wrongly signed tokens with 401,
//! never forwards the client's token, and hands the verified identity to the application.
#![cfg(all(feature = "auth", feature = "client", feature = "server"))]
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use common::within;
use mcpkit::auth::resource::{AuthInfo, JwtVerifier, ProtectedResource};
use mcpkit::auth::{HeadlessAuthorizer, OAuthClient};
use mcpkit::server::ToolDef;
use mcpkit::transport::http::client::HttpClientTransport;
use mcpkit::transport::http::server::{router, HttpConfig};
use mcpkit::{Client, Server};
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use tokio::net::TcpListener;

/// An ES256 key: the signing half and its public JWK.
struct Key {
    encoding: jsonwebtoken::EncodingKey,
    jwk: Value,
}

fn new_key(kid: &str) -> Key {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    let point = pair.public_key().as_ref(); // 0x04 || X || Y
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    });
    Key {
        encoding: jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_ref()),
        jwk,
    }
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

fn sign(key: &Key, kid: &str, claims: &Value) -> String {
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    h.kid = Some(kid.into());
    jsonwebtoken::encode(&h, claims, &key.encoding).unwrap()
}

/// What the authorization server stand-in saw.
#[derive(Default)]
struct Seen {
    registrations: usize,
    /// The `scope` of each authorization request.
    authorize_scopes: Vec<Option<String>>,
    code_grants: usize,
    refresh_grants: usize,
    /// code → (PKCE challenge, scope)
    codes: HashMap<String, (String, Option<String>)>,
    /// refresh token → scope
    refresh: HashMap<String, Option<String>>,
}

struct AuthServer {
    issuer: String,
    resource: String,
    key: Key,
    seen: Mutex<Seen>,
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

impl AuthServer {
    /// An access token for `scope`; the first one is issued already expired, so the client
    /// must refresh it.
    fn access_token(&self, scope: &Option<String>, expired: bool) -> String {
        let exp = if expired { now() - 600 } else { now() + 3600 };
        sign(
            &self.key,
            "as-key",
            &json!({
                "iss": self.issuer, "sub": "user-1", "aud": self.resource, "client_id": "client-1",
                "exp": exp, "iat": now(), "scope": scope.clone().unwrap_or_default(),
            }),
        )
    }
}

async fn as_metadata(State(s): State<Arc<AuthServer>>) -> Response {
    let i = &s.issuer;
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({
            "issuer": i,
            "authorization_endpoint": format!("{i}/authorize"),
            "token_endpoint": format!("{i}/token"),
            "registration_endpoint": format!("{i}/register"),
            "jwks_uri": format!("{i}/jwks"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
        })
        .to_string(),
    )
        .into_response()
}

async fn jwks(State(s): State<Arc<AuthServer>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"keys": [s.key.jwk]}).to_string(),
    )
        .into_response()
}

async fn register(State(s): State<Arc<AuthServer>>, body: Bytes) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(req["application_type"], "native");
    assert_eq!(req["token_endpoint_auth_method"], "none");
    s.seen.lock().unwrap().registrations += 1;
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"client_id": "client-1", "redirect_uris": req["redirect_uris"], "token_endpoint_auth_method": "none"})
            .to_string(),
    )
        .into_response()
}

async fn authorize(State(s): State<Arc<AuthServer>>, RawQuery(q): RawQuery) -> Response {
    let q = form(q.unwrap_or_default().as_bytes());
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["client_id"], "client-1");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(
        q["resource"], s.resource,
        "the resource parameter is the PRM resource verbatim"
    );
    let mut seen = s.seen.lock().unwrap();
    let code = format!("code-{}", seen.authorize_scopes.len());
    seen.authorize_scopes.push(q.get("scope").cloned());
    seen.codes
        .insert(code.clone(), (q["code_challenge"].clone(), q.get("scope").cloned()));
    let mut to = url::Url::parse(&q["redirect_uri"]).unwrap();
    to.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &q["state"])
        .append_pair("iss", &s.issuer);
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
}

async fn token(State(s): State<Arc<AuthServer>>, body: Bytes) -> Response {
    let f = form(&body);
    assert_eq!(f["resource"], s.resource);
    assert_eq!(f["client_id"], "client-1");
    let mut seen = s.seen.lock().unwrap();
    let scope = match f["grant_type"].as_str() {
        "authorization_code" => {
            let (challenge, scope) = seen.codes.remove(&f["code"]).expect("a code issued once");
            let computed = URL_SAFE_NO_PAD.encode(ring::digest::digest(
                &ring::digest::SHA256,
                f["code_verifier"].as_bytes(),
            ));
            assert_eq!(computed, challenge, "PKCE verifier matches the challenge");
            seen.code_grants += 1;
            scope
        }
        "refresh_token" => {
            seen.refresh_grants += 1;
            seen.refresh
                .get(&f["refresh_token"])
                .cloned()
                .expect("a known refresh token")
        }
        other => panic!("unexpected grant {other}"),
    };
    // The very first access token is already expired.
    let expired = seen.code_grants == 1 && seen.refresh_grants == 0;
    let refresh = format!("refresh-{}", seen.code_grants + seen.refresh_grants);
    seen.refresh.insert(refresh.clone(), scope.clone());
    let access = s.access_token(&scope, expired);
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh, "scope": scope})
            .to_string(),
    )
        .into_response()
}

async fn listen() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    (l, base)
}

fn spawn(l: TcpListener, app: Router) {
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
}

async fn start_auth_server(resource: &str) -> Arc<AuthServer> {
    let (l, issuer) = listen().await;
    let s = Arc::new(AuthServer {
        issuer,
        resource: resource.to_owned(),
        key: new_key("as-key"),
        seen: Mutex::new(Seen::default()),
    });
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route("/jwks", get(jwks))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(s.clone());
    spawn(l, app);
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_authorizes_refreshes_and_steps_up() {
    let (mcp_listener, base) = listen().await;
    let resource = format!("{base}/mcp");
    let auth = start_auth_server(&resource).await;

    let server = Server::builder()
        .name("protected", "1.0.0")
        .tool(ToolDef::new("write", || async { "written" }))
        .build();
    let verifier = JwtVerifier::new(&auth.issuer, &format!("{}/jwks", auth.issuer), &resource).unwrap();
    let app = ProtectedResource::new(&resource, [auth.issuer.clone()], Arc::new(verifier))
        .unwrap()
        .scopes_supported(["mcp:read", "mcp:write"])
        .required_scopes(["mcp:read"])
        .method_scopes("tools/call", ["mcp:write"])
        .protect(router(server, HttpConfig::default(), "/mcp"));
    spawn(mcp_listener, app);

    let oauth = OAuthClient::builder(&resource)
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(Arc::new(HeadlessAuthorizer::new().unwrap()))
        .build()
        .unwrap();
    let transport = HttpClientTransport::builder(&resource)
        .auth(Arc::new(oauth.clone()))
        .build()
        .unwrap();
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
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
    spawn(mcp_listener, rs.protect(Router::new().route("/mcp", post(echo))));
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
