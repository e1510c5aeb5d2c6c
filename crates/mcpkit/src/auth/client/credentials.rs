//! Client credentials: what a client without a user presents ([`ClientCredentials`]), and how
//! a client authenticates at the token endpoint (`client_secret_basic`, `client_secret_post`,
//! `private_key_jwt`, or only its id; RFC 6749 section 2.3, RFC 7523).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;

use super::super::metadata::AuthorizationServerMetadata;
use super::super::post::form_component;
use super::super::store::ClientRegistration;
use super::super::AuthError;

/// Lifetime of a `private_key_jwt` client assertion.
const ASSERTION_LIFETIME: Duration = Duration::from_secs(300);

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

/// Who the client is at the token endpoint.
pub(super) enum Auth<'a> {
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

/// Add the client authentication `auth` calls for to the token request `form`; returns the
/// `Authorization: Basic` value when it is `client_secret_basic`.
pub(super) fn authenticate(
    meta: &AuthorizationServerMetadata,
    issuer: &str,
    auth: &Auth<'_>,
    form: &mut Vec<(&'static str, String)>,
) -> Result<Option<String>, AuthError> {
    let mut basic: Option<String> = None;
    match auth {
        Auth::Registered(r) => {
            let method = r
                .token_endpoint_auth_method
                .clone()
                .unwrap_or_else(|| choose_secret_method(meta, r.client_secret.is_some()).to_owned());
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
            if choose_secret_method(meta, true) == "client_secret_post" {
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
            let assertion = client_assertion(client_id, issuer, private_key_pem, algorithm)?;
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
            if choose_secret_method(meta, true) == "client_secret_post" {
                form.push(("client_id", client_id.clone()));
                form.push(("client_secret", client_secret.clone()));
            } else {
                basic = Some(basic_auth(client_id, client_secret));
            }
        }
    }
    Ok(basic)
}

/// `client_secret_basic`: the id and secret form-encoded, then Base64 (RFC 6749 section 2.3.1).
pub(super) fn basic_auth(id: &str, secret: &str) -> String {
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", form_component(id), form_component(secret)))
    )
}

pub(super) fn random_token(bytes: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| AuthError::Config(format!("no randomness: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

pub(super) fn signing_key(
    pem: &str,
    algorithm: &str,
) -> Result<(jsonwebtoken::EncodingKey, jsonwebtoken::Algorithm), AuthError> {
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
    use super::super::super::post::form_encode;
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
