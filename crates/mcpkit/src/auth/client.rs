//! The OAuth 2.1 client: an [`HttpAuth`] provider for the HTTP client transport (spec:
//! `basic/authorization`).

use crate::sync::lock;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use reqwest::header::{self, HeaderValue};
use reqwest::{StatusCode, Url};
use serde::Deserialize;

use super::challenge::BearerChallenge;
use super::metadata::{
    check_scheme, discover_authorization_server, discover_protected_resource, read_limited,
    AuthorizationServerMetadata, ProtectedResourceMetadata, MAX_DOCUMENT,
};
use super::store::{ClientRegistration, MemoryTokenStore, TokenSet, TokenStore};
use super::{AuthError, AuthFuture};
use crate::transport::http_client::{AuthChallenge, HttpAuth};

/// How many step-up authorizations in a row that do not widen the requested scopes are tried.
const MAX_STEP_UPS_WITHOUT_NEW_SCOPE: u32 = 2;
/// The RFC 7523 JWT-bearer grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// Lifetime of a `private_key_jwt` client assertion.
const ASSERTION_LIFETIME: Duration = Duration::from_secs(300);

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

/// Credentials for the client credentials grant (machine-to-machine; no user).
#[derive(Clone)]
#[non_exhaustive]
pub enum ClientCredentials {
    /// A client secret (`client_secret_basic` or `client_secret_post`, as the server supports).
    Secret {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: String,
    },
    /// A private key signing `private_key_jwt` assertions (RFC 7523).
    PrivateKeyJwt {
        /// The client id (also the assertion's `iss` and `sub`).
        client_id: String,
        /// The private key, PEM (PKCS#8, or PKCS#1 for RSA / SEC1 for EC).
        private_key_pem: String,
        /// The JWS algorithm, for example `ES256` or `RS256`.
        algorithm: String,
    },
    /// A JWT issued to this workload by a trusted identity provider, exchanged with the RFC 7523
    /// JWT-bearer grant (workload identity federation); the client authenticates with the
    /// assertion alone.
    JwtBearer {
        /// The client id.
        client_id: String,
        /// The JWT assertion.
        assertion: String,
    },
    /// Enterprise-managed authorization: the user's identity-provider ID token is exchanged at
    /// the identity provider (RFC 8693 token exchange) for an identity assertion JWT
    /// authorization grant (ID-JAG) for this authorization server and resource, which is then
    /// redeemed with the RFC 7523 JWT-bearer grant, authenticating with the client secret.
    EnterpriseManaged {
        /// The client id at the authorization server.
        client_id: String,
        /// The client secret at the authorization server.
        client_secret: String,
        /// The identity provider's token endpoint.
        idp_token_endpoint: String,
        /// The client id at the identity provider.
        idp_client_id: String,
        /// The user's ID token from the identity provider.
        id_token: String,
    },
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientCredentials::Secret { client_id, .. } => f
                .debug_struct("Secret")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
            ClientCredentials::PrivateKeyJwt {
                client_id, algorithm, ..
            } => f
                .debug_struct("PrivateKeyJwt")
                .field("client_id", client_id)
                .field("algorithm", algorithm)
                .finish_non_exhaustive(),
            ClientCredentials::JwtBearer { client_id, .. } => f
                .debug_struct("JwtBearer")
                .field("client_id", client_id)
                .finish_non_exhaustive(),
            ClientCredentials::EnterpriseManaged {
                client_id,
                idp_token_endpoint,
                ..
            } => f
                .debug_struct("EnterpriseManaged")
                .field("client_id", client_id)
                .field("idp_token_endpoint", idp_token_endpoint)
                .finish_non_exhaustive(),
        }
    }
}

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

