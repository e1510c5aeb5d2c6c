//! What server and host both check about a skill: `SKILL.md` frontmatter, the Agent Skills
//! naming rules, `skill://` URIs, digests, and the verification a host does before it uses a
//! file it read (spec: the Skills extension, "Skill Format", "Resource Mapping", "Skill
//! Entries", "Limits", "Integrity and Verification").

use serde_json::Value;
use sha2::{Digest, Sha256};
use yaml_rust2::{Yaml, YamlLoader};

use super::{Skill, SkillResources, MAX_RESOURCES, MAX_TOTAL_SIZE, SKILL_MD};
use crate::schema::JsonObject;

/// `sha256:{hex}` of `bytes`, as a skill manifest carries it.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

/// Whether `name` follows the Agent Skills naming rules: 1–64 characters, lowercase letters,
/// digits and hyphens, no leading, trailing or consecutive hyphen.
pub fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    (1..=64).contains(&b.len())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
        && !name.contains("--")
}

/// The skill name a `SKILL.md` URI names: its second-to-last path segment
/// (`skill://acme/billing/refunds/SKILL.md` → `refunds`).
pub fn name_from_uri(uri: &str) -> Option<&str> {
    let root = skill_root(uri)?;
    let path = &root[root.find("://")? + 3..];
    path.rsplit('/').next().filter(|s| !s.is_empty())
}

/// The skill root of a `SKILL.md` URI: the URI without `/SKILL.md`.
pub fn skill_root(uri: &str) -> Option<&str> {
    let root = uri.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    // At least one path segment after the scheme.
    let after = &root[root.find("://")? + 3..];
    (!after.is_empty()).then_some(root)
}

/// Why a `SKILL.md` frontmatter could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The file does not begin with a `---` line closed by another `---` line.
    Missing,
    /// The block between the `---` lines is not YAML.
    Yaml(String),
    /// The YAML is not a mapping.
    NotAMapping,
    /// `name` or `description` is missing, empty or not a string.
    MissingField(&'static str),
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrontmatterError::Missing => {
                f.write_str("SKILL.md does not begin with a --- delimited YAML frontmatter block")
            }
            FrontmatterError::Yaml(e) => write!(f, "the SKILL.md frontmatter is not valid YAML: {e}"),
            FrontmatterError::NotAMapping => f.write_str("the SKILL.md frontmatter is not a YAML mapping"),
            FrontmatterError::MissingField(field) => {
                write!(f, "the SKILL.md frontmatter has no non-empty string {field:?}")
            }
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// The frontmatter block of a `SKILL.md`: the text between a first line `---` and the next line
/// that is `---` (trailing spaces allowed), after an optional byte order mark.
fn frontmatter_block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare
            .strip_prefix("---")
            .is_some_and(|t| t.trim_matches([' ', '\t']).is_empty())
        {
            // The block ends at the newline before the closing line.
            let block = &rest[..offset];
            return Some(
                block
                    .strip_suffix('\n')
                    .map_or(block, |b| b.strip_suffix('\r').unwrap_or(b)),
            );
        }
        offset += line.len();
    }
    None
}

/// Parse a `SKILL.md` frontmatter into a JSON object, as a skill entry carries it verbatim;
/// `name` and `description` must be non-empty strings.
pub fn parse_frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let block = frontmatter_block(text).ok_or(FrontmatterError::Missing)?;
    let docs = YamlLoader::load_from_str(block).map_err(|e| FrontmatterError::Yaml(e.to_string()))?;
    let map = match docs.into_iter().next().map(yaml_to_json) {
        Some(Value::Object(map)) => map,
        _ => return Err(FrontmatterError::NotAMapping),
    };
    for field in ["name", "description"] {
        if map.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(FrontmatterError::MissingField(field));
        }
    }
    Ok(map)
}

/// A YAML value as JSON (the core schema: numbers, booleans, null, strings; mapping keys that
/// are not strings are written as their YAML text).
fn yaml_to_json(y: Yaml) -> Value {
    match y {
        Yaml::Real(s) => s
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(s), Value::Number),
        Yaml::Integer(i) => Value::from(i),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) | Yaml::Real(s) => s,
                        Yaml::Integer(i) => i.to_string(),
                        Yaml::Boolean(b) => b.to_string(),
                        _ => String::from("null"),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

