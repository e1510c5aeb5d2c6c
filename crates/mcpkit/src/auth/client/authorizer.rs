//! The front channel of the authorization code flow: an [`Authorizer`] sends the user to the
//! authorization server and returns where it redirected back to.

use std::time::Duration;

use reqwest::header;
use reqwest::Url;

use super::super::AuthError;
use crate::transport::http_client::AuthFuture;

/// Sends the user to the authorization URL and returns the URL the authorization server
/// redirected back to (the `redirect_uri` with `code`, `state`, `iss` or `error`). A desktop
/// client opens a browser and listens on its loopback redirect URI.
pub trait Authorizer: Send + Sync + 'static {
    /// Complete the front-channel part of the authorization code flow.
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a Url,
        redirect_uri: &'a str,
    ) -> AuthFuture<'a, Result<Url, AuthError>>;
}

/// An [`Authorizer`] for authorization servers that approve without user interaction (test
/// servers, and servers that already know the user): GETs the authorization URL without
/// following redirects and returns the `Location` it redirects to.
#[derive(Debug, Clone)]
pub struct HeadlessAuthorizer {
    http: reqwest::Client,
}

impl HeadlessAuthorizer {
    /// A headless authorizer with its own HTTP client.
    pub fn new() -> Result<Self, AuthError> {
        Ok(HeadlessAuthorizer {
            http: no_redirect_client()?,
        })
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize<'a>(
        &'a self,
        authorization_url: &'a Url,
        _redirect_uri: &'a str,
    ) -> AuthFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            let response = self
                .http
                .get(authorization_url.clone())
                .send()
                .await
                .map_err(|e| AuthError::Http(format!("authorization request to {authorization_url}: {e}")))?;
            if !response.status().is_redirection() {
                return Err(AuthError::Authorization(format!(
                    "the authorization endpoint answered HTTP {} instead of redirecting back",
                    response.status()
                )));
            }
            let location = response
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| AuthError::Authorization("the authorization redirect has no Location".into()))?;
            authorization_url
                .join(location)
                .map_err(|e| AuthError::Authorization(format!("invalid redirect {location:?}: {e}")))
        })
    }
}

/// The HTTP client of OAuth requests: redirects are followed by hand, within one origin.
pub(super) fn no_redirect_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .user_agent(concat!("mcpkit/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| AuthError::Config(format!("cannot create the HTTP client: {e}")))
}
