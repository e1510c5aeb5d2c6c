//! The `requestState` of multi round-trip requests (spec: 2026-07-28 `basic/patterns/mrtr`
//! "Server Requirements"): what a handler learned in earlier rounds travels through the client,
//! so any server instance holding the keys can continue the request.
//!
//! The state is attacker-controlled input, so it is sealed: HMAC-SHA-256 over the payload with
//! a key from a [`RequestStateKeys`] ring, bound to the method, a digest of the request's
//! salient params and the verified caller (when authorization is on), with an expiry. Wire form: `v1.{key id}.{base64url payload}.{base64url tag}`.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use mcpkit_types::schema::JsonObject;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::server::backend::SealingKey;

type HmacSha256 = Hmac<Sha256>;

/// The keys that seal and open `requestState`. The first key seals; every key opens, so a key
/// can be rotated in (put the new one first) without breaking requests already in flight.
/// Servers that share the keys can continue each other's requests.
#[derive(Clone)]
pub struct RequestStateKeys {
    keys: Vec<(String, Vec<u8>)>,
    lifetime: Duration,
}

impl fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("RequestStateKeys")
            .field(
                "key_ids",
                &self.keys.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            )
            .field("lifetime", &self.lifetime)
            .finish()
    }
}

/// Why a `requestState` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not in the `v1.{kid}.{payload}.{tag}` form, or not decodable.
    #[error("requestState is malformed")]
    Malformed,
    /// Sealed with a key this server does not hold.
    #[error("requestState was sealed with an unknown key")]
    UnknownKey,
    /// The tag does not match: the state was altered.
    #[error("requestState failed its integrity check")]
    Tampered,
    /// Past its lifetime.
    #[error("requestState has expired")]
    Expired,
    /// Issued for a different method, different params, or another verified caller.
    #[error("requestState was issued for a different request")]
    WrongRequest,
    /// The OS random source failed, so no sealing key could be made.
    #[error("the OS random source failed: no requestState key could be made")]
    NoRandomness,
}

/// What a sealed state carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatePayload {
    /// The method it was issued for.
    pub(crate) m: String,
    /// Digest of the request's salient params (base64url SHA-256).
    pub(crate) d: String,
    /// Expiry, seconds since the Unix epoch.
    pub(crate) exp: u64,
    /// Answers gathered in earlier rounds, by input key.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub(crate) a: JsonObject,
    /// The handler's own state, if it set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) s: Option<Value>,
    /// The input keys this round asked for: the only `inputResponses` the retry may add.
    /// Absent in a state sealed by an earlier mcpkit, which then accepts any unsealed key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) q: Option<Vec<String>>,
    /// Digest of the verified caller it was issued to (see `VerifiedCaller::binding`); absent
    /// when the request had none (no authorization).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) c: Option<String>,
}

impl RequestStateKeys {
    /// A ring with one key (at least 32 bytes recommended) under `key_id`; lifetime 10 minutes.
    pub fn new(key_id: impl Into<String>, key: impl Into<Vec<u8>>) -> Self {
        RequestStateKeys {
            keys: vec![(key_id.into(), key.into())],
            lifetime: Duration::from_secs(600),
        }
    }

    /// A ring with one fresh random 256-bit key: enough for a single server instance. Fails
    /// when the OS random source does: a guessable key would make every state forgeable.
    pub fn random() -> Result<Self, StateError> {
        RequestStateKeys::random_from(|buf| getrandom::fill(buf).map_err(|_| StateError::NoRandomness))
    }

    fn random_from(fill: impl Fn(&mut [u8]) -> Result<(), StateError>) -> Result<Self, StateError> {
        let mut key = [0u8; 32];
        let mut id = [0u8; 6];
        fill(&mut key)?;
        fill(&mut id)?;
        Ok(RequestStateKeys::new(B64.encode(id), key.to_vec()))
    }

    /// A ring that seals nothing and opens nothing: what a server has when no key could be
    /// made. Serving refuses to start with it (see `Server::check_keys`).
    pub(crate) fn unusable() -> Self {
        RequestStateKeys {
            keys: Vec::new(),
            lifetime: Duration::from_secs(600),
        }
    }

    /// Whether the ring has a key to seal with.
    pub(crate) fn can_seal(&self) -> bool {
        self.keys.first().is_some_and(|(_, key)| !key.is_empty())
    }

    /// The ring a server seals with, from a [`KeyRing`](super::backend::KeyRing)'s keys: the
    /// first key seals, every key opens. `None` for no keys.
    pub fn from_ring(keys: &[SealingKey]) -> Option<RequestStateKeys> {
        let (first, rest) = keys.split_first()?;
        let ring = RequestStateKeys::new(first.id.clone(), first.secret.clone());
        Some(
            rest.iter()
                .fold(ring, |ring, k| ring.with_previous(k.id.clone(), k.secret.clone())),
        )
    }

