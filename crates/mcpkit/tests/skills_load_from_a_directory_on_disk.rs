//! Skills extension: serving skills from a directory on disk. Every directory holding a
//! `SKILL.md` is a skill at its path below the root (nested skills too, their files also in the
//! enclosing skill's manifest); a symbolic link that resolves outside its skill is refused, as
//! is a `SKILL.md` on disk without frontmatter and a root with no skill at all.

use std::path::{Path, PathBuf};

use mcpkit::server::extensions::skills::{SkillError, Skills};
use mcpkit::types::ext::skills::SkillResources;

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).unwrap();
        let dir = std::env::temp_dir().join(format!("mcpkit-skills-{tag}-{:016x}", u64::from_le_bytes(bytes)));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn write(&self, rel: &str, text: &str) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\n\nBody.\n")
}

fn uris(skills: &Skills) -> Vec<(String, Vec<String>)> {
    skills
        .entries()
        .into_iter()
        .map(|s| {
            let files = match s.resources {
                SkillResources::Files(f) => f.into_iter().map(|f| f.uri).collect(),
                SkillResources::Dynamic => vec![],
            };
            (s.uri, files)
        })
        .collect()
}

#[test]
fn every_directory_with_a_skill_md_is_a_skill() {
    let d = TempDir::new("tree");
    d.write("git-workflow/SKILL.md", &md("git-workflow"));
    d.write("acme/billing/refunds/SKILL.md", &md("refunds"));
    d.write("acme/billing/refunds/examples/email.md", "Hi\n");
    d.write("acme/billing/refunds/nested-one/SKILL.md", &md("nested-one"));
    d.write("acme/README.md", "not part of any skill\n");
    let skills = Skills::new().dir(&d.0).unwrap();
    assert_eq!(
        uris(&skills),
        vec![
            (
                "skill://acme/billing/refunds/SKILL.md".into(),
                vec![
                    "skill://acme/billing/refunds/SKILL.md".into(),
                    "skill://acme/billing/refunds/examples/email.md".into(),
                    "skill://acme/billing/refunds/nested-one/SKILL.md".into(),
                ]
            ),
            (
                "skill://acme/billing/refunds/nested-one/SKILL.md".into(),
                vec!["skill://acme/billing/refunds/nested-one/SKILL.md".into()]
            ),
            (
                "skill://git-workflow/SKILL.md".into(),
                vec!["skill://git-workflow/SKILL.md".into()]
            ),
        ]
    );
}

#[test]
fn a_root_that_is_one_skill_is_named_by_its_directory() {
    let d = TempDir::new("one");
    let root = d.0.join("tidy");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("SKILL.md"), md("tidy")).unwrap();
    let skills = Skills::new().dir(&root).unwrap();
    assert_eq!(skills.entries()[0].uri, "skill://tidy/SKILL.md");
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_skill_is_refused() {
    let d = TempDir::new("link");
    d.write("tidy/SKILL.md", &md("tidy"));
    d.write("secret.txt", "do not serve\n");
    std::os::unix::fs::symlink(d.0.join("secret.txt"), d.0.join("tidy/leak.txt")).unwrap();
    let e = Skills::new().dir(d.0.join("tidy")).unwrap_err();
    assert!(matches!(e, SkillError::OutsideSkill { .. }), "{e:?}");
    assert!(e.to_string().contains("resolves outside the skill directory"), "{e}");
    // A link that stays inside is served as the file it points to.
    std::fs::remove_file(d.0.join("tidy/leak.txt")).unwrap();
    d.write("tidy/real.md", "real\n");
    std::os::unix::fs::symlink(d.0.join("tidy/real.md"), d.0.join("tidy/alias.md")).unwrap();
    assert!(Skills::new().dir(d.0.join("tidy")).is_ok());
}

#[test]
fn a_skill_md_on_disk_without_frontmatter_is_refused() {
    let d = TempDir::new("nofm");
    d.write("tidy/SKILL.md", "# Tidy\n");
    let e = Skills::new().dir(&d.0).unwrap_err();
    assert!(matches!(e, SkillError::Frontmatter { .. }), "{e:?}");
}

#[test]
fn a_root_without_skills_is_refused() {
    let d = TempDir::new("empty");
    d.write("notes.md", "nothing\n");
    assert!(matches!(Skills::new().dir(&d.0).unwrap_err(), SkillError::NoSkills(_)));
    let missing: &Path = Path::new("/nonexistent/mcpkit/skills");
    assert!(matches!(Skills::new().dir(missing).unwrap_err(), SkillError::Io { .. }));
}
