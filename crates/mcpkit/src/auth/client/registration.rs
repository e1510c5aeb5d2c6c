//! How the client is known to an authorization server (spec: `basic/authorization` "Client
//! Registration Approaches"): a stored registration, pre-registered credentials, a Client ID
//! Metadata Document, or RFC 7591 dynamic registration.

use reqwest::Url;
use serde::Deserialize;

use super::super::metadata::check_scheme;
use super::super::post::{oauth_post, Body};
use super::super::store::ClientRegistration;
use super::super::AuthError;
use super::{Discovered, OAuthClient};

impl OAuthClient {
    /// How the client is known to the discovered server: stored, Client ID Metadata Document,
    /// pre-registered, or dynamically registered (spec: "Client Registration Approaches").
    pub(super) async fn registration(&self, found: &Discovered) -> Result<ClientRegistration, AuthError> {
        let inner = &self.inner;
        if let Some(r) = inner.store.client(&found.issuer).await? {
            if r.issuer == found.issuer {
                return Ok(r);
            }
        }
        let prereg = inner
            .preregistered
            .iter()
            .find(|(iss, _, _)| iss.as_deref() == Some(found.issuer.as_str()))
            .or_else(|| inner.preregistered.iter().find(|(iss, _, _)| iss.is_none()));
        let registration = if let Some((_, id, secret)) = prereg {
            ClientRegistration::new(found.issuer.clone(), id.clone(), secret.clone())
        } else if let (Some(url), Some(true)) = (
            inner.client_metadata_url.as_ref(),
            found.meta.client_id_metadata_document_supported,
        ) {
            let mut r = ClientRegistration::new(found.issuer.clone(), url.clone(), None);
            r.token_endpoint_auth_method = Some("none".into());
            r
        } else if let Some(endpoint) = &found.meta.registration_endpoint {
            self.register(found, endpoint).await?
        } else {
            return Err(AuthError::Registration(format!(
                "the authorization server {} supports neither Client ID Metadata Documents nor dynamic registration, and no client credentials are configured for it",
                found.issuer
            )));
        };
        inner.store.save_client(registration.clone()).await?;
        Ok(registration)
    }

    /// RFC 7591 dynamic client registration.
    async fn register(&self, found: &Discovered, endpoint: &str) -> Result<ClientRegistration, AuthError> {
        let inner = &self.inner;
        let method = if found.meta.supports_auth_method("none") {
            "none"
        } else if found.meta.supports_auth_method("client_secret_basic") {
            "client_secret_basic"
        } else {
            "client_secret_post"
        };
        let mut grant_types = vec!["authorization_code"];
        if found.meta.supports_grant("refresh_token") {
            grant_types.push("refresh_token");
        }
        let body = serde_json::json!({
            "client_name": inner.client_name,
            "redirect_uris": [inner.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": inner.application_type,
        });
        let url = Url::parse(endpoint).map_err(|e| AuthError::Registration(format!("invalid endpoint: {e}")))?;
        check_scheme(&url)?;
        #[derive(Deserialize)]
        struct Registered {
            client_id: String,
            client_secret: Option<String>,
            token_endpoint_auth_method: Option<String>,
        }
        let r: Registered = oauth_post(inner.http.post(url), Body::Json(&body))
            .await
            .map_err(|e| e.into_auth(&format!("dynamic registration at {endpoint}"), AuthError::Registration))?;
        let mut reg = ClientRegistration::new(found.issuer.clone(), r.client_id, r.client_secret);
        reg.token_endpoint_auth_method = r.token_endpoint_auth_method.or_else(|| Some(method.to_owned()));
        if reg.token_endpoint_auth_method.as_deref() != Some("none") && reg.client_secret.is_none() {
            reg.token_endpoint_auth_method = Some("none".into());
        }
        Ok(reg)
    }
}
