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

use crate::auth::metadata::{ProtectedResourceMetadata, MAX_DOCUMENT};
use crate::auth::post::{form_component, oauth_post, Body as PostBody};
use crate::auth::AuthError;
use crate::server::http::{read_capped, BodyError};
use crate::transport::http_client::read_response;
use crate::transport::http_client::AuthFuture;
use crate::transport::{AuthInfo, Extensions, ScopeRefusal, VerifiedCaller};

mod introspection;
mod jwt;
mod layer;

pub use introspection::IntrospectionVerifier;
pub use jwt::JwtVerifier;
pub use layer::{Protected, ProtectedResource};

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
