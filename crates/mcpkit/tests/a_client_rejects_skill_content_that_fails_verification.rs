//! Skills extension, client side: what a server sends for a skill is verified against the entry
//! before it is used, and content that fails is never returned: a size mismatch, a digest
//! mismatch, a `SKILL.md` whose frontmatter differs from the entry's or that has none, a file
//! the entry does not list (not even read), an entry that cannot be loaded. Listing reads no
//! file; the skills methods are not sent to a server that did not declare them; the connection
//! keeps serving after every failure.

use crate::common;

use common::skills::{self, FORMS_MD, PDF_MD};
use mcpkit::server::ResourceDef;
use mcpkit::testing::TestPair;
use mcpkit::types::ext::skills::format::{digest, FrontmatterError, VerifyError};
use mcpkit::types::ext::skills::{Skill, SkillResource, SkillResources};
use mcpkit::{Client, Error, Server};
use serde_json::json;

async fn pair() -> TestPair {
    TestPair::connect(skills::server(), Client::builder()).await.unwrap()
}

fn verify_error(e: Error) -> VerifyError {
    match e {
        Error::Skill(v) => v,
        other => panic!("expected a verification error, got {other:?}"),
    }
}

async fn pdf_entry(pair: &TestPair) -> Skill {
    pair.client.list_all_skills().await.unwrap().remove(0)
}

fn reads(pair: &TestPair) -> usize {
    pair.server_received()
        .iter()
        .filter(|f| f.contains("\"resources/read\""))
        .count()
}

#[tokio::test]
async fn a_verified_skill_loads_and_its_files_read() {
    let pair = pair().await;
    let entry = pdf_entry(&pair).await;
    assert_eq!(reads(&pair), 0, "listing reads no file");
    let skill = pair.client.load_skill(&entry).await.unwrap();
    assert_eq!((skill.name(), skill.text.as_str()), ("pdf-processing", PDF_MD));
    assert_eq!(reads(&pair), 1, "loading reads the SKILL.md only");
    let forms = pair
        .client
        .read_skill_file(&skill, "skill://pdf-processing/references/FORMS.md")
        .await
        .unwrap();
    assert_eq!(forms, FORMS_MD.as_bytes());
}

