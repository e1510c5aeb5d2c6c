//! Skills extension: `resources/directory/read` lists the direct children of a directory
//! resource (files with their metadata, subdirectories as `inode/directory`), for the skill
//! root, its subdirectories and the prefix directories above a skill; a URI that is a file or
//! does not exist is -32602; a server built with `directory_read(false)` does not serve it.

use crate::common;

use common::skills;
use mcpkit::types::ext::skills::{ReadDirectory, ReadDirectoryParams, DIRECTORY_MIME_TYPE};
use mcpkit::Server;

fn params(uri: &str) -> ReadDirectoryParams {
    ReadDirectoryParams {
        uri: uri.into(),
        ..Default::default()
    }
}

async fn children(server: &Server, uri: &str) -> Vec<(String, Option<String>)> {
    let r = server.call::<ReadDirectory>(params(uri)).await.unwrap();
    r.resources.into_iter().map(|c| (c.uri, c.mime_type)).collect()
}

#[tokio::test]
async fn direct_children_with_subdirectories() {
    let s = skills::server();
    let dir = Some(DIRECTORY_MIME_TYPE.to_owned());
    assert_eq!(
        children(&s, "skill://pdf-processing").await,
        vec![
            ("skill://pdf-processing/SKILL.md".into(), Some("text/markdown".into())),
            ("skill://pdf-processing/references".into(), dir.clone()),
            ("skill://pdf-processing/scripts".into(), dir.clone()),
        ]
    );
    assert_eq!(
        children(&s, "skill://pdf-processing/scripts").await,
        vec![(
            "skill://pdf-processing/scripts/extract.py".into(),
            Some("text/x-python".into())
        )]
    );
    assert_eq!(
        children(&s, "skill://acme").await,
        vec![("skill://acme/billing".into(), dir.clone())]
    );
}

#[tokio::test]
async fn a_file_or_nothing_is_invalid_params() {
    let s = skills::server();
    let e = s
        .call::<ReadDirectory>(params("skill://pdf-processing/SKILL.md"))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        (-32602, "skill://pdf-processing/SKILL.md is not a directory resource")
    );
    let e = s
        .call::<ReadDirectory>(params("skill://pdf-processing/"))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32602);
    let e = s.call::<ReadDirectory>(params("skill://nothing")).await.unwrap_err();
    assert_eq!(
        (e.code.0, e.message.as_str()),
        (-32602, "No directory resource at skill://nothing")
    );
}

#[tokio::test]
async fn off_means_not_served() {
    let s = Server::builder()
        .extension(skills::skills().directory_read(false))
        .build();
    let e = s
        .call::<ReadDirectory>(params("skill://pdf-processing"))
        .await
        .unwrap_err();
    assert_eq!(e.code.0, -32601);
}
