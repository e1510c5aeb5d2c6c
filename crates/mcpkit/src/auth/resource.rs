//! The resource-server side (spec: `basic/authorization`, "Authorization Server Location",
//! "Access Token Usage", "Token Handling", "Scope Challenge Handling"): serve RFC 9728
//! protected-resource metadata, answer requests without a valid bearer token with `401` and a
//! `WWW-Authenticate` challenge, verify tokens through a [`TokenVerifier`] ([`JwtVerifier`] with a
//! cached JWKS, or [`IntrospectionVerifier`] for RFC 7662), check that the token was issued for
//! this resource (audience) and carries the needed scopes (`403 insufficient_scope` otherwise),
//! and hand the verified [`AuthInfo`] to the application as a request extension (and to the
//! MCP handler, in `RequestContext::extensions`), with the [`VerifiedCaller`] it names: the
//! endpoint binds each session and `requestState` to it.
//!
//! [`ProtectedResource`] is a tower layer: give it to `HttpServer::layer` (or any axum
//! `Router::layer`); it serves the metadata at its well-known path itself.
//!
//! The client's `Authorization` header is removed before the request reaches the MCP server, so
//! it can never be forwarded upstream.
//!
//! ```no_run
//! # async fn demo(server: mcpkit::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcpkit::auth::resource::{JwtVerifier, ProtectedResource};
//! use mcpkit::server::http::HttpServer;
//! use mcpkit::types::method::{CallTool, Method};
//!
//! let verifier = JwtVerifier::new(
//!     "https://auth.example.com",
//!     "https://auth.example.com/jwks.json",
//!     "https://mcp.example.com/mcp",
//! )?;
//! let protection = ProtectedResource::new("https://mcp.example.com/mcp", ["https://auth.example.com"], Arc::new(verifier))?
//!     .scopes_supported(["mcp:read", "mcp:write"])
//!     .required_scopes(["mcp:read"])
//!     .method_scopes(CallTool::NAME, ["mcp:write"]);
//! let app = HttpServer::new(server).layer(protection).router();
//! # let _ = app;
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bytes::Bytes;
use reqwest::Url;
use serde::Deserialize;
use tokio::sync::RwLock;

use super::metadata::{ProtectedResourceMetadata, MAX_DOCUMENT};
use super::post::{form_component, oauth_post, Body as PostBody};
use super::{AuthError, AuthFuture};
use crate::server::http::{read_capped, BodyError};
use crate::transport::http_client::read_response;
use crate::transport::{AuthInfo, Extensions, VerifiedCaller};

/// Why a token was not accepted.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The token is malformed, expired, wrongly signed, revoked or for another audience:
    /// `401 invalid_token`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked (the JWKS or introspection endpoint is unreachable):
    /// `503`.
    #[error("token verification unavailable: {0}")]
    Unavailable(String),
}

/// Checks bearer tokens.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verify `token` and say who it speaks for.
    fn verify<'a>(&'a self, token: &'a str) -> AuthFuture<'a, Result<AuthInfo, VerifyError>>;
}

