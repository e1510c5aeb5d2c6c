//! Skills as the server holds them: checked once, from memory or from a directory on disk,
//! with their manifest (digest and size of every file) computed at load.

use std::path::{Path, PathBuf};

use mcpkit_types::ext::skills::format::{self, FrontmatterError};
use mcpkit_types::ext::skills::{SkillResource, MAX_RESOURCES, MAX_TOTAL_SIZE, SCHEME, SKILL_MD};
use mcpkit_types::schema::JsonObject;

/// Why a skill was refused. Each names the skill or file at fault.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The `SKILL.md` has no usable frontmatter.
    #[error("skill {skill_path}: {error}")]
    Frontmatter {
        /// The skill path.
        skill_path: String,
        /// What is wrong with the frontmatter.
        error: FrontmatterError,
    },
    /// The frontmatter `name` breaks the Agent Skills naming rules.
    #[error("skill {skill_path}: name {name:?} breaks the naming rules (1-64 lowercase letters, digits and single hyphens, not at either end)")]
    InvalidName {
        /// The skill path.
        skill_path: String,
        /// The name.
        name: String,
    },
    /// The last segment of the skill path is not the frontmatter `name`.
    #[error("skill {skill_path}: its last path segment must equal its name {name:?}")]
    NameMismatch {
        /// The skill path.
        skill_path: String,
        /// The name.
        name: String,
    },
    /// A skill path or file path that cannot be a `skill://` URI path, or that leaves the skill.
    #[error("{path:?}: {reason}")]
    BadPath {
        /// The path.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A file on disk (a symbolic link) that resolves outside its skill's directory.
    #[error("{}: resolves outside the skill directory {}", path.display(), skill_dir.display())]
    OutsideSkill {
        /// The file.
        path: PathBuf,
        /// The skill's directory.
        skill_dir: PathBuf,
    },
    /// Over the limits every host accepts (512 files, 16 MiB).
    #[error("skill {skill_path}: {what}, over the limit of {limit}")]
    TooLarge {
        /// The skill path.
        skill_path: String,
        /// What is over.
        what: String,
        /// The limit.
        limit: u64,
    },
    /// Two skills, or two files, at one URI.
    #[error("{uri} is served twice")]
    Duplicate {
        /// The URI.
        uri: String,
    },
    /// No `SKILL.md` anywhere under a directory given as skills.
    #[error("{}: no {SKILL_MD} in it or below it", .0.display())]
    NoSkills(PathBuf),
    /// Reading a file or directory failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        error: String,
    },
}

/// One skill to serve, given in memory: its skill path (`git-workflow`, `acme/billing/refunds`;
/// the last segment is its name), its `SKILL.md` and its other files.
#[derive(Debug, Clone)]
pub struct SkillDef {
    pub(super) skill_path: String,
    pub(super) files: Vec<(String, Vec<u8>)>,
}

impl SkillDef {
    /// A skill at `skill_path` whose `SKILL.md` is `skill_md`.
    pub fn new(skill_path: impl Into<String>, skill_md: impl Into<Vec<u8>>) -> Self {
        SkillDef {
            skill_path: skill_path.into(),
            files: vec![(SKILL_MD.to_owned(), skill_md.into())],
        }
    }

    /// Add a file at `path`, relative to the skill's root (`references/FORMS.md`).
    pub fn file(mut self, path: impl Into<String>, content: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), content.into()));
        self
    }
}

/// A checked skill: its URIs, frontmatter and files with their manifest.
#[derive(Debug, Clone)]
pub(super) struct Loaded {
    /// `skill://<skill-path>`.
    pub(super) root: String,
    /// `skill://<skill-path>/SKILL.md`.
    pub(super) uri: String,
    pub(super) frontmatter: JsonObject,
    /// `(path relative to the root, content)`, `SKILL.md` first.
    pub(super) files: Vec<(String, Vec<u8>)>,
    /// The manifest, in the order of `files`.
    pub(super) manifest: Vec<SkillResource>,
}

/// Characters a path segment may hold: RFC 3986 unreserved and sub-delims, `:` and `@`.
fn segment_ok(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b))
}

fn check_path(path: &str) -> Result<(), SkillError> {
    let bad = |reason| SkillError::BadPath {
        path: path.to_owned(),
        reason,
    };
    if path.split('/').any(|s| s == "." || s == "..") {
        return Err(bad("a `.` or `..` segment would leave the skill"));
    }
    if !path.split('/').all(segment_ok) {
        return Err(bad(
            "empty segments, a leading or trailing `/`, and characters outside RFC 3986 unreserved and sub-delims are not allowed",
        ));
    }
    Ok(())
}

