//! Reading a resource that does not exist is -32002 "Resource not found" with `data.uri` on
//! every handshake-era revision (spec 2025-11-25 `server/resources` "Error Handling"), and
//! -32602 on 2026-07-28, which must not emit -32002 (spec 2026-07-28 `basic/index`). A handler
//! that returns `ErrorObject::resource_not_found(uri)` gets the same answer in every revision.

use crate::common;

use common::{assert_error, within, Wire};
use mcpkit::server::{RawArgs, ResourceDef, ResourceTemplateDef, Uri};
use mcpkit::testing::TestPair;
use mcpkit::types::method::ReadResource;
use mcpkit::types::schema::{ReadResourceParams, ReadResourceResult, ResourceContents};
use mcpkit::types::{ErrorCode, ErrorObject, ProtocolVersion};
use mcpkit::{Client, Server};
use serde_json::json;

fn server() -> Server {
    let template = ResourceTemplateDef::new(
        "test://items/{id}",
        "item",
        |Uri(uri): Uri, RawArgs(vars): RawArgs| async move {
            let id = vars.get("id").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
            if id == "missing" {
                return Err(ErrorObject::resource_not_found(&uri));
            }
            Ok::<_, ErrorObject>(ReadResourceResult::new(vec![ResourceContents::text(
                uri,
                Some("text/plain"),
                format!("item {id}"),
            )]))
        },
    )
    .unwrap();
    Server::builder()
        .resource(ResourceDef::text("test://known", "known", "text/plain", "here"))
        .resource_template(template)
        .build()
}

#[tokio::test]
async fn an_unknown_uri_is_resource_not_found_with_the_uri() {
    for version in ProtocolVersion::HANDSHAKE {
        let client = Client::builder().protocol_version(version);
        let pair = within("connect", TestPair::connect(server(), client)).await.unwrap();
        assert_eq!(pair.client.protocol_version(), version);
        // Known resources and template matches are served.
        let r = within("known", pair.client.read_resource("test://known"))
            .await
            .unwrap();
        assert_eq!(r.contents.len(), 1);
        let r = within("template", pair.client.read_resource("test://items/42"))
            .await
            .unwrap();
        assert_eq!(serde_json::to_value(&r.contents).unwrap()[0]["text"], "item 42");
        for uri in [
            "test://unknown",
            "test://items",
            "test://known/extra",
            "file:///etc/passwd",
            "",
        ] {
            let e = within("unknown", pair.client.read_resource(uri)).await.unwrap_err();
            let e = e
                .rpc()
                .unwrap_or_else(|| panic!("{version}: {uri:?} gave a non-RPC error {e:?}"));
            assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND, "{version}: {uri:?}: {e:?}");
            assert_eq!(e.data, Some(json!({"uri": uri})), "{version}: {uri:?}: {e:?}");
            assert!(e.message.contains("not found"), "{e:?}");
        }
    }
}

#[tokio::test]
async fn resource_not_found_on_the_wire() {
    let mut w = Wire::serve(&server());
    w.initialize().await;
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": "r1", "method": "resources/read", "params": {"uri": "test://nope"}}))
        .await;
    assert_error(&reply, -32002, &json!("r1"));
    assert_eq!(reply["error"]["data"]["uri"], "test://nope");
    // A missing uri is a malformed request, not an unknown resource.
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": "r2", "method": "resources/read", "params": {}}))
        .await;
    assert_error(&reply, -32602, &json!("r2"));
}

/// A handler's `ErrorObject::resource_not_found(uri)` is answered exactly as the server answers
/// a URI nothing matches, in each revision's code.
#[tokio::test]
async fn a_handler_says_resource_not_found_in_the_code_of_each_revision() {
    for version in ProtocolVersion::ALL {
        let server = server();
        let read = |uri: &str| server.call_as::<ReadResource>(version, ReadResourceParams::new(uri.to_owned()));
        let from_handler = read("test://items/missing").await.unwrap_err();
        let from_server = read("test://nope").await.unwrap_err();
        let code = if version == ProtocolVersion::V2026_07_28 {
            ErrorCode::INVALID_PARAMS
        } else {
            ErrorCode::RESOURCE_NOT_FOUND
        };
        assert_eq!(from_server.code, code, "{version}");
        assert_eq!(from_handler.code, code, "{version}: {from_handler:?}");
        assert_eq!(
            from_handler.message, "Resource not found: test://items/missing",
            "{version}"
        );
        assert_eq!(
            from_handler.data,
            Some(json!({"uri": "test://items/missing"})),
            "{version}"
        );
    }
}