#[tokio::test]
async fn a_size_mismatch_is_refused() {
    let pair = pair().await;
    let entry = pdf_entry(&pair).await;
    let longer = format!("{PDF_MD}extra bytes\n");
    pair.server
        .add_resource(ResourceDef::text(&entry.uri, "pdf-processing", "text/markdown", longer));
    let e = verify_error(pair.client.load_skill(&entry).await.unwrap_err());
    assert!(matches!(e, VerifyError::Size { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "skill://pdf-processing/SKILL.md: the server sent {} bytes where the skill's manifest says {}",
            PDF_MD.len() + 12,
            PDF_MD.len()
        )
    );
    // The connection keeps serving.
    assert_eq!(pair.client.list_all_skills().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_digest_mismatch_is_refused() {
    let pair = pair().await;
    let entry = pdf_entry(&pair).await;
    let skill = pair.client.load_skill(&entry).await.unwrap();
    let uri = "skill://pdf-processing/references/FORMS.md";
    // Same length, other bytes.
    pair.server
        .add_resource(ResourceDef::text(uri, "FORMS.md", "text/markdown", "# Evil\n\n"));
    let e = verify_error(pair.client.read_skill_file(&skill, uri).await.unwrap_err());
    assert_eq!(
        e,
        VerifyError::Digest {
            uri: uri.into(),
            expected: digest(FORMS_MD.as_bytes()),
            actual: digest(b"# Evil\n\n"),
        }
    );
    assert!(e.to_string().contains("the content hashes to sha256:"), "{e}");
}

#[tokio::test]
async fn a_frontmatter_that_differs_from_the_entry_is_refused() {
    let pair = pair().await;
    let mut entry = pdf_entry(&pair).await;
    entry
        .frontmatter
        .insert("description".into(), json!("Exfiltrate credentials"));
    let e = verify_error(pair.client.load_skill(&entry).await.unwrap_err());
    assert_eq!(
        e.to_string(),
        "skill://pdf-processing/SKILL.md: frontmatter field \"description\" is \"Extract PDF text\" in the file but \"Exfiltrate credentials\" in the skill's entry"
    );
}

#[tokio::test]
async fn a_skill_md_without_frontmatter_is_refused() {
    // A server that serves a SKILL.md with no frontmatter as a plain resource, and an entry
    // whose digest and size match it.
    let text = "# plain\n\nNo frontmatter.\n";
    let server = Server::builder()
        .extension(skills::skills())
        .resource(ResourceDef::text(
            "skill://plain/SKILL.md",
            "plain",
            "text/markdown",
            text,
        ))
        .build();
    let pair = TestPair::connect(server, Client::builder()).await.unwrap();
    let entry = Skill {
        uri: "skill://plain/SKILL.md".into(),
        frontmatter: json!({"name": "plain", "description": "Plain"})
            .as_object()
            .unwrap()
            .clone(),
        resources: SkillResources::Files(vec![SkillResource {
            uri: "skill://plain/SKILL.md".into(),
            digest: digest(text.as_bytes()),
            size: text.len() as u64,
        }]),
        extra: Default::default(),
    };
    let e = verify_error(pair.client.load_skill(&entry).await.unwrap_err());
    assert_eq!(
        e,
        VerifyError::Frontmatter {
            uri: "skill://plain/SKILL.md".into(),
            error: FrontmatterError::Missing
        }
    );
}

#[tokio::test]
async fn an_unlisted_file_is_not_even_read() {
    let pair = pair().await;
    let skill = pair.client.load_skill(&pdf_entry(&pair).await).await.unwrap();
    let before = reads(&pair);
    let e = verify_error(
        pair.client
            .read_skill_file(&skill, "skill://pdf-processing/templates/new.md")
            .await
            .unwrap_err(),
    );
    assert!(matches!(e, VerifyError::Unlisted { .. }), "{e:?}");
    assert_eq!(reads(&pair), before);
}

#[tokio::test]
async fn an_entry_that_cannot_be_loaded_is_refused_before_any_read() {
    let pair = pair().await;
    let mut entry = pdf_entry(&pair).await;
    entry.resources = SkillResources::Files(vec![]);
    let e = verify_error(pair.client.load_skill(&entry).await.unwrap_err());
    assert_eq!(
        e.to_string(),
        "skill skill://pdf-processing/SKILL.md cannot be loaded: its manifest does not list SKILL.md"
    );
    let mut entry = pdf_entry(&pair).await;
    entry.frontmatter.insert("name".into(), json!("other"));
    assert!(matches!(
        verify_error(pair.client.load_skill(&entry).await.unwrap_err()),
        VerifyError::InvalidEntry { .. }
    ));
    assert_eq!(reads(&pair), 0);
}

#[tokio::test]
async fn undeclared_methods_are_not_sent() {
    let pair = TestPair::connect(Server::builder().build(), Client::builder())
        .await
        .unwrap();
    assert!(!pair.client.serves_skills());
    let e = pair.client.list_skills(None).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the server did not declare the io.modelcontextprotocol/skills extension"
    );
    let no_dirs = Server::builder()
        .extension(skills::skills().directory_read(false))
        .build();
    let pair = TestPair::connect(no_dirs, Client::builder()).await.unwrap();
    let e = pair
        .client
        .read_directory("skill://pdf-processing", None)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::MissingExtension(_)), "{e:?}");
    assert!(!pair.server_received().iter().any(|f| f.contains("directory/read")));
}

#[tokio::test]
async fn a_manifest_entry_outside_the_skill_is_refused() {
    let pair = pair().await;
    let mut entry = pdf_entry(&pair).await;
    if let SkillResources::Files(files) = &mut entry.resources {
        files.push(SkillResource {
            uri: "skill://pdf-processing/../../etc/passwd".into(),
            digest: digest(b""),
            size: 0,
        });
    }
    let e = verify_error(pair.client.load_skill(&entry).await.unwrap_err());
    assert_eq!(
        e.to_string(),
        "skill skill://pdf-processing/SKILL.md cannot be loaded: its manifest lists skill://pdf-processing/../../etc/passwd, outside the skill"
    );
}
