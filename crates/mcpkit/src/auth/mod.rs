//! OAuth 2.1 authorization for the Streamable HTTP transport (spec: `basic/authorization`).
//!
//! - Client side: [`OAuthClient`] is an [`HttpAuth`](crate::transport::http_client::HttpAuth)
//!   provider for [`HttpClientTransport`](crate::transport::http_client::HttpClientTransport).
//!   On a `401` it reads `WWW-Authenticate`, discovers the protected-resource metadata
//!   (RFC 9728) and the authorization server's metadata (RFC 8414 / OpenID Connect Discovery),
//!   checks that they describe this server and that issuer, registers (pre-registered
//!   credentials, a Client ID Metadata Document, or RFC 7591 dynamic registration), runs the
//!   authorization code flow with PKCE S256, `state`, the RFC 8707 `resource` and the RFC 9207
//!   `iss` check through a pluggable [`Authorizer`] ([`LoopbackAuthorizer`] for desktop and
//!   command-line clients, [`HeadlessAuthorizer`] for servers that approve without a user) or
//!   a grant without a user (client credentials, JWT bearer, enterprise-managed), keeps
//!   tokens in a pluggable [`TokenStore`], refreshes them, and steps up scopes on
//!   `403 insufficient_scope`. With authorization servers that advertise ES256 DPoP, tokens are
//!   sender-constrained (RFC 9449): every token and MCP request carries a fresh proof.
//! - Server side: [`resource`] protects an axum router: protected-resource metadata, bearer
//!   verification through a [`resource::TokenVerifier`] (JWT with a cached JWKS, or RFC 7662
//!   introspection), audience and scope checks, and the verified [`AuthInfo`](crate::transport::AuthInfo) as a
//!   request extension for the application.
//!
//! Everything here is behind the `auth` feature.

mod challenge;
mod client;
mod dpop;
mod error;
pub mod metadata;
mod post;
pub mod resource;
mod store;

pub use challenge::BearerChallenge;
pub use client::{
    Authorizer, ClientCredentials, HeadlessAuthorizer, LoopbackAuthorizer, OAuthClient, OAuthClientBuilder,
};
pub use error::AuthError;
pub use store::{ClientRegistration, MemoryTokenStore, TokenSet, TokenStore};
