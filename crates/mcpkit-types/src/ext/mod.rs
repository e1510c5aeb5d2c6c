//! Extensions: optional features beyond the core protocol, each named by an identifier and
//! declared in the `extensions` member of both sides' capabilities (spec: 2026-07-28
//! `basic/versioning` "Extension negotiation"; SEP-2133, SEP-3392).
//!
//! Negotiation, as those texts state it:
//! - An extension is off unless a side declares it: `capabilities.extensions[id]` is its
//!   settings object, `{}` meaning support without settings.
//! - Identifiers follow the `_meta` key naming rules with a mandatory prefix
//!   (`io.modelcontextprotocol/skills`): see [`is_valid_id`].
//! - A settings object may carry a `revision` string; an absent one means the initial revision.
//!   A peer that does not know the other side's revision does not enable the extension
//!   ([`negotiated`]).
//! - When only one side supports an extension, the supporting side falls back to core protocol
//!   behaviour or rejects the request with an error.
//!
//! Each official extension has a module here with its identifier, wire types and method
//! descriptors (declared like the core ones in [`crate::method`]).

pub mod skills;
pub mod tasks;

use crate::schema::JsonObject;

/// The settings member that names an extension's revision (SEP-3392).
pub const REVISION: &str = "revision";

/// Whether `id` is a valid extension identifier: `prefix/name`, where the prefix is one or more
/// dot-separated labels (each starting with a letter, ending with a letter or digit, hyphens
/// inside) and the name is non-empty, starts and ends with a letter or digit, and holds only
/// those, `-`, `_` and `.` (spec: 2026-07-28 `basic/index` "_meta" key naming).
pub fn is_valid_id(id: &str) -> bool {
    let Some((prefix, name)) = id.split_once('/') else {
        return false;
    };
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphabetic()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    };
    let n = name.as_bytes();
    prefix.split('.').all(label_ok)
        && !n.is_empty()
        && n[0].is_ascii_alphanumeric()
        && n[n.len() - 1].is_ascii_alphanumeric()
        && n.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// The revision a settings object names (`None`: the initial revision).
pub fn revision(settings: &JsonObject) -> Option<&str> {
    settings.get(REVISION).and_then(|v| v.as_str())
}

/// Whether an extension is in use between two peers: `ours` are the settings this side
/// declares, `theirs` what the peer declared (`None`: it did not declare the extension). Both
/// must declare it, at the same revision.
pub fn negotiated(ours: &JsonObject, theirs: Option<&JsonObject>) -> bool {
    theirs.is_some_and(|t| revision(t) == revision(ours))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: serde_json::Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn identifiers_need_a_prefix() {
        assert!(is_valid_id("io.modelcontextprotocol/skills"));
        assert!(is_valid_id("com.example/my_ext.v2"));
        assert!(!is_valid_id("skills"));
        assert!(!is_valid_id("/skills"));
        assert!(!is_valid_id("io..x/skills"));
        assert!(!is_valid_id("io.x/"));
        assert!(!is_valid_id("io.x/-a"));
    }

    #[test]
    fn both_sides_at_one_revision_negotiate() {
        let initial = JsonObject::new();
        assert!(negotiated(&initial, Some(&initial)));
        assert!(!negotiated(&initial, None));
        let r2 = obj(json!({"revision": "2"}));
        assert!(!negotiated(&initial, Some(&r2)));
        assert!(!negotiated(&r2, Some(&initial)));
        assert!(negotiated(&r2, Some(&r2)));
    }
}