fn http_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| AuthError::Config(format!("cannot create the HTTP client: {e}")))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Verifies JWT access tokens (RFC 9068) against the issuer's JSON Web Key Set, fetched and
/// cached (refetched after `cache_ttl`, or when a token names an unknown key id, at most once
/// per `min_refetch`). Checks signature, `iss`, `aud` (must contain the resource), `exp` and
/// `nbf`. Only asymmetric algorithms are accepted.
pub struct JwtVerifier {
    http: reqwest::Client,
    issuer: String,
    jwks_uri: Url,
    audience: String,
    leeway: u64,
    cache_ttl: Duration,
    min_refetch: Duration,
    cache: RwLock<Option<(jsonwebtoken::jwk::JwkSet, Instant)>>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("jwks_uri", &self.jwks_uri.as_str())
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// A verifier for tokens from `issuer`, signed by keys at `jwks_uri`, for `audience` (this
    /// server's resource identifier).
    pub fn new(issuer: impl Into<String>, jwks_uri: &str, audience: impl Into<String>) -> Result<Self, AuthError> {
        let jwks_uri =
            Url::parse(jwks_uri).map_err(|e| AuthError::Config(format!("invalid jwks_uri {jwks_uri:?}: {e}")))?;
        super::metadata::check_scheme(&jwks_uri)?;
        Ok(JwtVerifier {
            http: http_client()?,
            issuer: issuer.into(),
            jwks_uri,
            audience: audience.into(),
            leeway: 30,
            cache_ttl: Duration::from_secs(600),
            min_refetch: Duration::from_secs(30),
            cache: RwLock::new(None),
        })
    }

    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// How long a fetched key set is used before it is fetched again (default 10 minutes).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    async fn fetch(&self) -> Result<jsonwebtoken::jwk::JwkSet, VerifyError> {
        let response = self
            .http
            .get(self.jwks_uri.clone())
            .send()
            .await
            .map_err(|e| VerifyError::Unavailable(format!("fetching the JWKS: {e}")))?;
        if !response.status().is_success() {
            return Err(VerifyError::Unavailable(format!(
                "the JWKS endpoint answered HTTP {}",
                response.status()
            )));
        }
        let body = read_response(response, MAX_DOCUMENT)
            .await
            .map_err(|e| VerifyError::Unavailable(format!("the JWKS: {e}")))?;
        serde_json::from_slice(&body).map_err(|e| VerifyError::Unavailable(format!("the JWKS is not valid: {e}")))
    }

    /// The key for `kid` (or the only key when the token names none).
    async fn key(&self, kid: Option<&str>) -> Result<jsonwebtoken::jwk::Jwk, VerifyError> {
        let pick = |set: &jsonwebtoken::jwk::JwkSet| -> Option<jsonwebtoken::jwk::Jwk> {
            match kid {
                Some(k) => set.find(k).cloned(),
                None if set.keys.len() == 1 => set.keys.first().cloned(),
                None => None,
            }
        };
        let stale = {
            let cache = self.cache.read().await;
            match &*cache {
                Some((set, at)) => {
                    if at.elapsed() < self.cache_ttl {
                        if let Some(k) = pick(set) {
                            return Ok(k);
                        }
                    }
                    at.elapsed() >= self.min_refetch
                }
                None => true,
            }
        };
        if stale {
            let set = self.fetch().await?;
            let found = pick(&set);
            *self.cache.write().await = Some((set, Instant::now()));
            if let Some(k) = found {
                return Ok(k);
            }
        }
        Err(VerifyError::Invalid(match kid {
            Some(k) => format!("no key {k:?} in the issuer's key set"),
            None => "the token names no key id".into(),
        }))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> AuthFuture<'a, Result<AuthInfo, VerifyError>> {
        Box::pin(async move {
            use jsonwebtoken::Algorithm as A;
            let header =
                jsonwebtoken::decode_header(token).map_err(|e| VerifyError::Invalid(format!("malformed JWT: {e}")))?;
            if matches!(header.alg, A::HS256 | A::HS384 | A::HS512) {
                return Err(VerifyError::Invalid(
                    "symmetric (HS*) signatures are not accepted".into(),
                ));
            }
            let jwk = self.key(header.kid.as_deref()).await?;
            let key = jsonwebtoken::DecodingKey::from_jwk(&jwk)
                .map_err(|e| VerifyError::Invalid(format!("unusable key in the key set: {e}")))?;
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.set_issuer(&[&self.issuer]);
            validation.set_audience(&[&self.audience]);
            validation.leeway = self.leeway;
            validation.validate_nbf = true;
            validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &key, &validation)
                .map_err(|e| VerifyError::Invalid(e.to_string()))?;
            Ok(info_from_claims(data.claims))
        })
    }
}

