//! [`JwtVerifier`]: JWT access tokens checked against the issuer's JWKS (cached).

use super::*;

/// Verifies JWT access tokens (RFC 9068) against the issuer's JSON Web Key Set, fetched and
/// cached (refetched after `cache_ttl`, or when a token names an unknown key id, at most once
/// per `min_refetch`). Checks signature, `iss`, `aud` (must contain the resource), `exp` and
/// `nbf`. Only asymmetric algorithms are accepted.
pub struct JwtVerifier {
    http: reqwest::Client,
    issuer: String,
    jwks_uri: Url,
    audience: String,
    leeway: u64,
    cache_ttl: Duration,
    min_refetch: Duration,
    cache: RwLock<Option<(jsonwebtoken::jwk::JwkSet, Instant)>>,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.issuer)
            .field("jwks_uri", &self.jwks_uri.as_str())
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// A verifier for tokens from `issuer`, signed by keys at `jwks_uri`, for `audience` (this
    /// server's resource identifier).
    pub fn new(issuer: impl Into<String>, jwks_uri: &str, audience: impl Into<String>) -> Result<Self, AuthError> {
        let jwks_uri =
            Url::parse(jwks_uri).map_err(|e| AuthError::Config(format!("invalid jwks_uri {jwks_uri:?}: {e}")))?;
        crate::auth::metadata::check_scheme(&jwks_uri)?;
        Ok(JwtVerifier {
            http: http_client()?,
            issuer: issuer.into(),
            jwks_uri,
            audience: audience.into(),
            leeway: 30,
            cache_ttl: Duration::from_secs(600),
            min_refetch: Duration::from_secs(30),
            cache: RwLock::new(None),
        })
    }

    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// How long a fetched key set is used before it is fetched again (default 10 minutes).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    async fn fetch(&self) -> Result<jsonwebtoken::jwk::JwkSet, VerifyError> {
        let response = self
            .http
            .get(self.jwks_uri.clone())
            .send()
            .await
            .map_err(|e| VerifyError::Unavailable(format!("fetching the JWKS: {e}")))?;
        if !response.status().is_success() {
            return Err(VerifyError::Unavailable(format!(
                "the JWKS endpoint answered HTTP {}",
                response.status()
            )));
        }
        let body = read_response(response, MAX_DOCUMENT)
            .await
            .map_err(|e| VerifyError::Unavailable(format!("the JWKS: {e}")))?;
        serde_json::from_slice(&body).map_err(|e| VerifyError::Unavailable(format!("the JWKS is not valid: {e}")))
    }

    /// The key for `kid` (or the only key when the token names none).
    async fn key(&self, kid: Option<&str>) -> Result<jsonwebtoken::jwk::Jwk, VerifyError> {
        let pick = |set: &jsonwebtoken::jwk::JwkSet| -> Option<jsonwebtoken::jwk::Jwk> {
            match kid {
                Some(k) => set.find(k).cloned(),
                None if set.keys.len() == 1 => set.keys.first().cloned(),
                None => None,
            }
        };
        let stale = {
            let cache = self.cache.read().await;
            match &*cache {
                Some((set, at)) => {
                    if at.elapsed() < self.cache_ttl {
                        if let Some(k) = pick(set) {
                            return Ok(k);
                        }
                    }
                    at.elapsed() >= self.min_refetch
                }
                None => true,
            }
        };
        if stale {
            let set = self.fetch().await?;
            let found = pick(&set);
            *self.cache.write().await = Some((set, Instant::now()));
            if let Some(k) = found {
                return Ok(k);
            }
        }
        Err(VerifyError::Invalid(match kid {
            Some(k) => format!("no key {k:?} in the issuer's key set"),
            None => "the token names no key id".into(),
        }))
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> AuthFuture<'a, Result<AuthInfo, VerifyError>> {
        Box::pin(async move {
            use jsonwebtoken::Algorithm as A;
            let header =
                jsonwebtoken::decode_header(token).map_err(|e| VerifyError::Invalid(format!("malformed JWT: {e}")))?;
            if matches!(header.alg, A::HS256 | A::HS384 | A::HS512) {
                return Err(VerifyError::Invalid(
                    "symmetric (HS*) signatures are not accepted".into(),
                ));
            }
            let jwk = self.key(header.kid.as_deref()).await?;
            let key = jsonwebtoken::DecodingKey::from_jwk(&jwk)
                .map_err(|e| VerifyError::Invalid(format!("unusable key in the key set: {e}")))?;
            let mut validation = jsonwebtoken::Validation::new(header.alg);
            validation.set_issuer(&[&self.issuer]);
            validation.set_audience(&[&self.audience]);
            validation.leeway = self.leeway;
            validation.validate_nbf = true;
            validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            let data = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(token, &key, &validation)
                .map_err(|e| VerifyError::Invalid(e.to_string()))?;
            Ok(info_from_claims(data.claims))
        })
    }
}
