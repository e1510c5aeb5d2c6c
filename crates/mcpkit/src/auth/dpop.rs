//! DPoP (RFC 9449): sender-constrained access tokens. The client holds an ES256 key, proves
//! possession of it on every token and resource request with a fresh `DPoP` proof JWT, and
//! presents tokens with the `DPoP` authorization scheme.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use reqwest::Url;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::json;

use super::AuthError;

/// The client's DPoP key.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    rng: ring::rand::SystemRandom,
    /// The public key as a JWK (members in lexicographic order, as RFC 7638 hashes them).
    jwk: serde_json::Value,
}

impl DpopKey {
    pub(crate) fn generate() -> Result<Self, AuthError> {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::Config("cannot generate a DPoP key".into()))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| AuthError::Config("cannot load the DPoP key".into()))?;
        let point = pair.public_key().as_ref();
        if point.len() != 65 {
            return Err(AuthError::Config("unexpected DPoP public key encoding".into()));
        }
        let jwk = json!({
            "crv": "P-256",
            "kty": "EC",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(DpopKey { pair, rng, jwk })
    }

    /// A proof for a `method` request to `url` (query and fragment dropped), bound to
    /// `access_token` (`ath`) and carrying the server's `nonce`, when given.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| AuthError::Config(format!("no randomness: {e}")))?;
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu.as_str(),
            "iat": iat,
        });
        if let Some(t) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(ring::digest::digest(&ring::digest::SHA256, t.as_bytes()))
                .into();
        }
        if let Some(n) = nonce {
            claims["nonce"] = n.into();
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&self.rng, signing_input.as_bytes())
            .map_err(|_| AuthError::Config("signing the DPoP proof failed".into()))?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proof_verifies_with_its_embedded_key() {
        let key = DpopKey::generate().unwrap();
        let url = Url::parse("https://mcp.example.com/mcp?x=1#f").unwrap();
        let proof = key.proof("POST", &url, Some("tok"), Some("n1")).unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(key.jwk.clone()).unwrap();
        let decoding = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        let data = jsonwebtoken::decode::<serde_json::Value>(&proof, &decoding, &v).unwrap();
        assert_eq!(data.claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(data.claims["htm"], "POST");
        assert_eq!(data.claims["nonce"], "n1");
        let ath = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, b"tok"));
        assert_eq!(data.claims["ath"], ath);
    }
}