fn info_from_claims(claims: serde_json::Map<String, serde_json::Value>) -> AuthInfo {
    let text = |k: &str| claims.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    let scopes = match (claims.get("scope"), claims.get("scp")) {
        (Some(serde_json::Value::String(s)), _) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        (_, Some(serde_json::Value::Array(a))) => a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        (_, Some(serde_json::Value::String(s))) => s.split_ascii_whitespace().map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    let audience = match claims.get("aud") {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        _ => Vec::new(),
    };
    AuthInfo {
        subject: text("sub"),
        client_id: text("client_id").or_else(|| text("azp")),
        issuer: text("iss"),
        scopes,
        audience,
        expires_at: claims.get("exp").and_then(|v| v.as_u64()),
        claims,
    }
}

/// Verifies opaque tokens with RFC 7662 token introspection, authenticating to the endpoint with
/// `client_secret_basic`. The response must be `active`, unexpired, and have an `aud` naming
/// this resource (spec: "Token Handling": tokens must have been issued for this server).
pub struct IntrospectionVerifier {
    http: reqwest::Client,
    endpoint: Url,
    client_id: String,
    client_secret: String,
    audience: String,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IntrospectionVerifier {
    /// A verifier asking `endpoint`, as the resource server's client `client_id`, about tokens
    /// meant for `audience` (this server's resource identifier).
    pub fn new(
        endpoint: &str,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<Self, AuthError> {
        let endpoint = Url::parse(endpoint)
            .map_err(|e| AuthError::Config(format!("invalid introspection endpoint {endpoint:?}: {e}")))?;
        super::metadata::check_scheme(&endpoint)?;
        Ok(IntrospectionVerifier {
            http: http_client()?,
            endpoint,
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            audience: audience.into(),
        })
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> AuthFuture<'a, Result<AuthInfo, VerifyError>> {
        Box::pin(async move {
            let basic = STANDARD.encode(format!(
                "{}:{}",
                form_component(&self.client_id),
                form_component(&self.client_secret)
            ));
            let form = [
                ("token", token.to_owned()),
                ("token_type_hint", "access_token".to_owned()),
            ];
            let request = self
                .http
                .post(self.endpoint.clone())
                .header(header::AUTHORIZATION, format!("Basic {basic}"));
            let claims: serde_json::Map<String, serde_json::Value> =
                oauth_post(request, PostBody::Form(&form))
                    .await
                    .map_err(|e| VerifyError::Unavailable(e.describe("the introspection endpoint")))?;
            if claims.get("active").and_then(|v| v.as_bool()) != Some(true) {
                return Err(VerifyError::Invalid("the token is not active".into()));
            }
            let info = info_from_claims(claims);
            if info.expires_at.is_some_and(|exp| exp <= now_secs()) {
                return Err(VerifyError::Invalid("the token has expired".into()));
            }
            // MCP requires the token to be bound to this resource: no `aud`, no access.
            if !info.audience.iter().any(|a| a == &self.audience) {
                return Err(VerifyError::Invalid(
                    "the token was not issued for this resource".into(),
                ));
            }
            Ok(info)
        })
    }
}

/// Protects an MCP endpoint with OAuth bearer tokens. See the [module docs](self).
#[derive(Clone)]
pub struct ProtectedResource {
    resource: String,
    metadata_url: String,
    metadata_path: String,
    metadata: ProtectedResourceMetadata,
    required: Vec<String>,
    per_method: HashMap<String, Vec<String>>,
    verifier: Arc<dyn TokenVerifier>,
    max_body: usize,
}

impl std::fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl ProtectedResource {
    /// Protect the MCP endpoint whose canonical URL (resource identifier) is `resource`, with
    /// tokens from `authorization_servers` (issuer identifiers), checked by `verifier`.
    pub fn new<I, S>(
        resource: &str,
        authorization_servers: I,
        verifier: Arc<dyn TokenVerifier>,
    ) -> Result<Self, AuthError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let url = Url::parse(resource).map_err(|e| AuthError::Config(format!("invalid resource {resource:?}: {e}")))?;
        if url.fragment().is_some() {
            return Err(AuthError::Config(
                "the resource identifier must not have a fragment".into(),
            ));
        }
        let path = url.path().trim_end_matches('/');
        let metadata_path = format!("/.well-known/oauth-protected-resource{path}");
        let mut metadata_url = url.clone();
        metadata_url.set_path(&metadata_path);
        metadata_url.set_query(None);
        Ok(ProtectedResource {
            resource: resource.to_owned(),
            metadata_url: metadata_url.to_string(),
            metadata_path,
            metadata: ProtectedResourceMetadata {
                resource: resource.to_owned(),
                authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
                scopes_supported: None,
                extra: Default::default(),
            },
            required: Vec::new(),
            per_method: HashMap::new(),
            verifier,
            max_body: 4 * 1024 * 1024,
        })
    }

    /// The scopes advertised in the metadata (`scopes_supported`).
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.metadata.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Scopes every request needs (named in the `401` challenge too).
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Extra scopes a JSON-RPC method needs (for example `tools/call`): a token without them
    /// gets `403 insufficient_scope`, and the client can step up.
    pub fn method_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, method: &str, scopes: I) -> Self {
        self.per_method
            .insert(method.to_owned(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The URL of the protected-resource metadata (what `resource_metadata` points to).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    fn challenge(&self, status: StatusCode, error: Option<(&str, &str)>, scopes: &[String]) -> Response {
        let mut value = format!("Bearer resource_metadata=\"{}\"", quote(&self.metadata_url));
        if !scopes.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", quote(&scopes.join(" "))));
        }
        if let Some((code, description)) = error {
            value.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                quote(description)
            ));
        }
        let body = serde_json::json!({
            "error": error.map(|e| e.0).unwrap_or("invalid_request"),
            "error_description": error.map(|e| e.1).unwrap_or("authorization required"),
        });
        let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

/// A quoted-string body: no quotes, backslashes or control characters.
fn quote(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control())
        .map(|c| if c == '"' || c == '\\' { '\'' } else { c })
        .collect()
}

#[derive(Deserialize)]
struct MethodOnly {
    method: Option<String>,
}

impl<S> tower_layer::Layer<S> for ProtectedResource {
    type Service = Protected<S>;

    fn layer(&self, inner: S) -> Protected<S> {
        Protected {
            metadata: Bytes::from(serde_json::to_vec(&self.metadata).unwrap_or_default()),
            resource: Arc::new(self.clone()),
            inner,
        }
    }
}

/// A service behind [`ProtectedResource`]: every request must carry a valid token, and the
/// metadata is served at its well-known path.
#[derive(Clone)]
pub struct Protected<S> {
    resource: Arc<ProtectedResource>,
    metadata: Bytes,
    inner: S,
}

impl<S> std::fmt::Debug for Protected<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protected")
            .field("resource", &self.resource.resource)
            .finish_non_exhaustive()
    }
}

