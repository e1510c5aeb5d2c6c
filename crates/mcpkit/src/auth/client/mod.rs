//! The OAuth 2.1 client: an [`HttpAuth`] provider for the HTTP client transport (spec:
//! `basic/authorization`).
//!
//! - [`authorizer`]: the front channel (sending the user to the authorization server).
//! - [`credentials`]: client credentials and token-endpoint client authentication.
//! - [`registration`]: how the client is known to an authorization server.
//! - [`grants`]: the grants, refresh, and the token request.

mod authorizer;
mod credentials;
mod grants;
mod loopback;
mod registration;

pub use authorizer::{Authorizer, HeadlessAuthorizer};
pub use credentials::ClientCredentials;
pub use loopback::LoopbackAuthorizer;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use reqwest::header::{self, HeaderValue};
use reqwest::{StatusCode, Url};

use super::challenge::BearerChallenge;
use super::metadata::{
    discover_authorization_server, discover_protected_resource, AuthorizationServerMetadata, ProtectedResourceMetadata,
};
use super::store::{MemoryTokenStore, TokenSet, TokenStore};
use super::AuthError;
use crate::sync::lock;
use crate::transport::http_client::AuthFuture;
use crate::transport::http_client::{AuthChallenge, HttpAuth};
use authorizer::no_redirect_client;
use credentials::signing_key;

/// How many step-up authorizations in a row that do not widen the requested scopes are tried.
const MAX_STEP_UPS_WITHOUT_NEW_SCOPE: u32 = 2;

/// Configures an [`OAuthClient`].
#[derive(Clone)]
pub struct OAuthClientBuilder {
    server_url: String,
    client_name: String,
    redirect_uri: String,
    application_type: Option<String>,
    client_metadata_url: Option<String>,
    preregistered: Vec<(Option<String>, String, Option<String>)>,
    client_credentials: Option<ClientCredentials>,
    authorizer: Option<Arc<dyn Authorizer>>,
    store: Option<Arc<dyn TokenStore>>,
    http: Option<reqwest::Client>,
}

impl std::fmt::Debug for OAuthClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClientBuilder")
            .field("server_url", &self.server_url)
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl OAuthClientBuilder {
    /// The client's name, sent in dynamic registration (default `mcpkit`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The redirect URI of the authorization code flow (default
    /// `http://127.0.0.1:33418/callback`).
    pub fn redirect_uri(mut self, uri: impl Into<String>) -> Self {
        self.redirect_uri = uri.into();
        self
    }

    /// The `application_type` sent in dynamic registration (default: `native` for a loopback
    /// or custom-scheme redirect URI, else `web`).
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.application_type = Some(kind.into());
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as the `client_id` with
    /// authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Credentials registered out of band. With `issuer`, they are used only with that
    /// authorization server; without, with any server that the client has no other
    /// registration for.
    pub fn preregistered(
        mut self,
        issuer: Option<String>,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.preregistered.push((issuer, client_id.into(), client_secret));
        self
    }

    /// Use the client credentials grant with these credentials instead of the authorization
    /// code flow.
    pub fn client_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.client_credentials = Some(credentials);
        self
    }

    /// How the user is sent to the authorization server (required for the authorization code
    /// flow).
    pub fn authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// Where registrations and tokens are kept (default: a fresh [`MemoryTokenStore`]).
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The HTTP client for metadata, registration and token requests. It should not follow
    /// redirects (the default one does not): redirects are followed here, within one origin.
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// Build the client.
    pub fn build(self) -> Result<OAuthClient, AuthError> {
        let server_url = Url::parse(&self.server_url)
            .map_err(|e| AuthError::Config(format!("invalid MCP server URL {:?}: {e}", self.server_url)))?;
        if self.client_credentials.is_none() && self.authorizer.is_none() {
            return Err(AuthError::Config(
                "the authorization code flow needs an authorizer (or configure client credentials)".into(),
            ));
        }
        if let Some(ClientCredentials::PrivateKeyJwt {
            private_key_pem,
            algorithm,
            ..
        }) = &self.client_credentials
        {
            signing_key(private_key_pem, algorithm)?;
        }
        let application_type = match self.application_type {
            Some(t) => t,
            None => {
                let native = Url::parse(&self.redirect_uri)
                    .map(|u| {
                        !matches!(u.scheme(), "http" | "https")
                            || matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
                    })
                    .unwrap_or(true);
                if native { "native" } else { "web" }.to_owned()
            }
        };
        let http = match self.http {
            Some(h) => h,
            None => no_redirect_client()?,
        };
        Ok(OAuthClient {
            inner: Arc::new(Inner {
                http,
                server_url,
                client_name: self.client_name,
                redirect_uri: self.redirect_uri,
                application_type,
                client_metadata_url: self.client_metadata_url,
                preregistered: self.preregistered,
                client_credentials: self.client_credentials,
                authorizer: self.authorizer,
                store: self.store.unwrap_or_else(|| Arc::new(MemoryTokenStore::new())),
                current: Mutex::new(None),
                flow: tokio::sync::Mutex::new(Flow::default()),
                dpop: super::dpop::DpopKey::generate()?,
                dpop_nonces: Mutex::new(DpopNonces::default()),
            }),
        })
    }
}