impl SkillDef {
    /// Check the skill (frontmatter, name, paths, limits) and compute its manifest.
    pub(super) fn load(self) -> Result<Loaded, SkillError> {
        let SkillDef { skill_path, mut files } = self;
        check_path(&skill_path)?;
        let text = String::from_utf8_lossy(&files[0].1);
        let frontmatter = format::parse_frontmatter(&text).map_err(|error| SkillError::Frontmatter {
            skill_path: skill_path.clone(),
            error,
        })?;
        let name = frontmatter
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned();
        if !format::is_valid_name(&name) {
            return Err(SkillError::InvalidName { skill_path, name });
        }
        if skill_path.rsplit('/').next() != Some(name.as_str()) {
            return Err(SkillError::NameMismatch { skill_path, name });
        }
        let root = format!("{SCHEME}{skill_path}");
        let mut seen = std::collections::HashSet::new();
        for (path, _) in &files {
            check_path(path)?;
            if !seen.insert(path.clone()) {
                return Err(SkillError::Duplicate {
                    uri: format!("{root}/{path}"),
                });
            }
        }
        // SKILL.md first, the rest in path order: a stable manifest.
        files[1..].sort_by(|a, b| a.0.cmp(&b.0));
        let too_large = |what: String, limit: u64| SkillError::TooLarge {
            skill_path: skill_path.clone(),
            what,
            limit,
        };
        if files.len() > MAX_RESOURCES {
            return Err(too_large(format!("{} files", files.len()), MAX_RESOURCES as u64));
        }
        let total: u64 = files.iter().map(|(_, c)| c.len() as u64).sum();
        if total > MAX_TOTAL_SIZE {
            return Err(too_large(format!("{total} bytes"), MAX_TOTAL_SIZE));
        }
        let manifest = files
            .iter()
            .map(|(path, content)| SkillResource {
                uri: format!("{root}/{path}"),
                digest: format::digest(content),
                size: content.len() as u64,
            })
            .collect();
        Ok(Loaded {
            uri: format!("{root}/{SKILL_MD}"),
            root,
            frontmatter,
            files,
            manifest,
        })
    }
}

/// Every skill under `root`: each directory holding a `SKILL.md` is a skill whose path is the
/// directory's path below `root` (or, for `root` itself, its own name), with every file below
/// it, nested skills' files included. A symbolic link is followed only within its skill.
pub(super) fn from_dir(root: &Path) -> Result<Vec<SkillDef>, SkillError> {
    let io = |path: &Path, e: std::io::Error| SkillError::Io {
        path: path.to_owned(),
        error: e.to_string(),
    };
    let root = root.canonicalize().map_err(|e| io(root, e))?;
    let mut skill_dirs = Vec::new();
    find_skill_dirs(&root, &mut skill_dirs, &io)?;
    if skill_dirs.is_empty() {
        return Err(SkillError::NoSkills(root));
    }
    let mut defs = Vec::new();
    for dir in skill_dirs {
        let skill_path = if dir == root {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            relative(&root, &dir)
        };
        let mut files = Vec::new();
        collect_files(&dir, &dir, &mut files, &io)?;
        // SKILL.md first (SkillDef::load reads it from there).
        files.sort_by_key(|(p, _)| p != SKILL_MD);
        defs.push(SkillDef { skill_path, files });
    }
    Ok(defs)
}

/// `dir`'s path below `root`, `/`-separated.
fn relative(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// The entries of `dir`, by name (so the manifest and the skill order do not depend on the
/// file system's order).
fn sorted_entries(
    dir: &Path,
    io: &dyn Fn(&Path, std::io::Error) -> SkillError,
) -> Result<Vec<std::fs::DirEntry>, SkillError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    Ok(entries)
}

fn find_skill_dirs(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    io: &dyn Fn(&Path, std::io::Error) -> SkillError,
) -> Result<(), SkillError> {
    if dir.join(SKILL_MD).is_file() {
        out.push(dir.to_owned());
    }
    for entry in sorted_entries(dir, io)? {
        let path = entry.path();
        // Real directories only: a linked directory is not searched for skills.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            find_skill_dirs(&path, out, io)?;
        }
    }
    Ok(())
}

fn collect_files(
    skill_dir: &Path,
    dir: &Path,
    out: &mut Vec<(String, Vec<u8>)>,
    io: &dyn Fn(&Path, std::io::Error) -> SkillError,
) -> Result<(), SkillError> {
    for entry in sorted_entries(dir, io)? {
        let path = entry.path();
        let resolved = path.canonicalize().map_err(|e| io(&path, e))?;
        if !resolved.starts_with(skill_dir) {
            return Err(SkillError::OutsideSkill {
                path,
                skill_dir: skill_dir.to_owned(),
            });
        }
        if resolved.is_dir() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                collect_files(skill_dir, &path, out, io)?;
            }
        } else if resolved.is_file() {
            if out.len() >= MAX_RESOURCES {
                return Err(SkillError::TooLarge {
                    skill_path: skill_dir.display().to_string(),
                    what: format!("more than {MAX_RESOURCES} files"),
                    limit: MAX_RESOURCES as u64,
                });
            }
            let content = std::fs::read(&resolved).map_err(|e| io(&path, e))?;
            out.push((relative(skill_dir, &path), content));
        }
    }
    Ok(())
}
