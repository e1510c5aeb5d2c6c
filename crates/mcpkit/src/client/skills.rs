//! The Skills extension, client side (`io.modelcontextprotocol/skills`, SEP-2640): list and get
//! entries, then load a skill and read its files on demand, each verified against the entry.
//!
//! Nothing is fetched ahead of need: listing reads no file, [`Client::load_skill`] reads only
//! the `SKILL.md`, and [`Client::read_skill_file`] one file when asked. Every read is checked
//! against the entry it was loaded from (listed, size, digest; for `SKILL.md` also the
//! frontmatter, field by field); content that fails is never returned, the error
//! ([`Error::Skill`]) says what differs.

use base64::Engine as _;
use mcpkit_types::ext::skills::format::{self, VerifyError};
use mcpkit_types::ext::skills::{
    self as wire, GetSkill, GetSkillParams, ListSkills, ListSkillsResult, ReadDirectory, ReadDirectoryParams,
    ReadDirectoryResult, Skill, SkillResources,
};
use mcpkit_types::method::{Method, ReadResource};
use mcpkit_types::schema::ResourceContents;

use super::{collect_pages, paginated, Client};
use crate::engine::RequestOptions;
use crate::error::{Error, Result};

/// A loaded skill: the entry it was verified against and its `SKILL.md` text.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    /// The entry the skill was loaded from (reads of its files are checked against it).
    pub entry: Skill,
    /// The verified `SKILL.md`.
    pub text: String,
}

impl LoadedSkill {
    /// The skill's name.
    pub fn name(&self) -> &str {
        self.entry.name().unwrap_or_default()
    }
}

impl Client {
    /// Whether the server declared the Skills extension.
    pub fn serves_skills(&self) -> bool {
        self.server_extension(wire::ID).is_some()
    }

    fn require_skills(&self) -> Result<()> {
        if self.serves_skills() {
            Ok(())
        } else {
            Err(Error::MissingExtension(format!("the {} extension", wire::ID)))
        }
    }

    /// One page of `skills/list`. Reads no skill file.
    pub async fn list_skills(&self, cursor: Option<String>) -> Result<ListSkillsResult> {
        self.require_skills()?;
        self.call::<ListSkills>(&paginated(cursor), RequestOptions::default())
            .await
    }

    /// Every skill entry, following `nextCursor` to the end. Reads no skill file.
    pub async fn list_all_skills(&self) -> Result<Vec<Skill>> {
        collect_pages(|c| async move { self.list_skills(c).await.map(|r| (r.skills, r.next_cursor)) }).await
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill> {
        self.require_skills()?;
        let r = self
            .call::<GetSkill>(&GetSkillParams::new(uri), RequestOptions::default())
            .await?;
        Ok(r.skill)
    }

    /// `resources/directory/read`: one page of the direct children of a directory resource.
    /// Only against a server that declared `directoryRead: true`.
    pub async fn read_directory(&self, uri: &str, cursor: Option<String>) -> Result<ReadDirectoryResult> {
        self.require_skills()?;
        let declared = self
            .server_extension(wire::ID)
            .and_then(|s| s.get(wire::DIRECTORY_READ))
            .and_then(|v| v.as_bool())
            == Some(true);
        if !declared {
            return Err(Error::MissingExtension(format!(
                "{}: true in the {} extension",
                wire::DIRECTORY_READ,
                wire::ID
            )));
        }
        let params = ReadDirectoryParams {
            uri: uri.to_owned(),
            cursor,
            meta: None,
        };
        self.call::<ReadDirectory>(&params, RequestOptions::default()).await
    }

    /// Load a skill from its entry: check the entry, read its `SKILL.md`, and verify size,
    /// digest and frontmatter against the entry. Nothing else is read.
    pub async fn load_skill(&self, entry: &Skill) -> Result<LoadedSkill> {
        format::check_entry(entry).map_err(Error::Skill)?;
        let bytes = self.read_bytes(&entry.uri).await?;
        let text = format::verify_skill_md(entry, &bytes).map_err(Error::Skill)?;
        Ok(LoadedSkill {
            entry: entry.clone(),
            text: text.to_owned(),
        })
    }

    /// Read one file of a loaded skill, verified against the entry it was loaded from: a file
    /// the entry does not list is not read at all.
    pub async fn read_skill_file(&self, skill: &LoadedSkill, uri: &str) -> Result<Vec<u8>> {
        let entry = &skill.entry;
        if entry.resources != SkillResources::Dynamic && entry.file(uri).is_none() {
            return Err(Error::Skill(VerifyError::Unlisted {
                skill: entry.uri.clone(),
                uri: uri.to_owned(),
            }));
        }
        let bytes = self.read_bytes(uri).await?;
        format::verify_file(entry, uri, &bytes).map_err(Error::Skill)?;
        Ok(bytes)
    }

    /// The raw bytes of a resource: its text as UTF-8, or its blob decoded (the bytes a skill
    /// manifest's digest and size cover). Refuses more than a skill may hold in all.
    async fn read_bytes(&self, uri: &str) -> Result<Vec<u8>> {
        let read = self.read_resource(uri).await?;
        let contents = read
            .contents
            .iter()
            .find(|c| content_uri(c) == uri)
            .or_else(|| read.contents.first())
            .ok_or_else(|| Error::InvalidResponse(format!("{} of {uri} returned no contents", ReadResource::NAME)))?;
        let bytes = match contents {
            ResourceContents::Text(t) => t.text.clone().into_bytes(),
            ResourceContents::Blob(b) => base64::engine::general_purpose::STANDARD.decode(&b.blob).map_err(|e| {
                Error::InvalidResponse(format!("{} of {uri}: the blob is not base64: {e}", ReadResource::NAME))
            })?,
        };
        if bytes.len() as u64 > wire::MAX_TOTAL_SIZE {
            return Err(Error::Skill(VerifyError::InvalidEntry {
                skill: uri.to_owned(),
                reason: format!("{} bytes read, more than {}", bytes.len(), wire::MAX_TOTAL_SIZE),
            }));
        }
        Ok(bytes)
    }
}

fn content_uri(c: &ResourceContents) -> &str {
    match c {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
    }
}
