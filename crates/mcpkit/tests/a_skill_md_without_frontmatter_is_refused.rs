//! Skills extension, bad input when skills are added: a `SKILL.md` without frontmatter, or
//! without `name` / `description`, a name that breaks the naming rules or differs from the last
//! segment of the skill path, a file path that leaves the skill, a skill served twice and a
//! skill over the limits are each refused with an error naming the skill or file.

use mcpkit::server::extensions::skills::{SkillDef, SkillError, Skills};
use mcpkit::types::ext::skills::format::FrontmatterError;

fn refused(def: SkillDef) -> SkillError {
    Skills::new().skill(def).unwrap_err()
}

const OK: &str = "---\nname: tidy\ndescription: Keep it tidy\n---\nbody\n";

#[test]
fn no_frontmatter() {
    let e = refused(SkillDef::new("tidy", "# Tidy\n\nNo frontmatter here.\n"));
    assert!(
        matches!(
            e,
            SkillError::Frontmatter {
                error: FrontmatterError::Missing,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "skill tidy: SKILL.md does not begin with a --- delimited YAML frontmatter block"
    );
    // An unclosed block is no frontmatter either.
    let e = refused(SkillDef::new("tidy", "---\nname: tidy\ndescription: x\n"));
    assert!(matches!(
        e,
        SkillError::Frontmatter {
            error: FrontmatterError::Missing,
            ..
        }
    ));
}

#[test]
fn no_description() {
    let e = refused(SkillDef::new("tidy", "---\nname: tidy\n---\n"));
    assert!(matches!(
        e,
        SkillError::Frontmatter {
            error: FrontmatterError::MissingField("description"),
            ..
        }
    ));
}

#[test]
fn frontmatter_that_is_not_yaml() {
    let e = refused(SkillDef::new("tidy", "---\nname: [unclosed\n---\n"));
    assert!(
        matches!(
            e,
            SkillError::Frontmatter {
                error: FrontmatterError::Yaml(_),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn a_name_against_the_rules() {
    let e = refused(SkillDef::new("Tidy", "---\nname: Tidy\ndescription: x\n---\n"));
    assert!(matches!(e, SkillError::InvalidName { .. }), "{e:?}");
}

#[test]
fn a_name_that_is_not_the_last_path_segment() {
    let e = refused(SkillDef::new("acme/neat", OK));
    assert_eq!(
        e.to_string(),
        "skill acme/neat: its last path segment must equal its name \"tidy\""
    );
}

#[test]
fn a_file_path_that_leaves_the_skill() {
    let e = refused(SkillDef::new("tidy", OK).file("../other/SKILL.md", "x"));
    assert!(matches!(e, SkillError::BadPath { .. }), "{e:?}");
    assert!(e.to_string().contains("would leave the skill"), "{e}");
    let e = refused(SkillDef::new("tidy", OK).file("/etc/passwd", "x"));
    assert!(matches!(e, SkillError::BadPath { .. }), "{e:?}");
    let e = refused(SkillDef::new("a//tidy", OK));
    assert!(matches!(e, SkillError::BadPath { .. }), "{e:?}");
}

#[test]
fn a_skill_served_twice() {
    let skills = Skills::new().skill(SkillDef::new("tidy", OK)).unwrap();
    let e = skills.skill(SkillDef::new("tidy", OK)).unwrap_err();
    assert_eq!(e.to_string(), "skill://tidy/SKILL.md is served twice");
    let e = refused(SkillDef::new("tidy", OK).file("SKILL.md", "again"));
    assert!(matches!(e, SkillError::Duplicate { .. }), "{e:?}");
}

#[test]
fn a_skill_over_the_limits() {
    let many = (0..512).fold(SkillDef::new("tidy", OK), |d, i| d.file(format!("f{i}.txt"), "x"));
    assert!(matches!(refused(many), SkillError::TooLarge { .. }));
    let big = SkillDef::new("tidy", OK).file("big.bin", vec![0u8; 16 * 1024 * 1024]);
    let e = refused(big);
    assert!(e.to_string().contains("over the limit of 16777216"), "{e}");
}
