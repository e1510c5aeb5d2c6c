//! Skills extension, bad input: a `skill://` URI the server does not serve is -32602 (Invalid
//! params) with a message naming the problem, in both eras, and the connection keeps serving:
//! a URI with `..` that would leave its skill, a file its skill does not have, a skill that
//! does not exist (`resources/read` and `skills/get` alike). Other resources keep the core
//! "Resource not found".

use crate::common;

use common::skills;
use mcpkit::testing::TestPair;
use mcpkit::types::ext::skills::{GetSkill, GetSkillParams};
use mcpkit::types::method::ReadResource;
use mcpkit::types::schema::ReadResourceParams;
use mcpkit::types::{ErrorObject, ProtocolVersion};
use mcpkit::Client;

async fn read(version: ProtocolVersion, uri: &str) -> ErrorObject {
    skills::server()
        .call_as::<ReadResource>(version, ReadResourceParams::new(uri))
        .await
        .unwrap_err()
}

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

#[tokio::test]
async fn a_dot_dot_segment_leaves_its_skill() {
    for v in ERAS {
        let e = read(v, "skill://pdf-processing/../acme/billing/refunds/SKILL.md").await;
        assert_eq!(e.code.0, -32602, "{v}");
        assert!(e.message.contains("leaves its skill"), "{}", e.message);
        let e = read(v, "skill://pdf-processing/references/../../x").await;
        assert!(e.message.contains("leaves its skill"), "{}", e.message);
    }
}

#[tokio::test]
async fn a_file_the_skill_does_not_have() {
    for v in ERAS {
        let e = read(v, "skill://pdf-processing/secrets.txt").await;
        assert_eq!(e.code.0, -32602, "{v}");
        assert_eq!(
            e.message,
            "skill://pdf-processing/secrets.txt is not a file of the skill at skill://pdf-processing/SKILL.md"
        );
        assert_eq!(e.data.unwrap()["uri"], "skill://pdf-processing/secrets.txt");
    }
}

#[tokio::test]
async fn a_skill_that_does_not_exist() {
    for v in ERAS {
        let e = read(v, "skill://nope/SKILL.md").await;
        assert_eq!(e.code.0, -32602, "{v}");
        assert_eq!(e.message, "No skill is served at skill://nope/SKILL.md");
        let e = skills::server()
            .call_as::<GetSkill>(v, GetSkillParams::new("skill://nope/SKILL.md"))
            .await
            .unwrap_err();
        assert_eq!(
            (e.code.0, e.message.as_str()),
            (-32602, "No skill is served at skill://nope/SKILL.md")
        );
        // A supporting file is not a skill.
        let e = skills::server()
            .call_as::<GetSkill>(v, GetSkillParams::new("skill://pdf-processing/references/FORMS.md"))
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602);
        assert!(e.message.contains("is not the SKILL.md of the skill"), "{}", e.message);
    }
}

#[tokio::test]
async fn other_resources_keep_resource_not_found() {
    let e = read(ProtocolVersion::V2025_11_25, "test://nope").await;
    assert_eq!(e.code.0, -32002);
}

#[tokio::test]
async fn the_connection_keeps_serving() {
    let pair = TestPair::connect(skills::server(), Client::builder()).await.unwrap();
    let err = pair
        .client
        .read_resource("skill://pdf-processing/../x/SKILL.md")
        .await
        .unwrap_err();
    assert_eq!(err.rpc().unwrap().code.0, -32602);
    let ok = pair
        .client
        .read_resource("skill://pdf-processing/SKILL.md")
        .await
        .unwrap();
    assert_eq!(ok.contents.len(), 1);
}
