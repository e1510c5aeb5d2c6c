//! Server-to-client requests on the 2025-11-25 wire, each transcript schema-valid in both
//! directions: `roots/list` after `notifications/roots/list_changed`, a handler's `ping`, and no
//! request at all to a client without the capability it needs.

use crate::common;

use common::*;
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::types::method::Ping;
use mcpkit::types::schema::Root;
use mcpkit::{Client, Server};
use mcpkit_cli::reference;
use serde_json::json;
use tokio::sync::mpsc;

/// `notifications/roots/list_changed` reaches `ServerBuilder::on_roots_changed`, whose
/// `roots/list` then sees the new roots.
#[tokio::test]
async fn roots_list_changed_reaches_the_server_and_roots_list_sees_the_new_roots() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = Server::builder()
        .on_roots_changed(move |cx| {
            let tx = tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(cx.list_roots().await.map(|r| r.roots));
            });
        })
        .build();
    let pair = within(
        "connect",
        TestPair::connect(server, Client::builder().roots(vec![Root::new("file:///a")])),
    )
    .await
    .unwrap();
    pair.client
        .set_roots(vec![Root::new("file:///b").with_name("b")])
        .unwrap();
    let roots = within("roots after list_changed", rx.recv()).await.unwrap().unwrap();
    assert_eq!(roots, vec![Root::new("file:///b").with_name("b")]);
    within("ping", pair.client.ping()).await.unwrap();
    let v = SchemaValidator::v2025_11_25();
    let report = v.check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert_eq!(report.count("request roots/list"), 1);
    v.check_transcript(&pair.server_received(), &pair.server_sent())
        .assert_valid();
}

/// A handler can ping the client through its request context (server → client `ping`).
#[tokio::test]
async fn a_handler_can_ping_the_client() {
    let server = Server::builder()
        .tool(ToolDef::new(
            "ping_client",
            |cx: mcpkit::server::RequestContext| async move {
                match cx.peer().request::<Ping>(&Default::default()).await {
                    Ok(_) => "pong".to_owned(),
                    Err(e) => format!("ping failed: {e}"),
                }
            },
        ))
        .build();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    let r = within("ping_client", pair.client.call_tool("ping_client", ()))
        .await
        .unwrap();
    assert_eq!(text_of(&r), "pong");
    let v = SchemaValidator::v2025_11_25();
    let report = v.check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert_eq!(report.count("request ping"), 1);
    v.check_transcript(&pair.server_received(), &pair.server_sent())
        .assert_valid();
}

/// A server→client request needs the client's capability: against a client without sampling or
/// elicitation handlers the reference tools report that in their text and send no request.
#[tokio::test]
async fn server_requests_need_the_clients_capability() {
    let pair = within("connect", TestPair::connect(reference::server(), Client::builder()))
        .await
        .unwrap();
    let r = within(
        "sampling",
        pair.client.call_tool("test_sampling", json!({"prompt": "p"})),
    )
    .await
    .unwrap();
    assert!(
        text_of(&r).starts_with("Sampling not supported or error: "),
        "{}",
        text_of(&r)
    );
    let r = within(
        "elicitation",
        pair.client.call_tool("test_elicitation", json!({"message": "m"})),
    )
    .await
    .unwrap();
    assert!(
        text_of(&r).starts_with("Elicitation not supported or error: "),
        "{}",
        text_of(&r)
    );
    let report = SchemaValidator::v2025_11_25().check_transcript(&pair.server_sent(), &pair.server_received());
    report.assert_valid();
    assert_eq!(report.count("request sampling/createMessage"), 0);
    assert_eq!(report.count("request elicitation/create"), 0);
}
