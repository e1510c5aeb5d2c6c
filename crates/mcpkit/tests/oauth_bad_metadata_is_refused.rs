//! Hostile or broken authorization metadata is refused with an error naming the problem, before
//! any registration or token request: wrong issuer, a resource that is not this server, a
//! redirect to another host, an oversized document, a wrong `iss` in the authorization response.
//! The stand-in counts every registration and token request, and records any secret it is sent.
#![cfg(all(feature = "auth", feature = "client"))]

use crate::common;

use std::sync::{Arc, Mutex};

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use common::within;
use mcpkit::auth::{AuthError, HeadlessAuthorizer, OAuthClient};
use serde_json::json;
use tokio::net::TcpListener;

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    WrongIssuer,
    WrongResource,
    RedirectElsewhere,
    Oversized,
    WrongIss,
}

struct Stand {
    base: String,
    fault: Fault,
    /// Registration and token requests, and any Authorization header they carried.
    hits: Mutex<Vec<String>>,
}

fn json_response(v: serde_json::Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

async fn prm(State(s): State<Arc<Stand>>) -> Response {
    match s.fault {
        Fault::WrongResource => json_response(json!({
            "resource": "https://evil.example.com/mcp",
            "authorization_servers": [s.base],
        })),
        Fault::RedirectElsewhere => {
            // Same port, other host name: another origin.
            let elsewhere = s.base.replace("127.0.0.1", "localhost");
            (
                StatusCode::FOUND,
                [(
                    header::LOCATION,
                    format!("{elsewhere}/.well-known/oauth-protected-resource/mcp"),
                )],
            )
                .into_response()
        }
        Fault::Oversized => {
            let padding = "x".repeat(300 * 1024);
            json_response(
                json!({"resource": format!("{}/mcp", s.base), "authorization_servers": [s.base], "padding": padding}),
            )
        }
        _ => json_response(json!({"resource": format!("{}/mcp", s.base), "authorization_servers": [s.base]})),
    }
}

async fn as_meta(State(s): State<Arc<Stand>>) -> Response {
    let b = &s.base;
    let issuer = if s.fault == Fault::WrongIssuer {
        "https://evil.example.com".to_owned()
    } else {
        b.clone()
    };
    json_response(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{b}/authorize"),
        "token_endpoint": format!("{b}/token"),
        "registration_endpoint": format!("{b}/register"),
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn register(State(s): State<Arc<Stand>>) -> Response {
    s.hits.lock().unwrap().push("register".into());
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"client_id": "c", "client_secret": "s3cret", "token_endpoint_auth_method": "client_secret_basic"})
            .to_string(),
    )
        .into_response()
}

async fn authorize(State(s): State<Arc<Stand>>, RawQuery(q): RawQuery) -> Response {
    let q: std::collections::HashMap<String, String> = url::form_urlencoded::parse(q.unwrap_or_default().as_bytes())
        .into_owned()
        .collect();
    let mut to = url::Url::parse(&q["redirect_uri"]).unwrap();
    to.query_pairs_mut()
        .append_pair("code", "the-code")
        .append_pair("state", &q["state"])
        // Only equal after normalisation: must be refused.
        .append_pair("iss", &format!("{}/", s.base));
    (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
}

async fn token(State(s): State<Arc<Stand>>, headers: HeaderMap) -> Response {
    let auth = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or("?").to_owned())
        .unwrap_or_default();
    s.hits.lock().unwrap().push(format!("token {auth}"));
    json_response(json!({"access_token": "t", "token_type": "Bearer"}))
}

async fn attempt(fault: Fault) -> (AuthError, Vec<String>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    let stand = Arc::new(Stand {
        base: base.clone(),
        fault,
        hits: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(as_meta))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(stand.clone());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });

    let client = OAuthClient::builder(format!("{base}/mcp"))
        .redirect_uri("http://127.0.0.1:9/callback")
        .authorizer(Arc::new(HeadlessAuthorizer::new().unwrap()))
        .build()
        .unwrap();
    let challenge = vec![format!(
        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
    )];
    let err = within(
        "the authorization attempt",
        client.handle_challenge(StatusCode::UNAUTHORIZED, &challenge, None),
    )
    .await
    .expect_err("hostile metadata must be refused");
    assert!(client.tokens().is_none());
    let hits = stand.hits.lock().unwrap().clone();
    (err, hits)
}

#[tokio::test]
async fn wrong_issuer_is_refused_before_registration() {
    let (err, hits) = attempt(Fault::WrongIssuer).await;
    assert!(
        matches!(&err, AuthError::IssuerMismatch { found, .. } if found == "https://evil.example.com"),
        "{err}"
    );
    assert!(err.to_string().contains("issuer"), "{err}");
    assert!(hits.is_empty(), "{hits:?}");
}

#[tokio::test]
async fn resource_of_another_server_is_refused() {
    let (err, hits) = attempt(Fault::WrongResource).await;
    assert!(
        matches!(&err, AuthError::ResourceMismatch { found, .. } if found == "https://evil.example.com/mcp"),
        "{err}"
    );
    assert!(hits.is_empty(), "{hits:?}");
}

#[tokio::test]
async fn redirect_to_another_host_is_refused() {
    let (err, hits) = attempt(Fault::RedirectElsewhere).await;
    assert!(err.to_string().contains("redirects to another host"), "{err}");
    assert!(hits.is_empty(), "{hits:?}");
}

#[tokio::test]
async fn oversized_metadata_is_refused() {
    let (err, hits) = attempt(Fault::Oversized).await;
    assert!(err.to_string().contains("exceeds the 262144-byte limit"), "{err}");
    assert!(hits.is_empty(), "{hits:?}");
}

#[tokio::test]
async fn normalised_iss_is_refused_and_no_token_is_requested() {
    let (err, hits) = attempt(Fault::WrongIss).await;
    assert!(matches!(err, AuthError::Authorization(_)), "{err}");
    assert!(err.to_string().contains("iss"), "{err}");
    // Registration happened (the metadata was sound), but the code never reached the token
    // endpoint, so the client secret was never sent.
    assert_eq!(hits, vec!["register".to_owned()]);
}
