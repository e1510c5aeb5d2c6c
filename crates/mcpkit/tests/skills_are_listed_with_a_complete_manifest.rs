//! Skills extension, server side: a server built with skills declares the extension (with
//! `directoryRead`) and the `resources` capability, lists every skill with its verbatim
//! frontmatter and a complete manifest (digest and size of every file, `SKILL.md` first),
//! never splits an entry across pages, answers `skills/get` with the same entry, lists each
//! `SKILL.md` as a `text/markdown` resource named and described by its frontmatter, and serves
//! the files' exact bytes. On the stateless wire the results carry `ttlMs` and `cacheScope`.

use crate::common;

use common::skills::{self, EXTRACT_PY, FORMS_MD, PDF_MD};
use mcpkit::types::ext::skills::format::digest;
use mcpkit::types::ext::skills::{GetSkill, GetSkillParams, ListSkills, SkillResources, ID};
use mcpkit::types::method::{ListResources, ReadResource};
use mcpkit::types::schema::{PaginatedParams, ReadResourceParams, ResourceContents};
use mcpkit::types::ProtocolVersion;
use mcpkit::Server;
use serde_json::json;

#[test]
fn the_extension_and_resources_are_declared() {
    let caps = skills::server().capabilities();
    assert_eq!(
        caps.extension(ID),
        Some(&json!({"directoryRead": true}).as_object().unwrap().clone())
    );
    assert!(caps.resources.is_some());
    let without = Server::builder()
        .extension(skills::skills().directory_read(false))
        .build();
    assert_eq!(without.capabilities().extension(ID), Some(&Default::default()));
}

#[tokio::test]
async fn skills_list_carries_frontmatter_and_manifest() {
    let list = skills::server()
        .call::<ListSkills>(PaginatedParams::default())
        .await
        .unwrap();
    assert_eq!(list.skills.len(), 2);
    let pdf = &list.skills[0];
    assert_eq!(pdf.uri, "skill://pdf-processing/SKILL.md");
    assert_eq!(
        serde_json::Value::Object(pdf.frontmatter.clone()),
        json!({"name": "pdf-processing", "description": "Extract PDF text", "metadata": {"version": "2"}})
    );
    let SkillResources::Files(files) = &pdf.resources else {
        panic!("a manifest")
    };
    let got: Vec<(&str, u64, &str)> = files
        .iter()
        .map(|f| (f.uri.as_str(), f.size, f.digest.as_str()))
        .collect();
    let (d0, d1, d2) = (
        digest(PDF_MD.as_bytes()),
        digest(FORMS_MD.as_bytes()),
        digest(EXTRACT_PY.as_bytes()),
    );
    assert_eq!(
        got,
        vec![
            ("skill://pdf-processing/SKILL.md", PDF_MD.len() as u64, d0.as_str()),
            (
                "skill://pdf-processing/references/FORMS.md",
                FORMS_MD.len() as u64,
                d1.as_str()
            ),
            (
                "skill://pdf-processing/scripts/extract.py",
                EXTRACT_PY.len() as u64,
                d2.as_str()
            ),
        ]
    );
    assert_eq!(list.skills[1].uri, "skill://acme/billing/refunds/SKILL.md");
    assert!(list.next_cursor.is_none());
}

#[tokio::test]
async fn a_page_holds_whole_entries() {
    let server = Server::builder().page_size(1).extension(skills::skills()).build();
    let first = server.call::<ListSkills>(PaginatedParams::default()).await.unwrap();
    assert_eq!(first.skills.len(), 1);
    let cursor = first.next_cursor.expect("a second page");
    let second = server
        .call::<ListSkills>(PaginatedParams::with_cursor(cursor))
        .await
        .unwrap();
    assert_eq!(second.skills[0].uri, "skill://acme/billing/refunds/SKILL.md");
    assert!(second.next_cursor.is_none());
    let bad = server
        .call::<ListSkills>(PaginatedParams::with_cursor("nope"))
        .await
        .unwrap_err();
    assert_eq!(bad.code.0, -32602);
}

#[tokio::test]
async fn skills_get_answers_the_listed_entry() {
    let server = skills::server();
    let list = server.call::<ListSkills>(PaginatedParams::default()).await.unwrap();
    let got = server
        .call::<GetSkill>(GetSkillParams::new("skill://acme/billing/refunds/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(got.skill, list.skills[1]);
}

#[tokio::test]
async fn skill_md_is_a_markdown_resource_named_by_its_frontmatter() {
    let server = skills::server();
    let resources = server
        .call::<ListResources>(PaginatedParams::default())
        .await
        .unwrap()
        .resources;
    let md = resources
        .iter()
        .find(|r| r.uri == "skill://pdf-processing/SKILL.md")
        .unwrap();
    assert_eq!(md.name, "pdf-processing");
    assert_eq!(md.description.as_deref(), Some("Extract PDF text"));
    assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(md.size, Some(PDF_MD.len() as u64));
    let py = resources.iter().find(|r| r.uri.ends_with("extract.py")).unwrap();
    assert_eq!(py.mime_type.as_deref(), Some("text/x-python"));
    let read = server
        .call::<ReadResource>(ReadResourceParams::new("skill://pdf-processing/references/FORMS.md"))
        .await
        .unwrap();
    assert!(matches!(&read.contents[0], ResourceContents::Text(t) if t.text == FORMS_MD));
}

#[tokio::test]
async fn stateless_results_carry_caching_hints() {
    let server = skills::server();
    let v = ProtocolVersion::V2026_07_28;
    let list = server
        .call_as::<ListSkills>(v, PaginatedParams::default())
        .await
        .unwrap();
    assert_eq!(list.result_type.as_deref(), Some("complete"));
    assert!(list.ttl_ms.is_some() && list.cache_scope.is_some());
    let got = server
        .call_as::<GetSkill>(v, GetSkillParams::new("skill://pdf-processing/SKILL.md"))
        .await
        .unwrap();
    assert!(got.ttl_ms.is_some() && got.cache_scope.is_some());
}
