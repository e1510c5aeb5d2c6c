//! Paginated lists on the 2025-11-25 wire: `nextCursor` until the last page, and -32602 for a
//! cursor the server never issued, every frame schema-valid.

use crate::common;

use common::*;
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::types::ErrorCode;
use mcpkit::{Client, Server};

fn numbered_tools(n: usize) -> Server {
    let mut b = Server::builder().page_size(2);
    for i in 0..n {
        b = b.tool(ToolDef::new(format!("tool_{i}"), move || async move { format!("tool {i}") }).description("t"));
    }
    b.build()
}

/// Lists are paginated: `nextCursor` until the last page, `list_all_*` follows it, and a cursor
/// the server never issued is -32602.
#[tokio::test]
async fn pagination_follows_next_cursor_and_rejects_unknown_cursors() {
    let pair = within("connect", TestPair::connect(numbered_tools(5), Client::builder()))
        .await
        .unwrap();
    let client = &pair.client;
    let first = within("page 1", client.list_tools(None)).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first
        .next_cursor
        .clone()
        .expect("a nextCursor on the first of three pages");
    let second = within("page 2", client.list_tools(Some(cursor))).await.unwrap();
    assert_eq!(second.tools.len(), 2);
    let third = within("page 3", client.list_tools(second.next_cursor.clone()))
        .await
        .unwrap();
    assert_eq!(third.tools.len(), 1);
    assert!(third.next_cursor.is_none(), "the last page has no nextCursor");
    let all = within("all", client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = all.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["tool_0", "tool_1", "tool_2", "tool_3", "tool_4"]);
    for bad in ["not-a-cursor", "mcpkit:99", ""] {
        let e = within("bad cursor", client.list_tools(Some(bad.to_owned())))
            .await
            .unwrap_err();
        assert_eq!(
            e.rpc().map(|e| e.code),
            Some(ErrorCode::INVALID_PARAMS),
            "cursor {bad:?}: {e:?}"
        );
    }
    let v = SchemaValidator::v2025_11_25();
    let report = v.check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert!(report.count("result tools/list") >= 6);
    assert_eq!(report.count("error -32602"), 3);
}
