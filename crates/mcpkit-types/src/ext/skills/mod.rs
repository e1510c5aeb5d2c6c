//! The Skills extension, `io.modelcontextprotocol/skills` (SEP-2640; the extension's
//! specification `specification/stable/skills`, against base revision 2026-07-28).
//!
//! A skill is a directory of files, minimally a `SKILL.md` that begins with YAML frontmatter
//! (`name`, `description`, …). Each file is a resource, `skill://<skill-path>/<file-path>`, read
//! with `resources/read`; the final segment of `<skill-path>` is the skill's name. A server that
//! declares the extension answers `skills/list` (entries with the verbatim frontmatter and a
//! complete manifest of the files with SHA-256 digests and sizes) and `skills/get` (one entry by
//! the URI of its `SKILL.md`), and with `directoryRead: true` in its settings also
//! `resources/directory/read` (the direct children of a directory resource).
//!
//! [`format`](mod@format) holds what both sides check: frontmatter parsing, the naming rules, digests and
//! the verification a host does before it uses a file.

pub mod format;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::method::request;
use crate::schema::{CacheScope, Cursor, JsonObject, ListResourcesResult, Meta, PaginatedParams, RequestMeta};

/// The extension's identifier.
pub const ID: &str = "io.modelcontextprotocol/skills";
/// The settings member declaring `resources/directory/read` (default `false`).
pub const DIRECTORY_READ: &str = "directoryRead";
/// The MIME type of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The MIME type of a `SKILL.md` resource.
pub const SKILL_MD_MIME_TYPE: &str = "text/markdown";
/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";
/// The URI scheme skills are served under, with its `://`.
pub const SCHEME: &str = "skill://";
/// The `_meta` key prefix this extension reserves on skill resources.
pub const META_PREFIX: &str = "io.modelcontextprotocol.skills/";
/// The most resource entries a skill may have (`SKILL.md` included) that every host accepts.
pub const MAX_RESOURCES: usize = 512;
/// The largest total file size of a skill every host accepts (16 MiB).
pub const MAX_TOTAL_SIZE: u64 = 16 * 1024 * 1024;
/// The `resources` value of a skill whose content is generated, so no digests are published.
pub const DYNAMIC: &str = "dynamic";

/// A file of a skill with the digest and size of its content (spec: `SkillResource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// Resource URI of the file.
    pub uri: String,
    /// SHA-256 of the raw bytes, `sha256:{64 lowercase hex}`.
    pub digest: String,
    /// Length in bytes of the raw content (the bytes the digest covers).
    pub size: u64,
}

/// A skill's files: the complete manifest, or [`SkillResources::Dynamic`] (the string
/// `"dynamic"`) when the content is generated and no stable digests exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Files(Vec<SkillResource>),
    /// Generated content: nothing to verify against.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(s),
            SkillResources::Dynamic => s.serialize_str(DYNAMIC),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ResourcesVisitor;
        impl<'de> Visitor<'de> for ResourcesVisitor {
            type Value = SkillResources;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of {uri, digest, size} or the string \"dynamic\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SkillResources, E> {
                if v == DYNAMIC {
                    Ok(SkillResources::Dynamic)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<SkillResources, A::Error> {
                Vec::<SkillResource>::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(SkillResources::Files)
            }
        }
        d.deserialize_any(ResourcesVisitor)
    }
}

/// The entry of one skill (spec: `Skill`), the same in `skills/list` and `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// Resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter, verbatim, as a JSON object (`name` and `description` always).
    pub frontmatter: JsonObject,
    /// The skill's files.
    pub resources: SkillResources,
    /// Every other member.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Skill {
    /// The frontmatter's `name`.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|v| v.as_str())
    }

    /// The frontmatter's `description`.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|v| v.as_str())
    }

    /// The skill's root directory: the `SKILL.md` URI without `/SKILL.md`.
    pub fn root(&self) -> Option<&str> {
        format::skill_root(&self.uri)
    }

    /// The manifest entry of the file at `uri` (`None` for a dynamic skill or an unlisted file).
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }
}

/// A result struct of the skills methods: its own members, then the ones every cacheable
/// 2026-07-28 result ends with (`resultType`, `ttlMs`, `cacheScope`, `_meta`), written once
/// here with the same serde attributes as the core list results (`schema::resources`), so the
/// wire members and their order are theirs.
macro_rules! cacheable_result {
    ($(#[$attr:meta])* pub struct $name:ident { $($(#[$field_attr:meta])* pub $field:ident: $ty:ty,)* }) => {
        $(#[$attr])*
        #[serde(rename_all = "camelCase")]
        pub struct $name {
            $($(#[$field_attr])* pub $field: $ty,)*
            /// Result kind (2026-07-28 `resultType`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub result_type: Option<String>,
            /// Cache lifetime in milliseconds (2026-07-28).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ttl_ms: Option<u64>,
            /// Cache scope (2026-07-28).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cache_scope: Option<CacheScope>,
            /// Result metadata.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<Meta>,
        }
    };
}

cacheable_result! {
    /// Result of `skills/list` (spec: `ListSkillsResult`).
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
    pub struct ListSkillsResult {
        /// The entries of this page.
        pub skills: Vec<Skill>,
        /// Cursor for the next page.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub next_cursor: Option<Cursor>,
    }
}

/// Params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// URI of the skill's `SKILL.md`.
    pub uri: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl GetSkillParams {
    /// Params naming the skill whose `SKILL.md` is at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        GetSkillParams {
            uri: uri.into(),
            meta: None,
        }
    }
}

cacheable_result! {
    /// Result of `skills/get` (spec: `GetSkillResult`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct GetSkillResult {
        /// The skill's entry.
        pub skill: Skill,
    }
}

/// Params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReadDirectoryParams {
    /// URI of the directory resource (no trailing slash).
    pub uri: String,
    /// Cursor returned as `nextCursor` by the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Result of `resources/directory/read` (spec: `ReadResourceDirectoryResult`): the shape of
/// `resources/list`'s result, the same members on the wire. `resources` holds the directory's
/// direct children (subdirectories have [`DIRECTORY_MIME_TYPE`]); `ttlMs` and `cacheScope` are
/// sent as on the list methods.
pub type ReadDirectoryResult = ListResourcesResult;

request!(
    /// `skills/list` (client → server): the skills a server serves, paginated.
    ListSkills, "skills/list", PaginatedParams, ListSkillsResult
);
request!(
    /// `skills/get` (client → server): one skill's entry by the URI of its `SKILL.md`.
    GetSkill, "skills/get", GetSkillParams, GetSkillResult
);
request!(
    /// `resources/directory/read` (client → server; only when the server declared
    /// `directoryRead: true`): the direct children of a directory resource.
    ReadDirectory, "resources/directory/read", ReadDirectoryParams, ReadDirectoryResult
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_are_an_array_or_dynamic() {
        let files: SkillResources =
            serde_json::from_value(json!([{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 1}])).unwrap();
        assert!(matches!(files, SkillResources::Files(ref f) if f.len() == 1));
        let dynamic: SkillResources = serde_json::from_value(json!("dynamic")).unwrap();
        assert_eq!(dynamic, SkillResources::Dynamic);
        assert_eq!(serde_json::to_value(&dynamic).unwrap(), json!("dynamic"));
        assert!(serde_json::from_value::<SkillResources>(json!("static")).is_err());
        assert!(serde_json::from_value::<SkillResources>(json!({})).is_err());
    }
}
