//! What a skills server answers: the entries (`skills/list`, `skills/get`), the directory tree
//! (`resources/directory/read`), and the errors for `skill://` URIs it does not serve.

use std::collections::{BTreeMap, HashMap, HashSet};

use mcpkit_types::ext::skills::{
    GetSkillParams, GetSkillResult, ListSkillsResult, ReadDirectoryParams, ReadDirectoryResult, Skill, SkillResources,
    DIRECTORY_MIME_TYPE, SCHEME, SKILL_MD,
};
use mcpkit_types::schema::{JsonObject, PaginatedParams, Resource};
use mcpkit_types::ErrorObject;
use serde_json::json;

use super::load::Loaded;
use crate::engine::HandlerResult;
use crate::server::Call;
use crate::server::{cursor_for, page_of};

/// The skills of one server, with every lookup the methods need, built once.
#[derive(Debug, Default)]
pub(super) struct Catalogue {
    entries: Vec<Skill>,
    /// `SKILL.md` URI → index in `entries`.
    by_uri: HashMap<String, usize>,
    /// Every file URI served.
    files: HashSet<String>,
    /// Directory URI (no trailing slash) → its direct children.
    dirs: BTreeMap<String, Vec<Resource>>,
}

/// The MIME type of a skill file, from its extension; text that is not one of these is
/// `text/plain`, anything else `application/octet-stream`.
pub(super) fn mime_type(path: &str, content: &[u8]) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(content).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

impl Catalogue {
    pub(super) fn build(skills: &[Loaded]) -> Catalogue {
        let mut c = Catalogue::default();
        for s in skills {
            c.by_uri.insert(s.uri.clone(), c.entries.len());
            c.entries.push(Skill {
                uri: s.uri.clone(),
                frontmatter: s.frontmatter.clone(),
                resources: SkillResources::Files(s.manifest.clone()),
                extra: JsonObject::new(),
            });
            for (path, content) in &s.files {
                let uri = format!("{}/{path}", s.root);
                if c.files.insert(uri.clone()) {
                    let name = path.rsplit('/').next().unwrap_or(path);
                    let mut file = Resource::new(&uri, name);
                    file.mime_type = Some(mime_type(path, content).to_owned());
                    file.size = Some(content.len() as u64);
                    c.add_child(&uri, file);
                }
            }
        }
        for children in c.dirs.values_mut() {
            children.sort_by(|a, b| a.uri.cmp(&b.uri));
        }
        c
    }

    /// Record `child` (at `uri`) under its parent directory, and each ancestor directory up to
    /// the first segment after the scheme under its own parent.
    fn add_child(&mut self, uri: &str, child: Resource) {
        let Some((parent, _)) = uri.rsplit_once('/') else {
            return;
        };
        if parent.len() <= SCHEME.len() {
            return;
        }
        let new_dir = !self.dirs.contains_key(parent);
        self.dirs.entry(parent.to_owned()).or_default().push(child);
        if new_dir {
            let name = parent.rsplit('/').next().unwrap_or(parent);
            let mut dir = Resource::new(parent, name);
            dir.mime_type = Some(DIRECTORY_MIME_TYPE.to_owned());
            self.add_child(parent, dir);
        }
    }

    /// The entries, in the order the skills were added.
    pub(super) fn entries(&self) -> &[Skill] {
        &self.entries
    }

    /// Whether `uri` is a file this catalogue serves.
    pub(super) fn serves_file(&self, uri: &str) -> bool {
        self.files.contains(uri)
    }

    /// Why `uri` (a `skill://` URI) is not served, as the message of a -32602.
    pub(super) fn not_served(&self, uri: &str, what: &str) -> ErrorObject {
        let path = uri.strip_prefix(SCHEME).unwrap_or(uri);
        let message = if path
            .split('/')
            .any(|s| s == "." || s == ".." || s.eq_ignore_ascii_case("%2e%2e"))
        {
            format!("{uri} leaves its skill: `.` and `..` segments are not allowed")
        } else if let Some(skill) = self
            .entries
            .iter()
            .filter_map(|e| e.root())
            .find(|root| uri.starts_with(root) && uri.as_bytes().get(root.len()) == Some(&b'/'))
        {
            format!("{uri} is not {what} of the skill at {skill}/{SKILL_MD}")
        } else {
            format!("No skill is served at {uri}")
        };
        ErrorObject::invalid_params(message).with_data(json!({ "uri": uri }))
    }

    /// `skills/list`: one page of entries (entries are whole: a page never splits one).
    pub(super) fn list(&self, call: &Call, p: PaginatedParams) -> HandlerResult {
        let (range, next_cursor) = page(call, p.cursor.as_deref(), self.entries.len())?;
        let result = ListSkillsResult {
            skills: self.entries[range].to_vec(),
            next_cursor,
            ..Default::default()
        };
        call.reply_list(&result)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
    pub(super) fn get(&self, call: &Call, p: GetSkillParams) -> HandlerResult {
        let Some(&i) = self.by_uri.get(&p.uri) else {
            return Err(self.not_served(&p.uri, "the SKILL.md"));
        };
        let result = GetSkillResult {
            skill: self.entries[i].clone(),
            result_type: None,
            ttl_ms: None,
            cache_scope: None,
            meta: None,
        };
        call.reply_list(&result)
    }

    /// `resources/directory/read`: the direct children of a directory resource.
    pub(super) fn read_directory(&self, call: &Call, p: ReadDirectoryParams) -> HandlerResult {
        let Some(children) = self.dirs.get(&p.uri) else {
            let message = if self.files.contains(&p.uri) {
                format!("{} is not a directory resource", p.uri)
            } else {
                format!("No directory resource at {}", p.uri)
            };
            return Err(ErrorObject::invalid_params(message).with_data(json!({ "uri": p.uri })));
        };
        let (range, next_cursor) = page(call, p.cursor.as_deref(), children.len())?;
        let result = ReadDirectoryResult {
            resources: children[range].to_vec(),
            next_cursor,
            ..Default::default()
        };
        // Caching hints as on the list methods: hosts treat the listing like `resources/list`.
        call.reply_list(&result)
    }
}

/// Which of `len` entries the page `cursor` names (`None`: the first) holds, at the server's
/// page size, and the cursor of the next page if there is one; a cursor naming no page is
/// invalid params.
fn page(
    call: &Call,
    cursor: Option<&str>,
    len: usize,
) -> Result<(std::ops::Range<usize>, Option<String>), ErrorObject> {
    let size = call.page_size();
    let page = match cursor {
        None => 0,
        Some(c) => page_of(c)
            .filter(|i| i * size < len)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Invalid cursor: {c:?}")))?,
    };
    let start = page * size;
    let end = (start + size).min(len);
    Ok((start..end, (end < len).then(|| cursor_for(page + 1))))
}
