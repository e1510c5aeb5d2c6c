//! Where the OAuth client keeps client registrations and tokens.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::AuthError;
use crate::transport::http_client::AuthFuture;

/// How the client is known to one authorization server (keyed by its issuer: credentials from
/// one server are never presented to another).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientRegistration {
    /// The issuer this registration belongs to.
    pub issuer: String,
    /// The client id (a URL for a Client ID Metadata Document).
    pub client_id: String,
    /// The client secret of a confidential client.
    pub client_secret: Option<String>,
    /// The registered token endpoint authentication method, when the server said.
    pub token_endpoint_auth_method: Option<String>,
}

impl ClientRegistration {
    /// A registration for `issuer`.
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        ClientRegistration {
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret,
            token_endpoint_auth_method: None,
        }
    }
}

impl std::fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .finish()
    }
}

/// Tokens from one authorization server for one resource.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// The refresh token, when one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires, when the server said.
    pub expires_at: Option<SystemTime>,
    /// The granted scopes (space-separated), when the server said.
    pub scope: Option<String>,
    /// `Bearer`, or `DPoP` for a sender-constrained token (RFC 9449).
    #[serde(default = "bearer_type")]
    pub token_type: String,
}

fn bearer_type() -> String {
    "Bearer".to_owned()
}

impl TokenSet {
    /// Tokens with just an access token.
    pub fn new(access_token: impl Into<String>) -> Self {
        TokenSet {
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
            token_type: bearer_type(),
        }
    }

    /// Whether the access token is past its expiry.
    pub fn is_expired(&self) -> bool {
        self.expires_at.is_some_and(|t| t <= SystemTime::now())
    }
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("token_type", &self.token_type)
            .finish()
    }
}

/// Persistence for registrations (keyed by issuer) and tokens (keyed by issuer and resource).
/// [`MemoryTokenStore`] keeps them for the life of the process; implement this trait to keep
/// them in a keychain or a file.
pub trait TokenStore: Send + Sync + 'static {
    /// The registration with `issuer`, if any.
    fn client<'a>(&'a self, issuer: &'a str) -> AuthFuture<'a, Result<Option<ClientRegistration>, AuthError>>;
    /// Remember a registration (replacing any for the same issuer).
    fn save_client(&self, registration: ClientRegistration) -> AuthFuture<'_, Result<(), AuthError>>;
    /// The tokens from `issuer` for `resource`, if any.
    fn tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Result<Option<TokenSet>, AuthError>>;
    /// Remember tokens (replacing any for the same issuer and resource).
    fn save_tokens<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
        tokens: TokenSet,
    ) -> AuthFuture<'a, Result<(), AuthError>>;
    /// Forget the tokens from `issuer` for `resource`.
    fn remove_tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Result<(), AuthError>>;
}

/// A [`TokenStore`] in memory.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    clients: Mutex<HashMap<String, ClientRegistration>>,
    tokens: Mutex<HashMap<(String, String), TokenSet>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn client<'a>(&'a self, issuer: &'a str) -> AuthFuture<'a, Result<Option<ClientRegistration>, AuthError>> {
        let found = lock(&self.clients).get(issuer).cloned();
        Box::pin(async move { Ok(found) })
    }
    fn save_client(&self, registration: ClientRegistration) -> AuthFuture<'_, Result<(), AuthError>> {
        lock(&self.clients).insert(registration.issuer.clone(), registration);
        Box::pin(async { Ok(()) })
    }
    fn tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Result<Option<TokenSet>, AuthError>> {
        let found = lock(&self.tokens)
            .get(&(issuer.to_owned(), resource.to_owned()))
            .cloned();
        Box::pin(async move { Ok(found) })
    }
    fn save_tokens<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
        tokens: TokenSet,
    ) -> AuthFuture<'a, Result<(), AuthError>> {
        lock(&self.tokens).insert((issuer.to_owned(), resource.to_owned()), tokens);
        Box::pin(async { Ok(()) })
    }
    fn remove_tokens<'a>(&'a self, issuer: &'a str, resource: &'a str) -> AuthFuture<'a, Result<(), AuthError>> {
        lock(&self.tokens).remove(&(issuer.to_owned(), resource.to_owned()));
        Box::pin(async { Ok(()) })
    }
}