fn no_redirect_client() -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .user_agent(concat!("mcpkit/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| AuthError::Config(format!("cannot create the HTTP client: {e}")))
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

    /// How the client is known to the discovered server: stored, Client ID Metadata Document,
    /// pre-registered, or dynamically registered (spec: "Client Registration Approaches").
    async fn registration(&self, found: &Discovered) -> Result<ClientRegistration, AuthError> {
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
        let response = inner
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| AuthError::Http(format!("dynamic registration at {endpoint}: {e}")))?;
        let status = response.status();
        let bytes = read_limited(response, MAX_DOCUMENT)
            .await
            .map_err(|e| AuthError::Registration(format!("{endpoint}: {e}")))?;
        if !status.is_success() {
            return Err(AuthError::Registration(format!(
                "{endpoint} answered HTTP {status}: {}",
                oauth_error(&bytes)
            )));
        }
        #[derive(Deserialize)]
        struct Registered {
            client_id: String,
            client_secret: Option<String>,
            token_endpoint_auth_method: Option<String>,
        }
        let r: Registered = serde_json::from_slice(&bytes)
            .map_err(|e| AuthError::Registration(format!("{endpoint} sent an invalid response: {e}")))?;
        let mut reg = ClientRegistration::new(found.issuer.clone(), r.client_id, r.client_secret);
        reg.token_endpoint_auth_method = r.token_endpoint_auth_method.or_else(|| Some(method.to_owned()));
        if reg.token_endpoint_auth_method.as_deref() != Some("none") && reg.client_secret.is_none() {
            reg.token_endpoint_auth_method = Some("none".into());
        }
        Ok(reg)
    }

    /// The authorization code grant with PKCE S256, `state`, `resource` and RFC 9207 `iss`.
    async fn authorization_code(
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

    async fn client_credentials_grant(
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
        let response = self
            .inner
            .http
            .post(url)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(form_encode(&form))
            .send()
            .await
            .map_err(|e| AuthError::Http(format!("token exchange at {endpoint}: {e}")))?;
        let status = response.status();
        let bytes = read_limited(response, MAX_DOCUMENT)
            .await
            .map_err(|e| AuthError::Token(format!("{endpoint}: {e}")))?;
        if !status.is_success() {
            return Err(AuthError::Token(format!(
                "token exchange at {endpoint} answered HTTP {status}: {}",
                oauth_error(&bytes)
            )));
        }
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: String,
            issued_token_type: Option<String>,
        }
        let e: Exchanged = serde_json::from_slice(&bytes)
            .map_err(|e| AuthError::Token(format!("token exchange at {endpoint}: invalid response: {e}")))?;
        if let Some(t) = &e.issued_token_type {
            if t != "urn:ietf:params:oauth:token-type:id-jag" {
                return Err(AuthError::Token(format!("token exchange issued {t:?}, not an ID-JAG")));
            }
        }
        Ok(e.access_token)
    }

    async fn refresh(&self, current: &Current) -> Result<(), AuthError> {
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
        let mut basic: Option<String> = None;
        match auth {
            Auth::Registered(r) => {
                let method = r
                    .token_endpoint_auth_method
                    .clone()
                    .unwrap_or_else(|| choose_secret_method(&found.meta, r.client_secret.is_some()).to_owned());
                match (method.as_str(), &r.client_secret) {
                    ("client_secret_basic", Some(secret)) => basic = Some(basic_auth(&r.client_id, secret)),
                    ("client_secret_post", Some(secret)) => {
                        form.push(("client_id", r.client_id.clone()));
                        form.push(("client_secret", secret.clone()));
                    }
                    _ => form.push(("client_id", r.client_id.clone())),
                }
            }
            Auth::Credentials(ClientCredentials::Secret {
                client_id,
                client_secret,
            }) => {
                if choose_secret_method(&found.meta, true) == "client_secret_post" {
                    form.push(("client_id", client_id.clone()));
                    form.push(("client_secret", client_secret.clone()));
                } else {
                    basic = Some(basic_auth(client_id, client_secret));
                }
            }
            Auth::Credentials(ClientCredentials::PrivateKeyJwt {
                client_id,
                private_key_pem,
                algorithm,
            }) => {
                let assertion = client_assertion(client_id, &found.issuer, private_key_pem, algorithm)?;
                form.push(("client_id", client_id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
                ));
                form.push(("client_assertion", assertion));
            }
            Auth::Credentials(ClientCredentials::JwtBearer { client_id, .. }) => {
                form.push(("client_id", client_id.clone()));
            }
            Auth::Credentials(ClientCredentials::EnterpriseManaged {
                client_id,
                client_secret,
                ..
            }) => {
                if choose_secret_method(&found.meta, true) == "client_secret_post" {
                    form.push(("client_id", client_id.clone()));
                    form.push(("client_secret", client_secret.clone()));
                } else {
                    basic = Some(basic_auth(client_id, client_secret));
                }
            }
        }
        let dpop = found.meta.supports_dpop_es256();
        let body = form_encode(&form);
        let mut retried_nonce = false;
        let (status, bytes) = loop {
            let mut req = self
                .inner
                .http
                .post(url.clone())
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ACCEPT, "application/json")
                .body(body.clone());
            if let Some(b) = &basic {
                req = req.header(header::AUTHORIZATION, b);
            }
            if dpop {
                let nonce = lock(&self.inner.dpop_nonces).authorization_server.clone();
                let proof = self.inner.dpop.proof("POST", &url, None, nonce.as_deref())?;
                req = req.header("dpop", proof);
            }
            let response = req
                .send()
                .await
                .map_err(|e| AuthError::Http(format!("token request to {endpoint}: {e}")))?;
            let status = response.status();
            let nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let bytes = read_limited(response, MAX_DOCUMENT)
                .await
                .map_err(|e| AuthError::Token(format!("{endpoint}: {e}")))?;
            // RFC 9449 section 8: retry once with the nonce the server asks for.
            if dpop
                && !retried_nonce
                && status == StatusCode::BAD_REQUEST
                && oauth_error_code(&bytes).as_deref() == Some("use_dpop_nonce")
            {
                if let Some(n) = nonce {
                    lock(&self.inner.dpop_nonces).authorization_server = Some(n);
                    retried_nonce = true;
                    continue;
                }
            }
            break (status, bytes);
        };
        if !status.is_success() {
            return Err(AuthError::Token(format!(
                "{endpoint} answered HTTP {status}: {}",
                oauth_error(&bytes)
            )));
        }
        #[derive(Deserialize)]
        struct TokenResponse {
            access_token: String,
            token_type: String,
            expires_in: Option<u64>,
            refresh_token: Option<String>,
            scope: Option<String>,
        }
        let t: TokenResponse = serde_json::from_slice(&bytes)
            .map_err(|e| AuthError::Token(format!("{endpoint} sent an invalid token response: {e}")))?;
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

enum Auth<'a> {
    Registered(&'a ClientRegistration),
    Credentials(&'a ClientCredentials),
}

/// With a secret: `client_secret_basic` unless the server lists only `client_secret_post`.
fn choose_secret_method(meta: &AuthorizationServerMetadata, has_secret: bool) -> &'static str {
    if !has_secret {
        "none"
    } else if !meta.supports_auth_method("client_secret_basic") && meta.supports_auth_method("client_secret_post") {
        "client_secret_post"
    } else {
        "client_secret_basic"
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

/// `client_secret_basic`: the id and secret form-encoded, then Base64 (RFC 6749 section 2.3.1).
fn basic_auth(id: &str, secret: &str) -> String {
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", form_component(id), form_component(secret)))
    )
}

fn random_token(bytes: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| AuthError::Config(format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// `application/x-www-form-urlencoded` encoding of one component.
fn form_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn form_encode(form: &[(&str, String)]) -> String {
    form.iter()
        .map(|(k, v)| format!("{}={}", form_component(k), form_component(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The `error` code of an OAuth error response body.
fn oauth_error_code(body: &[u8]) -> Option<String> {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()?
        .get("error")?
        .as_str()
        .map(str::to_owned)
}

/// The OAuth error of an error response body, for messages.
fn oauth_error(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct E {
        error: String,
        error_description: Option<String>,
    }
    match serde_json::from_slice::<E>(body) {
        Ok(e) => match e.error_description {
            Some(d) => format!("{} ({d})", e.error),
            None => e.error,
        },
        Err(_) => String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
    }
}

fn signing_key(pem: &str, algorithm: &str) -> Result<(jsonwebtoken::EncodingKey, jsonwebtoken::Algorithm), AuthError> {
    use jsonwebtoken::Algorithm as A;
    let alg: A = algorithm
        .parse()
        .map_err(|_| AuthError::Config(format!("unknown signing algorithm {algorithm:?}")))?;
    let key = match alg {
        A::ES256 | A::ES384 => jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()),
        A::RS256 | A::RS384 | A::RS512 | A::PS256 | A::PS384 | A::PS512 => {
            jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes())
        }
        A::EdDSA => jsonwebtoken::EncodingKey::from_ed_pem(pem.as_bytes()),
        _ => {
            return Err(AuthError::Config(format!(
                "{algorithm} is not an asymmetric algorithm for private_key_jwt"
            )))
        }
    }
    .map_err(|e| AuthError::Config(format!("invalid {algorithm} private key: {e}")))?;
    Ok((key, alg))
}

/// A `private_key_jwt` client assertion (RFC 7523 section 3): `iss` = `sub` = client id, `aud` =
/// the authorization server's issuer.
fn client_assertion(client_id: &str, issuer: &str, pem: &str, algorithm: &str) -> Result<String, AuthError> {
    let (key, alg) = signing_key(pem, algorithm)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME.as_secs(),
        "jti": random_token(16)?,
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), &claims, &key)
        .map_err(|e| AuthError::Config(format!("signing the client assertion failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding() {
        assert_eq!(form_component("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
        assert_eq!(form_encode(&[("x", "1".into()), ("y", "a b".into())]), "x=1&y=a+b");
        assert_eq!(
            basic_auth("id", "s:e"),
            format!("Basic {}", STANDARD.encode("id:s%3Ae"))
        );
    }
}
