//! Key names. Every key is `{prefix}:{kind}:{part}`: the prefix is the deployment's (checked at
//! connect: letters, digits, `.`, `_`, `-`), the kind a constant, and any part that came from a
//! client (a session id, a task id, a stream id) is the hex of its SHA-256 — never the client's
//! bytes — so no input can reach another key, another deployment's prefix, or a hash tag.

use sha2::{Digest, Sha256};

/// The key names of one deployment.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

/// Why a prefix was refused.
pub(crate) fn check_prefix(prefix: &str) -> Result<(), String> {
    let ok = !prefix.is_empty()
        && prefix.len() <= 64
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the Redis key prefix {prefix:?} must be 1 to 64 letters, digits, '.', '_' or '-'"
        ))
    }
}

/// The first 128 bits of SHA-256 of `input`, as 32 lower-case hex digits: the key part of a
/// client-supplied name. Records keep the full name and are compared on it.
pub(crate) fn digest(input: &str) -> String {
    let hash = Sha256::digest(input.as_bytes());
    let mut out = String::with_capacity(32);
    for b in &hash[..16] {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

impl Keys {
    /// Key names under `prefix` (already checked by [`check_prefix`]).
    pub(crate) fn new(prefix: &str) -> Keys {
        Keys {
            prefix: prefix.to_owned(),
        }
    }

    /// The deployment's prefix.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `{prefix}:{kind}:{digest(client_input)}`.
    pub(crate) fn hashed(&self, kind: &str, client_input: &str) -> String {
        format!("{}:{kind}:{}", self.prefix, digest(client_input))
    }

    /// `{prefix}:{kind}:` — what [`Keys::hashed`] puts before the digest (for scripts that
    /// name a record from a member of an index).
    pub(crate) fn kind_prefix(&self, kind: &str) -> String {
        format!("{}:{kind}:", self.prefix)
    }

    /// `{prefix}:{name}`, for the deployment's fixed keys (indexes, the key ring).
    pub(crate) fn fixed(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::{check_prefix, digest, Keys};

    #[test]
    fn client_input_never_reaches_a_key_name() {
        let keys = Keys::new("mcpkit");
        let k = keys.hashed("task", "x}:{other:*\r\n");
        assert_eq!(k.len(), "mcpkit:task:".len() + 32);
        assert!(k[12..].bytes().all(|b| b.is_ascii_hexdigit()), "{k}");
        assert_eq!(digest("a"), digest("a"));
        assert_ne!(digest("a"), digest("b"));
    }

    #[test]
    fn prefixes_are_plain_names() {
        assert!(check_prefix("mcpkit-prod.eu_1").is_ok());
        for bad in ["", "a:b", "{tag}", "a b", &"x".repeat(65)] {
            assert!(check_prefix(bad).is_err(), "{bad:?}");
        }
    }
}