/// An OAuth 2.1 client for one MCP server: discovers the authorization server on the first
/// `401`, registers (Client ID Metadata Document, pre-registered credentials, or dynamic
/// registration), runs the authorization code flow with PKCE (or the client credentials grant),
/// refreshes tokens, and steps up scopes on `403 insufficient_scope`. Hand it to the transport
/// with [`HttpClientBuilder::auth`](crate::transport::http_client::HttpClientBuilder::auth).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use mcpkit::auth::{HeadlessAuthorizer, OAuthClient};
/// use mcpkit::transport::http_client::HttpClientTransport;
///
/// let url = "https://mcp.example.com/mcp";
/// let oauth = OAuthClient::builder(url)
///     .redirect_uri("http://127.0.0.1:33418/callback")
///     .authorizer(Arc::new(HeadlessAuthorizer::new()?))
///     .build()?;
/// let transport = HttpClientTransport::builder(url).auth(Arc::new(oauth)).build()?;
/// let client = mcpkit::Client::builder().connect(transport).await?;
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server_url", &self.inner.server_url.as_str())
            .finish_non_exhaustive()
    }
}

struct Inner {
    http: reqwest::Client,
    server_url: Url,
    client_name: String,
    redirect_uri: String,
    application_type: String,
    client_metadata_url: Option<String>,
    preregistered: Vec<(Option<String>, String, Option<String>)>,
    client_credentials: Option<ClientCredentials>,
    authorizer: Option<Arc<dyn Authorizer>>,
    store: Arc<dyn TokenStore>,
    /// The credentials in use (read synchronously for every request).
    current: Mutex<Option<Current>>,
    /// Serializes authorization work.
    flow: tokio::sync::Mutex<Flow>,
    /// The DPoP key, used with authorization servers that support DPoP (RFC 9449).
    dpop: super::dpop::DpopKey,
    /// The latest DPoP nonces the servers asked for.
    dpop_nonces: Mutex<DpopNonces>,
}

#[derive(Default)]
struct DpopNonces {
    authorization_server: Option<String>,
    resource_server: Option<String>,
}

#[derive(Clone)]
struct Current {
    header: HeaderValue,
    issuer: String,
    resource: String,
    tokens: TokenSet,
}

#[derive(Default)]
struct Flow {
    /// Scopes requested for the current token (step-up requests their union with new ones).
    scopes: BTreeSet<String>,
    /// Step-ups in a row that did not widen `scopes`.
    idle_step_ups: u32,
}

/// What the discovery step learned.
struct Discovered {
    prm: ProtectedResourceMetadata,
    issuer: String,
    meta: AuthorizationServerMetadata,
}

