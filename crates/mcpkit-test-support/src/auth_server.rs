//! A small OAuth 2.1 authorization server written for the tests (shared by mcpkit's in-process
//! `oauth_end_to_end` test and the real-process test of `mcpkit serve --http --auth-*`):
//! metadata (RFC 8414), a JWKS, dynamic registration (public clients), authorization code with
//! PKCE S256 and `iss` on the redirect, refresh tokens, and ES256 JWT access tokens for one
//! resource. The very first access token it issues is already expired, so a client must refresh
//! it. It asserts what a correct client sends (`resource`, PKCE, `application_type`, ...).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use tokio::net::TcpListener;

/// An ES256 key: the signing half and its public JWK.
pub struct Key {
    /// The private key, for signing.
    pub encoding: jsonwebtoken::EncodingKey,
    /// The public key as a JWK (`kty: EC`, `crv: P-256`), as a JWKS serves it.
    pub jwk: Value,
}

/// A fresh P-256 key whose JWK carries `kid`.
pub fn new_key(kid: &str) -> Key {
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

/// Seconds since the Unix epoch, as JWT `exp`/`iat` count them.
pub fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// An ES256 JWT of `claims`, signed by `key`, with `kid` in its header.
pub fn sign(key: &Key, kid: &str, claims: &Value) -> String {
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    h.kid = Some(kid.into());
    jsonwebtoken::encode(&h, claims, &key.encoding).unwrap()
}

/// What the authorization server stand-in saw.
#[derive(Default)]
pub struct Seen {
    /// Dynamic client registrations.
    pub registrations: usize,
    /// The `scope` of each authorization request.
    pub authorize_scopes: Vec<Option<String>>,
    /// `authorization_code` grants answered.
    pub code_grants: usize,
    /// `refresh_token` grants answered.
    pub refresh_grants: usize,
    /// Introspection requests answered (with the resource server's credentials).
    pub introspections: usize,
    /// code → (PKCE challenge, scope)
    pub codes: HashMap<String, (String, Option<String>)>,
    /// refresh token → scope
    pub refresh: HashMap<String, Option<String>>,
}

/// The running stand-in: who it is, whom it issues tokens for, and what it saw.
pub struct AuthServer {
    /// Its base URL, which is also its `issuer`.
    pub issuer: String,
    /// The protected resource its tokens are for (`aud`; the `resource` parameter it expects).
    pub resource: String,
    /// The key it signs access tokens with (`kid` `as-key`), published at `/jwks`.
    pub key: Key,
    /// What it saw so far.
    pub seen: Mutex<Seen>,
}

/// An `application/x-www-form-urlencoded` body (or query) as a map.
pub fn form(body: &[u8]) -> HashMap<String, String> {
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

/// RFC 7662 introspection of the tokens this server signed, for the resource server whose
/// credentials are `rs` / `rs-secret` (HTTP Basic): the token's claims with `active: true`, or
/// `{"active": false}` for anything it did not issue or that has expired.
async fn introspect(State(s): State<Arc<AuthServer>>, headers: axum::http::HeaderMap, body: Bytes) -> Response {
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("rs:rs-secret")
    );
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    s.seen.lock().unwrap().introspections += 1;
    let token = form(&body).remove("token").unwrap_or_default();
    let key = jsonwebtoken::DecodingKey::from_ec_components(
        s.key.jwk["x"].as_str().unwrap(),
        s.key.jwk["y"].as_str().unwrap(),
    )
    .unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.validate_aud = false;
    validation.leeway = 0;
    let answer = match jsonwebtoken::decode::<serde_json::Map<String, Value>>(&token, &key, &validation) {
        Ok(data) => {
            let mut claims = data.claims;
            claims.insert("active".into(), Value::Bool(true));
            Value::Object(claims)
        }
        Err(_) => json!({"active": false}),
    };
    ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response()
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

/// A listener on a free loopback port, and its base URL `http://127.0.0.1:PORT`.
pub async fn listen() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    (l, base)
}

/// Serve `app` on `l` in the background.
pub fn spawn(l: TcpListener, app: Router) {
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
}

/// Start the stand-in on a fresh port, issuing tokens for `resource`.
pub async fn start_auth_server(resource: &str) -> Arc<AuthServer> {
    let (l, issuer) = listen().await;
    start_auth_server_on(l, issuer, resource)
}

/// Start the stand-in on a listener already bound (its base URL is the issuer).
pub fn start_auth_server_on(l: TcpListener, issuer: String, resource: &str) -> Arc<AuthServer> {
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
        .route("/introspect", post(introspect))
        .with_state(s.clone());
    spawn(l, app);
    s
}
