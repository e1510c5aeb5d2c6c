//! The grants: the authorization code flow with PKCE, the grants without a user (client
//! credentials, RFC 7523 JWT bearer, enterprise-managed token exchange), refresh, and the one
//! token request they all end in.

use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use reqwest::header;
use reqwest::{StatusCode, Url};
use serde::Deserialize;

use super::super::metadata::{check_scheme, discover_authorization_server, ProtectedResourceMetadata};
use super::super::post::{oauth_post, Body, PostError};
use super::super::store::{ClientRegistration, TokenSet};
use super::super::AuthError;
use super::credentials::{authenticate, random_token, Auth, ClientCredentials};
use super::{bearer, Current, Discovered, OAuthClient};
use crate::sync::lock;

/// The RFC 7523 JWT-bearer grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

impl OAuthClient {
    /// The authorization code grant with PKCE S256, `state`, `resource` and RFC 9207 `iss`.
    pub(super) async fn authorization_code(
        &self,
        found: &Discovered,
        registration: &ClientRegistration,
        scope: Option<&str>,
    ) -> Result<TokenSet, AuthError> {
        let inner = &self.inner;
        let authorizer = inner
            .authorizer
            .as_ref()
            .ok_or_else(|| AuthError::Config("no authorizer configured".into()))?;
        let endpoint = found.meta.authorization_endpoint.as_deref().ok_or_else(|| {
            AuthError::Metadata(format!(
                "the authorization server {} has no authorization_endpoint",
                found.issuer
            ))
        })?;
        if let Some(methods) = &found.meta.code_challenge_methods_supported {
            if !methods.iter().any(|m| m == "S256") {
                return Err(AuthError::Metadata(format!(
                    "the authorization server {} does not support PKCE S256",
                    found.issuer
                )));
            }
        }
        let verifier = random_token(32)?;
        let challenge = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()));
        let state = random_token(24)?;
        let mut url =
            Url::parse(endpoint).map_err(|e| AuthError::Metadata(format!("invalid authorization_endpoint: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &inner.redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &found.prm.resource);
            if let Some(s) = scope {
                q.append_pair("scope", s);
            }
        }
        let redirected = authorizer.authorize(&url, &inner.redirect_uri).await?;
        let params: Vec<(String, String)> = redirected.query_pairs().into_owned().collect();
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        // RFC 9207: a present iss must equal the recorded issuer exactly; an advertised one
        // must be present.
        match get("iss") {
            Some(iss) if iss != found.issuer => {
                return Err(AuthError::Authorization(format!(
                    "the iss parameter {iss:?} is not the authorization server's issuer {:?}",
                    found.issuer
                )));
            }
            None if found.meta.authorization_response_iss_parameter_supported == Some(true) => {
                return Err(AuthError::Authorization(
                    "the authorization server advertises iss in responses, but the response has none".into(),
                ));
            }
            _ => {}
        }
        if get("state") != Some(state.as_str()) {
            return Err(AuthError::Authorization(
                "the state parameter does not match the request".into(),
            ));
        }
        if let Some(error) = get("error") {
            return Err(AuthError::Authorization(format!(
                "the authorization server refused: {error}{}",
                get("error_description").map(|d| format!(" ({d})")).unwrap_or_default()
            )));
        }
        let code = get("code").ok_or_else(|| AuthError::Authorization("the response has no code".into()))?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.to_owned()),
            ("redirect_uri", inner.redirect_uri.clone()),
            ("code_verifier", verifier),
            ("resource", found.prm.resource.clone()),
        ];
        self.token_request(found, &Auth::Registered(registration), form, None)
            .await
    }

    pub(super) async fn client_credentials_grant(
        &self,
        found: &Discovered,
        creds: &ClientCredentials,
        scope: Option<&str>,
    ) -> Result<TokenSet, AuthError> {
        let mut form = match creds {
            ClientCredentials::JwtBearer { assertion, .. } => {
                vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", assertion.clone())]
            }
            ClientCredentials::EnterpriseManaged {
                idp_token_endpoint,
                idp_client_id,
                id_token,
                ..
            } => {
                let grant = self
                    .exchange_id_token(found, idp_token_endpoint, idp_client_id, id_token, scope)
                    .await?;
                vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", grant)]
            }
            _ => vec![("grant_type", "client_credentials".to_owned())],
        };
        form.push(("resource", found.prm.resource.clone()));
        if let Some(s) = scope {
            form.push(("scope", s.to_owned()));
        }
        self.token_request(found, &Auth::Credentials(creds), form, None).await
    }

    /// RFC 8693 token exchange at the identity provider: the ID token for an ID-JAG naming this
    /// authorization server (audience) and resource.
    async fn exchange_id_token(
        &self,
        found: &Discovered,
        endpoint: &str,
        idp_client_id: &str,
        id_token: &str,
        scope: Option<&str>,
    ) -> Result<String, AuthError> {
        let url = Url::parse(endpoint)
            .map_err(|e| AuthError::Config(format!("invalid identity provider token endpoint: {e}")))?;
        check_scheme(&url)?;
        let mut form = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            ("subject_token", id_token.to_owned()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
            ("audience", found.issuer.clone()),
            ("resource", found.prm.resource.clone()),
            ("client_id", idp_client_id.to_owned()),
        ];
        if let Some(s) = scope {
            form.push(("scope", s.to_owned()));
        }
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: String,
            issued_token_type: Option<String>,
        }
        let e: Exchanged = oauth_post(self.inner.http.post(url), Body::Form(&form))
            .await
            .map_err(|e| e.into_auth(&format!("token exchange at {endpoint}"), AuthError::Token))?;
        if let Some(t) = &e.issued_token_type {
            if t != "urn:ietf:params:oauth:token-type:id-jag" {
                return Err(AuthError::Token(format!("token exchange issued {t:?}, not an ID-JAG")));
            }
        }
        Ok(e.access_token)
    }

    pub(super) async fn refresh(&self, current: &Current) -> Result<(), AuthError> {
        let Some(refresh_token) = current.tokens.refresh_token.clone() else {
            return Err(AuthError::Token("no refresh token".into()));
        };
        let meta = discover_authorization_server(&self.inner.http, &current.issuer).await?;
        let found = Discovered {
            prm: ProtectedResourceMetadata {
                resource: current.resource.clone(),
                authorization_servers: vec![current.issuer.clone()],
                scopes_supported: None,
                extra: Default::default(),
            },
            issuer: current.issuer.clone(),
            meta,
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", current.resource.clone()),
        ];
        let auth = match &self.inner.client_credentials {
            Some(c) => {
                self.token_request(&found, &Auth::Credentials(c), form, Some(&refresh_token))
                    .await?
            }
            None => {
                let registration = self
                    .inner
                    .store
                    .client(&current.issuer)
                    .await?
                    .ok_or_else(|| AuthError::Token("no registration for the issuer".into()))?;
                self.token_request(&found, &Auth::Registered(&registration), form, Some(&refresh_token))
                    .await?
            }
        };
        let header = bearer(&auth)?;
        self.inner
            .store
            .save_tokens(&current.issuer, &current.resource, auth.clone())
            .await?;
        self.set_current(&current.issuer, &current.resource, auth, header);
        Ok(())
    }

    /// POST to the token endpoint with the client authentication the server supports.
    async fn token_request(
        &self,
        found: &Discovered,
        auth: &Auth<'_>,
        mut form: Vec<(&'static str, String)>,
        old_refresh: Option<&str>,
    ) -> Result<TokenSet, AuthError> {
        let endpoint = &found.meta.token_endpoint;
        let url = Url::parse(endpoint).map_err(|e| AuthError::Metadata(format!("invalid token_endpoint: {e}")))?;
        check_scheme(&url)?;
        let basic = authenticate(&found.meta, &found.issuer, auth, &mut form)?;
        let dpop = found.meta.supports_dpop_es256();
        #[derive(Deserialize)]
        struct TokenResponse {
            access_token: String,
            token_type: String,
            expires_in: Option<u64>,
            refresh_token: Option<String>,
            scope: Option<String>,
        }
        let mut retried_nonce = false;
        let t: TokenResponse = loop {
            let mut req = self.inner.http.post(url.clone());
            if let Some(b) = &basic {
                req = req.header(header::AUTHORIZATION, b);
            }
            if dpop {
                let nonce = lock(&self.inner.dpop_nonces).authorization_server.clone();
                let proof = self.inner.dpop.proof("POST", &url, None, nonce.as_deref())?;
                req = req.header("dpop", proof);
            }
            match oauth_post(req, Body::Form(&form)).await {
                // RFC 9449 section 8: retry once with the nonce the server asks for.
                Err(PostError::Status {
                    status: StatusCode::BAD_REQUEST,
                    code: Some(code),
                    dpop_nonce: Some(nonce),
                    ..
                }) if dpop && !retried_nonce && code == "use_dpop_nonce" => {
                    lock(&self.inner.dpop_nonces).authorization_server = Some(nonce);
                    retried_nonce = true;
                }
                outcome => {
                    break outcome
                        .map_err(|e| e.into_auth(&format!("token request to {endpoint}"), AuthError::Token))?
                }
            }
        };
        let token_type = if t.token_type.eq_ignore_ascii_case("bearer") {
            "Bearer"
        } else if dpop && t.token_type.eq_ignore_ascii_case("dpop") {
            "DPoP"
        } else {
            return Err(AuthError::Token(format!("unsupported token_type {:?}", t.token_type)));
        };
        Ok(TokenSet {
            access_token: t.access_token,
            refresh_token: t.refresh_token.or_else(|| old_refresh.map(str::to_owned)),
            expires_at: t.expires_in.map(|s| SystemTime::now() + Duration::from_secs(s)),
            token_type: token_type.to_owned(),
            scope: t.scope.or_else(|| form_scope(&form)),
        })
    }
}

fn form_scope(form: &[(&str, String)]) -> Option<String> {
    form.iter().find(|(k, _)| *k == "scope").map(|(_, v)| v.clone())
}