/// Why a host must not use what it read for a skill (spec: "Integrity and Verification"), or
/// must not load an entry at all ("Resources", "Limits").
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The file is not in the entry's manifest (an unlisted file is a change to the skill).
    Unlisted {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// The file read.
        uri: String,
    },
    /// The content is not as long as the manifest says.
    Size {
        /// The file.
        uri: String,
        /// The manifest's size.
        expected: u64,
        /// The length read.
        actual: u64,
    },
    /// The content does not hash to the manifest's digest.
    Digest {
        /// The file.
        uri: String,
        /// The manifest's digest.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The `SKILL.md` read has no usable frontmatter.
    Frontmatter {
        /// The file.
        uri: String,
        /// What is wrong with it.
        error: FrontmatterError,
    },
    /// The `SKILL.md` frontmatter differs from the entry's.
    FrontmatterMismatch {
        /// The file.
        uri: String,
        /// The first field that differs.
        field: String,
        /// The entry's value, as JSON (`null`: absent).
        entry: String,
        /// The file's value, as JSON (`null`: absent).
        file: String,
    },
    /// The entry itself is not one a host may load.
    InvalidEntry {
        /// The skill's `SKILL.md` URI.
        skill: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::Unlisted { skill, uri } => {
                write!(f, "{uri} is not listed in the manifest of skill {skill}")
            }
            VerifyError::Size { uri, expected, actual } => {
                write!(
                    f,
                    "{uri}: the server sent {actual} bytes where the skill's manifest says {expected}"
                )
            }
            VerifyError::Digest { uri, expected, actual } => {
                write!(
                    f,
                    "{uri}: the content hashes to {actual} where the skill's manifest says {expected}"
                )
            }
            VerifyError::Frontmatter { uri, error } => write!(f, "{uri}: {error}"),
            VerifyError::FrontmatterMismatch {
                uri,
                field,
                entry,
                file,
            } => write!(
                f,
                "{uri}: frontmatter field {field:?} is {file} in the file but {entry} in the skill's entry"
            ),
            VerifyError::InvalidEntry { skill, reason } => write!(f, "skill {skill} cannot be loaded: {reason}"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Check an entry before loading it: its URI names a `SKILL.md` whose final path segment is
/// `frontmatter.name` under the naming rules, and a manifest (unless dynamic) that lists the
/// `SKILL.md`, only files within the skill, each once, within the limits.
pub fn check_entry(skill: &Skill) -> Result<(), VerifyError> {
    let invalid = |reason: String| VerifyError::InvalidEntry {
        skill: skill.uri.clone(),
        reason,
    };
    let root = skill
        .root()
        .ok_or_else(|| invalid(format!("its uri does not end in /{SKILL_MD}")))?;
    let name = skill
        .name()
        .ok_or_else(|| invalid("its frontmatter has no name".into()))?;
    if skill.description().is_none_or(str::is_empty) {
        return Err(invalid("its frontmatter has no description".into()));
    }
    if name_from_uri(&skill.uri) != Some(name) {
        return Err(invalid(format!(
            "the final segment of its uri is not its name {name:?}"
        )));
    }
    if !is_valid_name(name) {
        return Err(invalid(format!("{name:?} breaks the skill naming rules")));
    }
    let SkillResources::Files(files) = &skill.resources else {
        return Ok(());
    };
    if !files.iter().any(|f| f.uri == skill.uri) {
        return Err(invalid(format!("its manifest does not list {SKILL_MD}")));
    }
    let mut seen = std::collections::HashSet::new();
    for f in files {
        let inside = f.uri.strip_prefix(root).and_then(|r| r.strip_prefix('/'));
        // `..` (or `.`, or an empty segment) would resolve outside the skill's directory.
        if inside.is_none_or(|r| r.split('/').any(|s| s.is_empty() || s == "." || s == "..")) {
            return Err(invalid(format!("its manifest lists {}, outside the skill", f.uri)));
        }
        if !seen.insert(f.uri.as_str()) {
            return Err(invalid(format!("its manifest lists {} twice", f.uri)));
        }
    }
    if files.len() > MAX_RESOURCES {
        return Err(invalid(format!("{} files, more than {MAX_RESOURCES}", files.len())));
    }
    let total: u64 = files.iter().map(|f| f.size).sum();
    if total > MAX_TOTAL_SIZE {
        return Err(invalid(format!("{total} bytes in all, more than {MAX_TOTAL_SIZE}")));
    }
    Ok(())
}

/// Verify the bytes read for `uri` against the skill's manifest: listed, of the listed size,
/// hashing to the listed digest. A dynamic skill has nothing to verify against.
pub fn verify_file(skill: &Skill, uri: &str, bytes: &[u8]) -> Result<(), VerifyError> {
    if skill.resources == SkillResources::Dynamic {
        return Ok(());
    }
    let Some(entry) = skill.file(uri) else {
        return Err(VerifyError::Unlisted {
            skill: skill.uri.clone(),
            uri: uri.to_owned(),
        });
    };
    let actual = bytes.len() as u64;
    if actual != entry.size {
        return Err(VerifyError::Size {
            uri: uri.to_owned(),
            expected: entry.size,
            actual,
        });
    }
    let actual = digest(bytes);
    if actual != entry.digest {
        return Err(VerifyError::Digest {
            uri: uri.to_owned(),
            expected: entry.digest.clone(),
            actual,
        });
    }
    Ok(())
}

/// Verify a `SKILL.md` read for `skill`: the file checks of [`verify_file`], then its
/// frontmatter, parsed and compared field by field with the entry's. Returns the text.
pub fn verify_skill_md<'a>(skill: &Skill, bytes: &'a [u8]) -> Result<&'a str, VerifyError> {
    verify_file(skill, &skill.uri, bytes)?;
    let frontmatter_error = |error| VerifyError::Frontmatter {
        uri: skill.uri.clone(),
        error,
    };
    let text = std::str::from_utf8(bytes)
        .map_err(|_| frontmatter_error(FrontmatterError::Yaml("the file is not UTF-8".into())))?;
    let file = parse_frontmatter(text).map_err(frontmatter_error)?;
    let fields = skill.frontmatter.keys().chain(file.keys());
    for field in fields {
        let (e, f) = (
            skill.frontmatter.get(field).unwrap_or(&Value::Null),
            file.get(field).unwrap_or(&Value::Null),
        );
        if e != f {
            return Err(VerifyError::FrontmatterMismatch {
                uri: skill.uri.clone(),
                field: field.clone(),
                entry: e.to_string(),
                file: f.to_string(),
            });
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frontmatter_reads_as_json() {
        let text = "---\nname: pdf-processing\ndescription: Extract PDFs\nmetadata:\n  version: \"2.1\"\n  n: 3\nallowed-tools: [a, b]\n---\n\nBody\n";
        let fm = parse_frontmatter(text).unwrap();
        assert_eq!(
            Value::Object(fm),
            json!({"name": "pdf-processing", "description": "Extract PDFs",
                   "metadata": {"version": "2.1", "n": 3}, "allowed-tools": ["a", "b"]})
        );
        assert_eq!(parse_frontmatter("# no frontmatter\n"), Err(FrontmatterError::Missing));
        assert_eq!(parse_frontmatter("---\nname: x\n"), Err(FrontmatterError::Missing));
        assert_eq!(
            parse_frontmatter("---\nname: x\n---\n"),
            Err(FrontmatterError::MissingField("description"))
        );
        assert_eq!(parse_frontmatter("---\n- a\n---\n"), Err(FrontmatterError::NotAMapping));
        assert!(parse_frontmatter("\u{feff}---\r\nname: x\r\ndescription: y\r\n--- \r\nbody").is_ok());
    }

    #[test]
    fn names_and_uris() {
        assert!(is_valid_name("git-workflow"));
        assert!(!is_valid_name("Git"));
        assert!(!is_valid_name("-a"));
        assert!(!is_valid_name("a--b"));
        assert!(!is_valid_name(&"a".repeat(65)));
        assert_eq!(name_from_uri("skill://acme/billing/refunds/SKILL.md"), Some("refunds"));
        assert_eq!(name_from_uri("skill://git-workflow/SKILL.md"), Some("git-workflow"));
        assert_eq!(name_from_uri("skill://SKILL.md"), None);
        assert_eq!(skill_root("skill://a/b/SKILL.md"), Some("skill://a/b"));
        assert_eq!(
            digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
