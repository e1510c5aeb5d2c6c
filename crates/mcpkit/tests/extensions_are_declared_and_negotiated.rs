//! Extensions (SEP-2133, SEP-3392): a server declares the extensions it was built with in
//! `capabilities.extensions` of `initialize` and of `server/discover`, each with its settings
//! object; an extension served in one era only is declared in that era only; an invalid
//! identifier is not declared. The client sees what the server declared, and an extension is in
//! use on either side only when both declared it at the same `revision`.

use mcpkit::client::ConnectMode;
use mcpkit::server::extensions::Extension;
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::types::schema::JsonObject;
use mcpkit::types::{Era, ProtocolVersion};
use mcpkit::{Client, RequestContext, Server};
use serde_json::json;

struct Declared {
    id: &'static str,
    settings: serde_json::Value,
    only: Option<Era>,
}

impl Extension for Declared {
    fn id(&self) -> &str {
        self.id
    }
    fn settings(&self) -> JsonObject {
        self.settings.as_object().cloned().unwrap_or_default()
    }
    fn serves(&self, era: Era) -> bool {
        self.only.is_none_or(|e| e == era)
    }
}

fn obj(v: serde_json::Value) -> JsonObject {
    v.as_object().cloned().unwrap()
}

fn server() -> Server {
    Server::builder()
        .extension(Declared {
            id: "com.example/both",
            settings: json!({"revision": "2", "depth": 3}),
            only: None,
        })
        .extension(Declared {
            id: "com.example/stateless-only",
            settings: json!({}),
            only: Some(Era::Stateless),
        })
        .extension(Declared {
            id: "no-prefix",
            settings: json!({}),
            only: None,
        })
        // What the server concludes for this request, about the first extension.
        .tool(ToolDef::new("uses", |cx: RequestContext| async move {
            format!(
                "{} {}",
                cx.uses_extension("com.example/both"),
                cx.client_extension("com.example/both").is_some()
            )
        }))
        .build()
}

async fn uses(client: &Client) -> String {
    let r = client.call_tool("uses", json!({})).await.unwrap();
    r.content[0].as_text().unwrap().to_owned()
}

#[tokio::test]
async fn the_handshake_declares_what_it_serves_in_that_era() {
    let pair = TestPair::connect(server(), Client::builder()).await.unwrap();
    let caps = pair.client.server_capabilities();
    assert_eq!(
        serde_json::to_value(&caps.extensions).unwrap(),
        json!({"com.example/both": {"revision": "2", "depth": 3}})
    );
    assert_eq!(
        pair.client.server_extension("com.example/both"),
        Some(&obj(json!({"revision": "2", "depth": 3})))
    );
    assert!(pair.client.server_extension("com.example/stateless-only").is_none());
    // The client declared nothing, so nothing is in use on either side.
    assert!(!pair.client.uses_extension("com.example/both"));
    assert_eq!(uses(&pair.client).await, "false false");
}

#[tokio::test]
async fn both_sides_at_one_revision_use_the_extension() {
    let client = Client::builder().extension("com.example/both", obj(json!({"revision": "2"})));
    let pair = TestPair::connect(server(), client).await.unwrap();
    assert!(pair.client.uses_extension("com.example/both"));
    assert_eq!(uses(&pair.client).await, "true true");
}

#[tokio::test]
async fn another_revision_is_not_enabled() {
    let client = Client::builder().extension("com.example/both", JsonObject::new());
    let pair = TestPair::connect(server(), client).await.unwrap();
    assert!(!pair.client.uses_extension("com.example/both"));
    // Declared, but at the initial revision: the server does not enable it either.
    assert_eq!(uses(&pair.client).await, "false true");
}

#[tokio::test]
async fn discover_declares_the_stateless_era_extensions_and_each_request_negotiates() {
    let client = Client::builder()
        .mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28))
        .extension("com.example/both", obj(json!({"revision": "2"})));
    let pair = TestPair::connect(server(), client).await.unwrap();
    assert!(pair.client.is_stateless());
    let discovered = pair.client.discover().await.unwrap();
    assert_eq!(
        serde_json::to_value(&discovered.capabilities.extensions).unwrap(),
        json!({"com.example/both": {"revision": "2", "depth": 3}, "com.example/stateless-only": {}})
    );
    assert!(pair.client.server_extension("com.example/stateless-only").is_some());
    assert!(pair.client.uses_extension("com.example/both"));
    // The client's declaration travels in each request's `_meta`.
    assert_eq!(uses(&pair.client).await, "true true");
}

#[tokio::test]
async fn a_server_without_extensions_declares_none() {
    let server = Server::builder().build();
    assert!(server.capabilities().extensions.is_none());
    assert!(server.capabilities_in(Era::Stateless).extensions.is_none());
}
