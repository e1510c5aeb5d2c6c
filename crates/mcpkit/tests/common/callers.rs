//! Callers that authenticate: the real OAuth resource layer (`ProtectedResource`) in front of
//! the HTTP endpoint, with a token verifier stand-in (`user-NAME` is a valid token of user NAME,
//! client `app`; `user-NAME@CLIENT` through client CLIENT; `client-NAME` of client NAME alone), so tests of what is bound to the caller need no authorization server.

use std::sync::Arc;

use mcpkit::auth::resource::{ProtectedResource, TokenVerifier, VerifyError};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::transport::http_client::AuthFuture;
use mcpkit::transport::AuthInfo;
use mcpkit::Server;

use super::http::Mcp;

/// The issuer of every test token.
pub const ISSUER: &str = "https://issuer.test";

/// The resource the tokens are for: the endpoint as the router harness addresses it.
pub const RESOURCE: &str = "http://127.0.0.1:8000/mcp";

/// Accepts `user-NAME` as user NAME's token from client `app`, `user-NAME@CLIENT` from CLIENT,
/// and `client-NAME` as client NAME's own token (no user); every token is `ISSUER`'s. A suffix
/// `#A,B` grants scopes A and B (none otherwise).
pub struct UserTokens;

impl TokenVerifier for UserTokens {
    fn verify<'a>(&'a self, token: &'a str) -> AuthFuture<'a, Result<AuthInfo, VerifyError>> {
        Box::pin(async move {
            let mut info = AuthInfo::default();
            let (token, scopes) = token.split_once('#').unwrap_or((token, ""));
            info.scopes = scopes.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect();
            info.issuer = Some(ISSUER.to_owned());
            if let Some(client) = token.strip_prefix("client-") {
                // A client acting for no user (client credentials): no subject.
                info.client_id = Some(client.to_owned());
            } else {
                let user = token
                    .strip_prefix("user-")
                    .ok_or_else(|| VerifyError::Invalid("not a test token".into()))?;
                let (user, client) = user.split_once('@').unwrap_or((user, "app"));
                info.subject = Some(user.to_owned());
                info.client_id = Some(client.to_owned());
            }
            info.audience = vec![RESOURCE.to_owned()];
            Ok(info)
        })
    }
}

/// `server` behind the resource layer (Streamable HTTP at /mcp, HTTP+SSE at /sse +
/// /messages), driven through its router.
pub fn protected(server: Server, config: HttpConfig) -> Mcp {
    let layer = ProtectedResource::new(RESOURCE, [ISSUER], Arc::new(UserTokens)).unwrap();
    Mcp::router(
        HttpServer::new(server)
            .config(config)
            .sse_legacy(true)
            .layer(layer)
            .router(),
    )
}

/// The `Authorization` header value of `user`'s token (`NAME` or `NAME@CLIENT`).
pub fn bearer(user: &str) -> String {
    format!("Bearer user-{user}")
}
