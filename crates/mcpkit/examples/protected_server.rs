//! An MCP server that requires OAuth 2.1 access tokens, and a client that gets one and calls
//! it (feature `auth`).
//!
//! ```text
//! cargo run -p mcpkit --features auth --example protected_server
//! ```
//!
//! Three parties run in this one process, each on its own loopback port:
//!
//! - a toy **authorization server** (at the bottom of this file; in production this is your
//!   identity provider) that issues opaque tokens with the client credentials grant and answers
//!   RFC 7662 token introspection;
//! - the **MCP server**, wrapped in [`ProtectedResource`]: it serves the RFC 9728
//!   protected-resource metadata, answers requests without a valid token with `401` and a
//!   `WWW-Authenticate` challenge naming that metadata, verifies tokens by introspection
//!   ([`IntrospectionVerifier`]; [`JwtVerifier`](mcpkit::auth::resource::JwtVerifier) checks JWTs
//!   against the issuer's JWKS instead), and checks audience and scopes;
//! - a **client** with an [`OAuthClient`] as its transport's `.auth(…)`: on the `401` it
//!   discovers the metadata and the authorization server, gets a token for this resource and
//!   retries, all inside `connect`.
//!
//! Output (ports vary):
//!
//! ```text
//! without a token: 401 Unauthorized, WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"
//! connected with a token from http://127.0.0.1:PORT (scope mcp:tools)
//! secret: The treasure is under the old oak.
//! ```
//!
//! Interactive clients use the authorization code flow instead of client credentials:
//! `OAuthClient::builder(url).authorizer(Arc::new(LoopbackAuthorizer::new(open_browser)))`
//! sends the user to the authorization page and receives the redirect on a loopback port.

use std::collections::HashMap;
use std::error::Error;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use mcpkit::auth::resource::{IntrospectionVerifier, ProtectedResource};
use mcpkit::auth::{ClientCredentials, OAuthClient};
use mcpkit::server::http::HttpServer;
use mcpkit::server::ToolDef;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::{Client, Server};
use serde_json::{json, Value};
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // 1. The authorization server (the issuer of tokens).
    let as_listener = TcpListener::bind("127.0.0.1:0").await?;
    let issuer = format!("http://{}", as_listener.local_addr()?);
    let toy = toy_authorization_server(&issuer);
    tokio::spawn(async move { axum::serve(as_listener, toy).await });

    // 2. The MCP server. Its resource identifier is the URL clients use; tokens must be issued
    //    for it (audience), and carry the `mcp:tools` scope.
    let mcp_listener = TcpListener::bind("127.0.0.1:0").await?;
    let resource = format!("http://{}/mcp", mcp_listener.local_addr()?);
    let server = Server::builder()
        .name("example-protected", "1.0.0")
        .tool(ToolDef::new("secret", || async {
            "The treasure is under the old oak."
        }))
        .build();
    // The MCP server's own credentials at the introspection endpoint.
    let verifier = IntrospectionVerifier::new(&format!("{issuer}/introspect"), "mcp-server", "rs-secret", &resource)?;
    let protection = ProtectedResource::new(&resource, [issuer.clone()], Arc::new(verifier))?
        .scopes_supported(["mcp:tools"])
        .required_scopes(["mcp:tools"]);
    tokio::spawn(HttpServer::new(server).layer(protection).serve(mcp_listener));

    // 3. What a client without a token sees.
    let refused = reqwest::Client::new()
        .post(&resource)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await?;
    let challenge = refused
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok());
    println!(
        "without a token: {}, WWW-Authenticate: {}",
        refused.status(),
        challenge.unwrap_or("(none)")
    );

    // 4. A client with OAuth. Here a machine client with pre-registered credentials; the
    //    OAuthClient finds the authorization server by itself, from the 401 challenge.
    let oauth = OAuthClient::builder(&resource)
        .client_credentials(ClientCredentials::Secret {
            client_id: "example-client".into(),
            client_secret: "client-secret".into(),
        })
        .build()?;
    let transport = HttpClientTransport::builder(&resource)
        .auth(Arc::new(oauth.clone()))
        .build()?;
    let client = Client::builder().connect(transport).await?;
    let scope = oauth.tokens().and_then(|t| t.scope).unwrap_or_default();
    println!("connected with a token from {issuer} (scope {scope})");

    let result = client.call_tool("secret", json!({})).await?;
    println!(
        "secret: {}",
        result.content.first().and_then(|c| c.as_text()).unwrap_or_default()
    );
    client.close().await?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// A toy authorization server: just enough OAuth for this example. Never use it for real.

/// Issued tokens: token → (client id, scope, resource).
type Tokens = Mutex<HashMap<String, (String, String, String)>>;

struct ToyAs {
    issuer: String,
    tokens: Tokens,
}

fn toy_authorization_server(issuer: &str) -> Router {
    let state = Arc::new(ToyAs {
        issuer: issuer.to_owned(),
        tokens: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/token", post(token))
        .route("/introspect", post(introspect))
        .with_state(state)
}

/// A JSON response.
fn reply(status: StatusCode, body: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// RFC 8414 authorization server metadata.
async fn metadata(State(s): State<Arc<ToyAs>>) -> Response {
    let i = &s.issuer;
    reply(
        StatusCode::OK,
        json!({
            "issuer": i,
            "token_endpoint": format!("{i}/token"),
            "introspection_endpoint": format!("{i}/introspect"),
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
            "response_types_supported": ["token"],
            "scopes_supported": ["mcp:tools"],
        }),
    )
}

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// The client credentials grant: a token bound to the requested resource (RFC 8707).
async fn token(State(s): State<Arc<ToyAs>>, body: Bytes) -> Response {
    let f = form(&body);
    let field = |k: &str| f.get(k).map(String::as_str).unwrap_or_default();
    if field("grant_type") != "client_credentials"
        || field("client_id") != "example-client"
        || field("client_secret") != "client-secret"
    {
        return reply(StatusCode::BAD_REQUEST, json!({"error": "invalid_client"}));
    }
    let mut tokens = s.tokens.lock().unwrap_or_else(|e| e.into_inner());
    let token = format!("token-{}", tokens.len() + 1);
    let scope = field("scope").to_owned();
    tokens.insert(
        token.clone(),
        (field("client_id").into(), scope.clone(), field("resource").into()),
    );
    let body = json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": scope});
    reply(StatusCode::OK, body)
}

/// RFC 7662 introspection, for the MCP server (which authenticates with its own credentials).
async fn introspect(State(s): State<Arc<ToyAs>>, headers: HeaderMap, body: Bytes) -> Response {
    use base64::Engine as _;
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("mcp-server:rs-secret")
    );
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some(expected.as_str()) {
        return reply(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let token = form(&body).remove("token").unwrap_or_default();
    let tokens = s.tokens.lock().unwrap_or_else(|e| e.into_inner());
    let claims = match tokens.get(&token) {
        Some((client_id, scope, resource)) => {
            json!({"active": true, "client_id": client_id, "scope": scope, "aud": resource, "iss": s.issuer})
        }
        None => json!({"active": false}),
    };
    reply(StatusCode::OK, claims)
}