impl OAuthClient {
    /// Configure a client for the MCP server at `server_url`.
    pub fn builder(server_url: impl Into<String>) -> OAuthClientBuilder {
        OAuthClientBuilder {
            server_url: server_url.into(),
            client_name: "mcpkit".into(),
            redirect_uri: "http://127.0.0.1:33418/callback".into(),
            application_type: None,
            client_metadata_url: None,
            preregistered: Vec::new(),
            client_credentials: None,
            authorizer: None,
            store: None,
            http: None,
        }
    }

    /// The tokens in use, if any.
    pub fn tokens(&self) -> Option<TokenSet> {
        lock(&self.inner.current).as_ref().map(|c| c.tokens.clone())
    }

    /// Handle a refusal from the MCP server (what [`HttpAuth::challenge`] does).
    pub async fn handle_challenge(
        &self,
        status: StatusCode,
        www_authenticate: &[String],
        sent: Option<&HeaderValue>,
    ) -> Result<(), AuthError> {
        let inner = &self.inner;
        let mut flow = inner.flow.lock().await;
        let current = lock(&inner.current).clone();
        if let Some(c) = &current {
            if Some(&c.header) != sent {
                // Another request already renewed the credentials.
                return Ok(());
            }
        }
        let challenge = BearerChallenge::parse(www_authenticate).unwrap_or_default();
        let challenged: Vec<String> = challenge.scopes();
        let step_up = status == StatusCode::FORBIDDEN;
        if step_up {
            if challenge.error.as_deref() != Some("insufficient_scope") {
                return Err(AuthError::Forbidden(format!(
                    "HTTP 403 {}",
                    challenge
                        .error
                        .as_deref()
                        .unwrap_or("without an insufficient_scope challenge")
                )));
            }
            let before = flow.scopes.len();
            flow.scopes.extend(challenged.iter().cloned());
            if flow.scopes.len() == before {
                flow.idle_step_ups += 1;
                if flow.idle_step_ups > MAX_STEP_UPS_WITHOUT_NEW_SCOPE {
                    return Err(AuthError::StepUpLimit(flow.idle_step_ups));
                }
            } else {
                flow.idle_step_ups = 0;
            }
        } else if let Some(c) = &current {
            // An expired or revoked token: refresh when possible.
            if c.tokens.refresh_token.is_some() {
                match self.refresh(c).await {
                    Ok(()) => return Ok(()),
                    Err(e) => tracing::debug!("refreshing the token failed, authorizing again: {e}"),
                }
            }
        }

        let found = self.discover(challenge.resource_metadata.as_deref()).await?;
        let resource = found.prm.resource.clone();

        if !step_up {
            // A stored token we have not tried yet?
            if let Some(tokens) = inner.store.tokens(&found.issuer, &resource).await? {
                let header = bearer(&tokens)?;
                if Some(&header) != sent && !tokens.is_expired() {
                    self.set_current(&found.issuer, &resource, tokens, header);
                    return Ok(());
                }
                // Stored tokens this client has not refreshed yet (a persistent store read by a
                // new process, say): an expired access token is refreshed, not authorized anew.
                let tried = current.as_ref().is_some_and(|c| c.tokens == tokens);
                if tokens.refresh_token.is_some() && !tried {
                    let stored = Current {
                        header,
                        issuer: found.issuer.clone(),
                        resource: resource.clone(),
                        tokens,
                    };
                    match self.refresh(&stored).await {
                        Ok(()) => return Ok(()),
                        Err(e) => tracing::debug!("refreshing the stored token failed, authorizing again: {e}"),
                    }
                }
            }
            flow.scopes = if !challenged.is_empty() {
                challenged.into_iter().collect()
            } else {
                found
                    .prm
                    .scopes_supported
                    .clone()
                    .unwrap_or_default()
                    .into_iter()
                    .collect()
            };
            flow.idle_step_ups = 0;
        }
        let mut scopes = flow.scopes.clone();
        if !scopes.is_empty()
            && found
                .meta
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
            && found.meta.supports_grant("refresh_token")
        {
            scopes.insert("offline_access".into());
        }
        let scope = (!scopes.is_empty()).then(|| scopes.into_iter().collect::<Vec<_>>().join(" "));

        let tokens = match &inner.client_credentials {
            Some(creds) => self.client_credentials_grant(&found, creds, scope.as_deref()).await?,
            None => {
                let registration = self.registration(&found).await?;
                self.authorization_code(&found, &registration, scope.as_deref()).await?
            }
        };
        let header = bearer(&tokens)?;
        inner
            .store
            .save_tokens(&found.issuer, &resource, tokens.clone())
            .await?;
        self.set_current(&found.issuer, &resource, tokens, header);
        Ok(())
    }

