//! [`IntrospectionVerifier`]: opaque tokens checked at the authorization server (RFC 7662).

use super::*;

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
        crate::auth::metadata::check_scheme(&endpoint)?;
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