    /// Add a key that still opens states but no longer seals (rotation: the previous key).
    pub fn with_previous(mut self, key_id: impl Into<String>, key: impl Into<Vec<u8>>) -> Self {
        self.keys.push((key_id.into(), key.into()));
        self
    }

    /// How long a sealed state stays valid (default 10 minutes).
    pub fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    fn tag(key: &[u8], signed: &str) -> Option<HmacSha256> {
        let mut mac = HmacSha256::new_from_slice(key).ok()?;
        mac.update(signed.as_bytes());
        Some(mac)
    }

    pub(crate) fn seal(&self, mut payload: StatePayload) -> Option<String> {
        let (kid, key) = self.keys.first()?;
        payload.exp = now_secs().saturating_add(self.lifetime.as_secs());
        let body = B64.encode(serde_json::to_vec(&payload).ok()?);
        let signed = format!("v1.{kid}.{body}");
        let tag = Self::tag(key, &signed)?.finalize().into_bytes();
        Some(format!("{signed}.{}", B64.encode(tag)))
    }

    /// Open `state` issued for `method` with params digest `digest`, to the caller whose
    /// [`caller_digest`] is `caller`: a state sealed for another caller (or for none, or one
    /// sealed without a caller presented by one) is a different request.
    pub(crate) fn open(
        &self,
        state: &str,
        method: &str,
        digest: &str,
        caller: Option<&str>,
    ) -> Result<StatePayload, StateError> {
        let mut parts = state.split('.');
        let (Some("v1"), Some(kid), Some(body), Some(tag), None) =
            (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(StateError::Malformed);
        };
        let key = self
            .keys
            .iter()
            .find(|(id, _)| id == kid)
            .map(|(_, k)| k)
            .ok_or(StateError::UnknownKey)?;
        let tag = B64.decode(tag).map_err(|_| StateError::Malformed)?;
        // Everything before the last dot is what the tag covers.
        let signed = state.rfind('.').map_or(state, |i| &state[..i]);
        Self::tag(key, signed)
            .ok_or(StateError::Malformed)?
            .verify_slice(&tag)
            .map_err(|_| StateError::Tampered)?;
        let payload: StatePayload = B64
            .decode(body)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or(StateError::Malformed)?;
        if payload.exp <= now_secs() {
            return Err(StateError::Expired);
        }
        if payload.m != method || payload.d != digest || payload.c.as_deref() != caller {
            return Err(StateError::WrongRequest);
        }
        Ok(payload)
    }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The digest of a verified caller sealed into a state: the state names no user in clear.
pub(crate) fn caller_digest(caller: &crate::transport::VerifiedCaller) -> String {
    digest(&[&caller.binding()], None)
}

/// A digest of the params that identify a request (tool name and arguments, prompt name and
/// arguments, resource URI), independent of key order and whitespace.
pub(crate) fn digest(parts: &[&str], arguments: Option<&Value>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    if let Some(a) = arguments {
        let mut canonical = String::new();
        write_canonical(a, &mut canonical);
        h.update(canonical.as_bytes());
    }
    B64.encode(h.finalize())
}

/// JSON with object keys sorted, so equal values digest equally however they were written.
fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(x) = m.get(k) {
                    write_canonical(x, out);
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpkit_types::method::{CallTool, GetPrompt, Method};

    #[test]
    fn a_ring_seals_with_its_first_key_and_opens_with_every_key() {
        let old = SealingKey::random().unwrap();
        let new = SealingKey::random().unwrap();
        let by_old = RequestStateKeys::from_ring(std::slice::from_ref(&old)).unwrap();
        let p = payload();
        let sealed = by_old.seal(p.clone()).unwrap();
        let rotated = RequestStateKeys::from_ring(&[new, old]).unwrap();
        assert_eq!(
            rotated.open(&sealed, CallTool::NAME, &p.d, None).unwrap().m,
            CallTool::NAME
        );
        assert!(rotated.seal(p).unwrap().contains(&format!(".{}.", rotated.keys[0].0)));
        assert!(RequestStateKeys::from_ring(&[]).is_none());
    }

    fn payload() -> StatePayload {
        StatePayload {
            m: CallTool::NAME.into(),
            d: digest(&["t"], Some(&serde_json::json!({"b": 1, "a": [1, {"y": 2, "x": 1}]}))),
            ..Default::default()
        }
    }

    #[test]
    fn a_failing_random_source_makes_no_key() {
        let keys = RequestStateKeys::random_from(|_| Err(StateError::NoRandomness));
        assert_eq!(keys.err(), Some(StateError::NoRandomness));
        assert!(RequestStateKeys::random().unwrap().can_seal());
    }

    #[test]
    fn a_ring_without_a_key_seals_nothing() {
        let keys = RequestStateKeys::unusable();
        assert!(!keys.can_seal());
        assert_eq!(keys.seal(payload()), None);
        assert!(!RequestStateKeys::new("k", Vec::new()).can_seal());
    }

    #[tokio::test]
    async fn a_server_without_a_key_refuses_to_serve() {
        let server = crate::Server::builder()
            .request_state_keys(RequestStateKeys::unusable())
            .build();
        let (a, _b) = crate::transport::memory::pair();
        let err = server.serve(a).await.unwrap_err();
        assert!(err.to_string().contains("OS random source failed"), "{err}");
        #[cfg(feature = "http-server")]
        {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let err = crate::HttpServer::new(server).serve(listener).await.unwrap_err();
            assert!(err.to_string().contains("OS random source failed"), "{err}");
        }
    }

    #[test]
    fn sealed_state_opens_for_its_request_only() {
        let keys = RequestStateKeys::new("k1", vec![7u8; 32]);
        let p = payload();
        let state = keys.seal(p.clone()).unwrap();
        assert_eq!(keys.open(&state, CallTool::NAME, &p.d, None).unwrap().m, CallTool::NAME);
        assert_eq!(
            keys.open(&state, GetPrompt::NAME, &p.d, None),
            Err(StateError::WrongRequest)
        );
        assert_eq!(
            keys.open(&state, CallTool::NAME, "other", None),
            Err(StateError::WrongRequest)
        );
    }

    #[test]
    fn digest_ignores_key_order() {
        let a = digest(&["t"], Some(&serde_json::json!({"a": 1, "b": {"d": 2, "c": 3}})));
        let b = digest(&["t"], Some(&serde_json::json!({"b": {"c": 3, "d": 2}, "a": 1})));
        assert_eq!(a, b);
        assert_ne!(a, digest(&["u"], Some(&serde_json::json!({"a": 1}))));
    }

    #[test]
    fn tampering_is_detected() {
        let keys = RequestStateKeys::new("k1", vec![7u8; 32]);
        let p = payload();
        let state = keys.seal(p.clone()).unwrap();
        let tampered = format!("{state}-TAMPERED");
        assert!(keys.open(&tampered, CallTool::NAME, &p.d, None).is_err());
        // Flip one character of the payload.
        let mut parts: Vec<String> = state.split('.').map(str::to_owned).collect();
        let body = parts[2].clone();
        let flipped: String = body
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i == 3 {
                    if c == 'A' {
                        'B'
                    } else {
                        'A'
                    }
                } else {
                    c
                }
            })
            .collect();
        parts[2] = flipped;
        assert_eq!(
            keys.open(&parts.join("."), CallTool::NAME, &p.d, None),
            Err(StateError::Tampered)
        );
        assert_eq!(
            keys.open("garbage", CallTool::NAME, &p.d, None),
            Err(StateError::Malformed)
        );
    }

    #[test]
    fn expired_state_is_refused() {
        let keys = RequestStateKeys::new("k1", vec![7u8; 32]).with_lifetime(Duration::ZERO);
        let p = payload();
        let state = keys.seal(p.clone()).unwrap();
        assert_eq!(keys.open(&state, CallTool::NAME, &p.d, None), Err(StateError::Expired));
    }

    #[test]
    fn rotation_keeps_old_states_open_and_unknown_keys_fail() {
        let old = RequestStateKeys::new("old", vec![1u8; 32]);
        let p = payload();
        let state = old.seal(p.clone()).unwrap();
        let rotated = RequestStateKeys::new("new", vec![2u8; 32]).with_previous("old", vec![1u8; 32]);
        assert!(rotated.open(&state, CallTool::NAME, &p.d, None).is_ok());
        assert!(rotated.seal(p.clone()).unwrap().starts_with("v1.new."));
        let dropped = RequestStateKeys::new("new", vec![2u8; 32]);
        assert_eq!(
            dropped.open(&state, CallTool::NAME, &p.d, None),
            Err(StateError::UnknownKey)
        );
        // Same id, different key material: the tag does not verify.
        let forged = RequestStateKeys::new("old", vec![3u8; 32]);
        assert_eq!(
            forged.open(&state, CallTool::NAME, &p.d, None),
            Err(StateError::Tampered)
        );
    }
}