impl<S> tower_service::Service<Request> for Protected<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service that was polled ready serves this request; a clone takes its place.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let rs = self.resource.clone();
        let metadata = self.metadata.clone();
        Box::pin(async move {
            if request.uri().path() == rs.metadata_path {
                return Ok(serve_metadata(request.method(), metadata));
            }
            match admit(&rs, request).await {
                Ok(request) => inner.call(request).await,
                Err(refused) => Ok(refused),
            }
        })
    }
}

/// The protected-resource metadata document, public (GET and HEAD only).
fn serve_metadata(method: &Method, metadata: Bytes) -> Response {
    if method == Method::GET || method == Method::HEAD {
        return ([(header::CONTENT_TYPE, "application/json")], metadata).into_response();
    }
    let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
    r
}

/// Let `request` through (without its `Authorization` header, with the verified [`AuthInfo`]
/// attached) or refuse it with the response to send.
async fn admit(rs: &ProtectedResource, request: Request) -> Result<Request, Response> {
    let (mut parts, body) = request.into_parts();
    let token = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(|t| t.trim().to_owned());
    let Some(token) = token.filter(|t| !t.is_empty()) else {
        return Err(rs.challenge(StatusCode::UNAUTHORIZED, None, &rs.required));
    };
    let info = match rs.verifier.verify(&token).await {
        Ok(info) => info,
        Err(VerifyError::Invalid(why)) => {
            tracing::debug!("bearer token refused: {why}");
            return Err(rs.challenge(StatusCode::UNAUTHORIZED, Some(("invalid_token", &why)), &rs.required));
        }
        Err(VerifyError::Unavailable(why)) => {
            tracing::warn!("bearer token could not be verified: {why}");
            return Err((StatusCode::SERVICE_UNAVAILABLE, "token verification is unavailable").into_response());
        }
    };
    if !info.audience.iter().any(|a| a == &rs.resource) {
        return Err(rs.challenge(
            StatusCode::UNAUTHORIZED,
            Some(("invalid_token", "the token was not issued for this resource")),
            &rs.required,
        ));
    }
    // The scopes this request needs: the global ones, plus the JSON-RPC method's.
    let mut needed = rs.required.clone();
    let body = if rs.per_method.is_empty() || parts.method != axum::http::Method::POST {
        body
    } else {
        let bytes = match read_capped(&parts.headers, body, rs.max_body).await {
            Ok(b) => b,
            Err(BodyError::TooLarge) => {
                return Err((StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response())
            }
            Err(BodyError::Broken(why)) => {
                return Err((StatusCode::BAD_REQUEST, format!("malformed request body: {why}")).into_response())
            }
            Err(e @ BodyError::TimedOut(_)) => return Err(e.reply(rs.max_body)),
        };
        if let Ok(MethodOnly { method: Some(m) }) = serde_json::from_slice::<MethodOnly>(&bytes) {
            if let Some(extra) = rs.per_method.get(&m) {
                for s in extra {
                    if !needed.contains(s) {
                        needed.push(s.clone());
                    }
                }
            }
        }
        Body::from(bytes)
    };
    if !needed.iter().all(|s| info.scopes.contains(s)) {
        return Err(rs.challenge(
            StatusCode::FORBIDDEN,
            Some(("insufficient_scope", "the token lacks a scope this request needs")),
            &needed,
        ));
    }
    // Never pass the client's token on.
    parts.headers.remove(header::AUTHORIZATION);
    // For the MCP handler (the HTTP endpoint hands these to the engine) and for axum handlers.
    // The verified caller, too: what the endpoint binds sessions and `requestState` to.
    let caller = VerifiedCaller::new(info.subject.clone(), info.client_id.clone());
    let mut extensions = parts.extensions.get::<Extensions>().cloned().unwrap_or_default();
    extensions.insert(info.clone());
    extensions.insert(caller.clone());
    parts.extensions.insert(extensions);
    parts.extensions.insert(info);
    parts.extensions.insert(caller);
    Ok(Request::from_parts(parts, body))
}
