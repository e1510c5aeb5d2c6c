//! An extension from outside mcpkit (this crate, on the public API alone) works in both eras:
//! its method is served and completed for the era, its decoration reaches `tools/list`, its
//! layer sees every request, and it is declared with its settings.
#![allow(clippy::unwrap_used, missing_docs)]

use mcpkit::server::ToolDef;
use mcpkit::types::method::ListTools;
use mcpkit::types::schema::{PaginatedParams, RequestParams};
use mcpkit::types::{Era, ProtocolVersion};
use mcpkit::Server;
use mcpkit_extension_example::{Counter, NextNumber, ID};
use serde_json::json;

fn server(counter: &Counter) -> Server {
    Server::builder()
        .tool(ToolDef::new("noop", || async { "ok" }))
        .extension(counter.clone())
        .build()
}

#[tokio::test]
async fn its_method_is_served_in_each_era_and_its_layer_sees_every_request() {
    let counter = Counter::default();
    let s = server(&counter);
    let first = s.call::<NextNumber>(RequestParams::default()).await.unwrap();
    assert_eq!(first, json!({ "n": 0, "era": "Handshake" }));
    let second = s
        .call_as::<NextNumber>(ProtocolVersion::V2026_07_28, RequestParams::default())
        .await
        .unwrap();
    assert_eq!(
        (second["n"].clone(), second["era"].clone()),
        (json!(1), json!("Stateless"))
    );
    assert_eq!(second["resultType"], "complete");
    s.call::<ListTools>(PaginatedParams::default()).await.unwrap();
    assert_eq!(counter.seen(), 3);
}

#[tokio::test]
async fn it_decorates_tools_list_and_is_declared_in_both_eras() {
    let s = server(&Counter::default());
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let page = s
            .call_as::<ListTools>(version, PaginatedParams::default())
            .await
            .unwrap();
        assert_eq!(page.meta.unwrap()[ID], json!(true), "{version:?}");
    }
    for era in [Era::Handshake, Era::Stateless] {
        let declared = serde_json::to_value(s.capabilities_in(era).extensions).unwrap();
        assert_eq!(declared, json!({ ID: { "start": 0 } }), "{era:?}");
    }
    // Without the extension, the page is as before.
    let plain = Server::builder().tool(ToolDef::new("noop", || async { "ok" })).build();
    let page = plain.call::<ListTools>(PaginatedParams::default()).await.unwrap();
    assert!(page.meta.is_none());
}
