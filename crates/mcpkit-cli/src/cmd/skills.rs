//! `mcpkit skills`: the skills a server serves (the Skills extension). `list` (the default)
//! prints them; `get NAME` loads one and downloads every file of it, each verified against the
//! skill's entry (size, digest, and for `SKILL.md` the frontmatter) before it is written.

use std::path::{Path, PathBuf};

use mcpkit::types::ext::skills::{Skill, SkillResources};
use mcpkit::Client;

use super::{with_client, Globals};
use crate::render::print_json;
use crate::target::{one_line, Failure, TargetArgs};

/// What to do.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Action {
    /// Print every skill: URI, name, files, description.
    #[default]
    List,
    /// Download one skill (by name or `SKILL.md` URI), verifying every file.
    Get,
}

/// List skills, or download one: `mcpkit skills`, `mcpkit skills get pdf-processing`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// `list` (default) or `get`.
    #[arg(value_enum, default_value_t)]
    action: Action,
    /// `get`: the skill's name, or the URI of its `SKILL.md`.
    name: Option<String>,
    /// `get`: the directory to write the skill into (default: ./NAME); it must not exist yet.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the raw JSON entries (`list`) or the loaded entry (`get`).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    target: TargetArgs,
}

fn failure(what: &str, e: &mcpkit::Error) -> Failure {
    Failure::usage(format!("{what}: {}", one_line(&e.to_string())))
}

impl Args {
    /// Connect, list or download, disconnect.
    pub async fn run(self, globals: &Globals) -> Result<u8, Failure> {
        let target = self.target.clone();
        with_client("skills", &target, globals, |c| self.serve(c)).await
    }

    async fn serve(self, client: Client) -> Result<u8, Failure> {
        if !client.serves_skills() {
            return Err(Failure::usage(
                "the server does not declare the io.modelcontextprotocol/skills extension",
            ));
        }
        let skills = client.list_all_skills().await.map_err(|e| failure("skills/list", &e))?;
        match self.action {
            Action::List => {
                if self.json {
                    print_json(&skills);
                } else {
                    for s in &skills {
                        println!("{}", crate::terminal::out(&list_line(s)));
                    }
                }
                Ok(0)
            }
            Action::Get => {
                let name = self
                    .name
                    .as_deref()
                    .ok_or_else(|| Failure::usage("skills get needs the skill's NAME or URI"))?;
                let entry = match pick(&skills, name)? {
                    Some(entry) => entry.clone(),
                    // Not listed (a listing may be partial): ask for it by URI.
                    None => client.get_skill(name).await.map_err(|e| failure(name, &e))?,
                };
                let out = self
                    .out
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(entry.name().unwrap_or("skill")));
                download(&client, &entry, &out, self.json).await
            }
        }
    }
}

fn list_line(s: &Skill) -> String {
    let files = match &s.resources {
        SkillResources::Files(f) => format!("{} files, {} bytes", f.len(), f.iter().map(|r| r.size).sum::<u64>()),
        SkillResources::Dynamic => "dynamic".to_owned(),
    };
    format!(
        "{}  {}  ({files})  {}",
        s.name().unwrap_or_default(),
        s.uri,
        s.description().unwrap_or_default()
    )
}

/// The listed skill `name` names: by URI, else by name (several skills may share a name).
fn pick<'a>(skills: &'a [Skill], name: &str) -> Result<Option<&'a Skill>, Failure> {
    if let Some(s) = skills.iter().find(|s| s.uri == name) {
        return Ok(Some(s));
    }
    let named: Vec<&Skill> = skills.iter().filter(|s| s.name() == Some(name)).collect();
    match named.as_slice() {
        [] if name.contains("://") => Ok(None),
        [] => Err(Failure::usage(format!("no listed skill is named {name:?}"))),
        [one] => Ok(Some(one)),
        many => Err(Failure::usage(format!(
            "{} skills are named {name:?}; give one's URI: {}",
            many.len(),
            many.iter().map(|s| s.uri.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// Load the skill, then read, verify and write each of its files under `out`.
async fn download(client: &Client, entry: &Skill, out: &Path, json: bool) -> Result<u8, Failure> {
    if out.exists() {
        return Err(Failure::usage(format!("{} already exists", out.display())));
    }
    let skill = client.load_skill(entry).await.map_err(|e| failure(&entry.uri, &e))?;
    let root = entry.root().unwrap_or_default();
    let mut files = vec![(entry.uri.clone(), skill.text.clone().into_bytes())];
    if let SkillResources::Files(listed) = &entry.resources {
        for f in listed.iter().filter(|f| f.uri != entry.uri) {
            let bytes = client
                .read_skill_file(&skill, &f.uri)
                .await
                .map_err(|e| failure(&f.uri, &e))?;
            files.push((f.uri.clone(), bytes));
        }
    }
    for (uri, bytes) in &files {
        // The entry was checked: every file is inside the skill, without `.` or `..` segments.
        let rel = uri.strip_prefix(root).unwrap_or(uri).trim_start_matches('/');
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Failure::usage(format!("creating {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, bytes).map_err(|e| Failure::usage(format!("writing {}: {e}", path.display())))?;
        if !json {
            println!("verified  {}  ->  {}", crate::terminal::out(uri), path.display());
        }
    }
    if json {
        print_json(&skill.entry);
    }
    Ok(0)
}