    fn set_current(&self, issuer: &str, resource: &str, tokens: TokenSet, header: HeaderValue) {
        *lock(&self.inner.current) = Some(Current {
            header,
            issuer: issuer.to_owned(),
            resource: resource.to_owned(),
            tokens,
        });
    }

    async fn discover(&self, resource_metadata: Option<&str>) -> Result<Discovered, AuthError> {
        let inner = &self.inner;
        let prm = discover_protected_resource(&inner.http, &inner.server_url, resource_metadata).await?;
        // The first listed authorization server (spec: the client chooses).
        let issuer = prm.authorization_servers.first().cloned().ok_or_else(|| {
            AuthError::Metadata("the protected-resource metadata lists no authorization_servers".into())
        })?;
        let meta = discover_authorization_server(&inner.http, &issuer).await?;
        Ok(Discovered { prm, issuer, meta })
    }
}

impl HttpAuth for OAuthClient {
    fn authorization(&self) -> Option<HeaderValue> {
        lock(&self.inner.current).as_ref().map(|c| c.header.clone())
    }

    fn headers(&self, method: &reqwest::Method, url: &Url) -> Vec<(header::HeaderName, HeaderValue)> {
        let Some(current) = lock(&self.inner.current).clone() else {
            return Vec::new();
        };
        let mut out = vec![(header::AUTHORIZATION, current.header.clone())];
        if current.tokens.token_type.eq_ignore_ascii_case("dpop") {
            let nonce = lock(&self.inner.dpop_nonces).resource_server.clone();
            match self
                .inner
                .dpop
                .proof(
                    method.as_str(),
                    url,
                    Some(&current.tokens.access_token),
                    nonce.as_deref(),
                )
                .ok()
                .and_then(|p| HeaderValue::from_str(&p).ok())
            {
                Some(proof) => out.push((header::HeaderName::from_static("dpop"), proof)),
                None => tracing::warn!("could not make a DPoP proof"),
            }
        }
        out
    }

    fn challenge<'a>(&'a self, challenge: &'a AuthChallenge) -> AuthFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if challenge.status == StatusCode::UNAUTHORIZED {
                let parsed = BearerChallenge::parse(&challenge.www_authenticate).unwrap_or_default();
                if parsed.error.as_deref() == Some("use_dpop_nonce") {
                    // RFC 9449 section 9: retry with the resource server's nonce.
                    if let Some(n) = &challenge.dpop_nonce {
                        lock(&self.inner.dpop_nonces).resource_server = Some(n.clone());
                        return Ok(());
                    }
                }
            }
            self.handle_challenge(challenge.status, &challenge.www_authenticate, challenge.sent.as_ref())
                .await
                .map_err(|e| e.to_string())
        })
    }
}

fn bearer(tokens: &TokenSet) -> Result<HeaderValue, AuthError> {
    let scheme = if tokens.token_type.eq_ignore_ascii_case("dpop") {
        "DPoP"
    } else {
        "Bearer"
    };
    let mut v = HeaderValue::from_str(&format!("{scheme} {}", tokens.access_token))
        .map_err(|_| AuthError::Token("the access token is not a valid header value".into()))?;
    v.set_sensitive(true);
    Ok(v)
}
