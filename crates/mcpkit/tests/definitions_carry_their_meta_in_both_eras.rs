//! `_meta` on every definition (`ToolDef`, `PromptDef`, `ResourceDef`, `ResourceTemplateDef`
//! `.meta(..)`) reaches the wire in every list of both eras, exactly as given, and a handler's
//! result keeps the `_meta` it sets. Through the method tables (`Server::call_as`), without a
//! transport.

use mcpkit::server::{PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};
use mcpkit::types::method::{CallTool, ListPrompts, ListResourceTemplates, ListResources, ListTools, Method};
use mcpkit::types::schema::{CallToolResult, ContentBlock, Meta};
use mcpkit::types::ProtocolVersion;
use mcpkit::Server;
use serde_json::{json, Value};

fn meta(json: Value) -> Meta {
    serde_json::from_value(json).unwrap()
}

fn server() -> Server {
    Server::builder()
        .tool(
            ToolDef::new("counter", || async {
                let mut result = CallToolResult::text("3");
                result.meta = Some(meta(json!({"com.example/served-by": "a"})));
                result
            })
            .meta(meta(
                json!({"ui": {"resourceUri": "ui://counter/view", "visibility": ["model", "app"]}}),
            )),
        )
        .prompt(PromptDef::new("greet", || async { "hi" }).meta(meta(json!({"com.example/lang": "en"}))))
        .resource(
            ResourceDef::text("ui://counter/view", "view", "text/html;profile=mcp-app", "<p>3</p>")
                .meta(meta(json!({"ui": {"prefersBorder": true}}))),
        )
        .resource_template(
            ResourceTemplateDef::new("notes://{id}", "note", || async { "a note".to_owned() })
                .unwrap()
                .meta(meta(json!({"com.example/kind": "note"}))),
        )
        .build()
}

async fn first<M: Method<Params: Default>>(server: &Server, version: ProtocolVersion, list: &str) -> Value {
    let page = server.call_as::<M>(version, Default::default()).await.unwrap();
    serde_json::to_value(page).unwrap()[list][0]["_meta"].clone()
}

#[tokio::test]
async fn every_list_of_both_eras_carries_each_definitions_meta() {
    let server = server();
    for version in [ProtocolVersion::LATEST_HANDSHAKE, ProtocolVersion::LATEST] {
        assert_eq!(
            first::<ListTools>(&server, version, "tools").await,
            json!({"ui": {"resourceUri": "ui://counter/view", "visibility": ["model", "app"]}}),
            "{version}"
        );
        assert_eq!(
            first::<ListPrompts>(&server, version, "prompts").await,
            json!({"com.example/lang": "en"}),
            "{version}"
        );
        assert_eq!(
            first::<ListResources>(&server, version, "resources").await,
            json!({"ui": {"prefersBorder": true}}),
            "{version}"
        );
        assert_eq!(
            first::<ListResourceTemplates>(&server, version, "resourceTemplates").await,
            json!({"com.example/kind": "note"}),
            "{version}"
        );
    }
}

#[tokio::test]
async fn a_handlers_result_keeps_its_meta() {
    let server = server();
    let params = serde_json::from_value(json!({"name": "counter", "arguments": {}})).unwrap();
    let result = server.call::<CallTool>(params).await.unwrap();
    assert_eq!(result.meta, Some(meta(json!({"com.example/served-by": "a"}))));
    assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "3"));
}
