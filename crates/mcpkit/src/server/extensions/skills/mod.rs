//! The Skills extension, server side (`io.modelcontextprotocol/skills`, SEP-2640): serve skills
//! from memory ([`SkillDef`]) or from a directory on disk ([`Skills::dir`]).
//!
//! ```no_run
//! use mcpkit::server::extensions::skills::{SkillDef, Skills};
//!
//! # fn demo() -> Result<(), mcpkit::server::extensions::skills::SkillError> {
//! let skills = Skills::new()
//!     .skill(SkillDef::new(
//!         "git-workflow",
//!         "---\nname: git-workflow\ndescription: Our branching rules\n---\n\nRebase, then merge.\n",
//!     ))?
//!     .dir("./skills")?;
//! let server = mcpkit::Server::builder().extension(skills).build();
//! # let _ = server; Ok(()) }
//! ```
//!
//! Each file becomes a resource `skill://<skill-path>/<file-path>` (the `SKILL.md` with
//! `text/markdown`, its frontmatter `name` and `description`), listed in `resources/list` and
//! read with `resources/read`. The server declares the extension (with `directoryRead: true`
//! unless turned off) and answers `skills/list`, `skills/get` and `resources/directory/read`.
//! A `skill://` URI it does not serve is -32602 with a message naming the problem, in both eras.
//! Skills are checked when added: frontmatter with `name` and `description`, the naming rules,
//! the last path segment equal to the name, file paths that stay inside the skill, and the
//! limits of 512 files and 16 MiB per skill.

mod load;
mod serve;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use mcpkit_types::ext::skills::{self as wire, GetSkill, ListSkills, ReadDirectory, SCHEME};
use mcpkit_types::method::ReadResource;
use mcpkit_types::schema::JsonObject;
use mcpkit_types::{ErrorCode, ErrorObject};

use load::Loaded;
pub use load::{SkillDef, SkillError};
use serve::Catalogue;

use super::{Extension, MethodTable};
use crate::engine::HandlerResult;
use crate::server::middleware::{self, Next};
use crate::server::{Call, ResourceDef, ServerBuilder};

/// The skills a server serves: add them, then hand this to
/// [`ServerBuilder::extension`](crate::ServerBuilder::extension).
#[derive(Debug, Clone)]
pub struct Skills {
    loaded: Vec<Loaded>,
    directory_read: bool,
    catalogue: OnceLock<Arc<Catalogue>>,
}

impl Default for Skills {
    fn default() -> Self {
        Skills {
            loaded: Vec::new(),
            directory_read: true,
            catalogue: OnceLock::new(),
        }
    }
}

impl Skills {
    /// No skills yet; `resources/directory/read` on.
    pub fn new() -> Self {
        Skills::default()
    }

    /// Serve `skill`, after checking it.
    pub fn skill(mut self, skill: SkillDef) -> Result<Self, SkillError> {
        let loaded = skill.load()?;
        if self.loaded.iter().any(|s| s.uri == loaded.uri) {
            return Err(SkillError::Duplicate { uri: loaded.uri });
        }
        self.loaded.push(loaded);
        self.catalogue = OnceLock::new();
        Ok(self)
    }

    /// Serve every skill under the directory `path`: each directory holding a `SKILL.md` is a
    /// skill whose path is its path below `path` (for `path` itself, its own name), with every
    /// file below it. The files are read now; a symbolic link that leaves its skill is refused.
    pub fn dir(self, path: impl AsRef<Path>) -> Result<Self, SkillError> {
        load::from_dir(path.as_ref())?
            .into_iter()
            .try_fold(self, |skills, def| skills.skill(def))
    }

    /// Whether to serve `resources/directory/read` and declare `directoryRead: true` (default on).
    pub fn directory_read(mut self, on: bool) -> Self {
        self.directory_read = on;
        self
    }

    /// The entries `skills/list` answers with, in the order the skills were added.
    pub fn entries(&self) -> Vec<wire::Skill> {
        self.catalogue().entries().to_vec()
    }

    fn catalogue(&self) -> Arc<Catalogue> {
        self.catalogue
            .get_or_init(|| Arc::new(Catalogue::build(&self.loaded)))
            .clone()
    }
}

impl Extension for Skills {
    fn id(&self) -> &str {
        wire::ID
    }

    fn settings(&self) -> JsonObject {
        let mut settings = JsonObject::new();
        if self.directory_read {
            settings.insert(wire::DIRECTORY_READ.into(), true.into());
        }
        settings
    }

    /// Every file as a resource (which also declares the `resources` capability the extension
    /// requires).
    fn extend(&self, mut builder: ServerBuilder) -> ServerBuilder {
        for skill in &self.loaded {
            for (path, content) in &skill.files {
                let uri = format!("{}/{path}", skill.root);
                let mime = serve::mime_type(path, content);
                let mut def = match std::str::from_utf8(content) {
                    Ok(text) => ResourceDef::text(&uri, path.as_str(), mime, text),
                    Err(_) => ResourceDef::blob(
                        &uri,
                        path.as_str(),
                        mime,
                        base64::engine::general_purpose::STANDARD.encode(content),
                    ),
                };
                if *path == wire::SKILL_MD {
                    let text = |k: &str| skill.frontmatter.get(k).and_then(|v| v.as_str()).unwrap_or_default();
                    def.resource.name = text("name").to_owned();
                    def = def.description(text("description"));
                }
                def.resource.size = Some(content.len() as u64);
                builder = builder.resource(def);
            }
        }
        builder
    }

    fn register(&self, table: &mut MethodTable<'_>) {
        let c = self.catalogue();
        let (list, get) = (c.clone(), c.clone());
        table
            .request::<ListSkills, _, _>(move |call, p| std::future::ready(list.list(&call, p)))
            .request::<GetSkill, _, _>(move |call, p| std::future::ready(get.get(&call, p)));
        if self.directory_read {
            let dirs = c.clone();
            table.request::<ReadDirectory, _, _>(move |call, p| std::future::ready(dirs.read_directory(&call, p)));
        }
        table.wrap::<ReadResource>(middleware::from_fn(move |call: Call, next: Next| {
            refuse_unserved_skill_uris(c.clone(), call, next)
        }));
    }
}

/// `resources/read` of a `skill://` URI that no skill (nor another resource or template of the
/// server) serves: -32602 naming the problem (a URI that leaves its skill, a file its skill does
/// not have, no such skill) instead of the core's "Resource not found", in both eras.
async fn refuse_unserved_skill_uris(c: Arc<Catalogue>, call: Call, next: Next) -> HandlerResult {
    let uri = call
        .target()
        .filter(|u| u.starts_with(SCHEME))
        .map(std::borrow::Cow::into_owned);
    let read = next.run(call).await;
    match (read, uri) {
        (Err(e), Some(uri)) if is_not_found(&e, &uri) && !c.serves_file(&uri) => Err(c.not_served(&uri, "a file")),
        (read, _) => read,
    }
}

/// The core's "Resource not found" for `uri` (-32002, or -32602 from 2026-07-28; `data.uri`).
fn is_not_found(e: &ErrorObject, uri: &str) -> bool {
    matches!(e.code, ErrorCode::RESOURCE_NOT_FOUND | ErrorCode::INVALID_PARAMS)
        && e.data.as_ref().and_then(|d| d.get("uri")).and_then(|u| u.as_str()) == Some(uri)
}
