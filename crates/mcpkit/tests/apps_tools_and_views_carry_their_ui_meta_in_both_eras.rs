//! MCP Apps, server side: a tool linked to its view (`ToolDef::ui`, `.visibility(..)`, the
//! macro's `ui = ".."`) lists `_meta.ui` and the legacy flat `_meta["ui/resourceUri"]` in
//! step; a `UiResource` is read as `text/html;profile=mcp-app` with its `_meta.ui`; the
//! extension is declared only by a server that has views; `cx.client_supports_apps()` follows
//! the client's declaration; a host without Apps gets the same text. Exact frames, both eras.

use mcpkit::apps::{Csp, Permission, UiResource, Visibility, EXTENSION_ID};
use mcpkit::client::ConnectMode;
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::types::schema::JsonObject;
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, RequestContext, Server};
use serde_json::{json, Value};

const HTML: &str = "<!doctype html><p>3</p>";

fn server() -> Server {
    Server::builder()
        .tool(
            ToolDef::new("counter", |cx: RequestContext| async move {
                format!("count 3 (apps: {})", cx.client_supports_apps())
            })
            .ui("ui://counter/view"),
        )
        .tool(
            ToolDef::new("bump", || async { "4" })
                .ui("ui://counter/view")
                .visibility([Visibility::App]),
        )
        .resource(
            UiResource::html("ui://counter/view", HTML)
                .name("counter view")
                .csp(Csp {
                    connect_domains: vec!["https://api.example.com".into()],
                    resource_domains: vec!["https://cdn.example.com".into()],
                    ..Csp::default()
                })
                .permissions([Permission::ClipboardWrite])
                .domain("counter.example.com")
                .prefers_border(true),
        )
        .build()
}

fn apps_host() -> JsonObject {
    mcpkit::apps::settings()
}

/// The result member of the frame the server sent for the request `method`, as sent.
fn result_of(pair: &TestPair, method: &str) -> Value {
    let received = pair.server_received();
    let id = received
        .iter()
        .rev()
        .map(|f| serde_json::from_str::<Value>(f).unwrap())
        .find(|f| f["method"] == method)
        .unwrap()["id"]
        .clone();
    pair.server_sent()
        .iter()
        .map(|f| serde_json::from_str::<Value>(f).unwrap())
        .find(|f| f["id"] == id && f.get("result").is_some())
        .unwrap()["result"]
        .clone()
}

fn tools_listed() -> Value {
    json!([
        {
            "name": "counter",
            "inputSchema": {"type": "object"},
            "_meta": {"ui": {"resourceUri": "ui://counter/view"}, "ui/resourceUri": "ui://counter/view"}
        },
        {
            "name": "bump",
            "inputSchema": {"type": "object"},
            "_meta": {
                "ui": {"resourceUri": "ui://counter/view", "visibility": ["app"]},
                "ui/resourceUri": "ui://counter/view"
            }
        }
    ])
}

fn view_meta() -> Value {
    json!({"ui": {
        "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "domain": "counter.example.com",
        "prefersBorder": true
    }})
}

async fn pair(mode: ConnectMode, declare_apps: bool) -> TestPair {
    let mut client = Client::builder().mode(mode);
    if declare_apps {
        client = client.extension(EXTENSION_ID, apps_host());
    }
    TestPair::connect(server(), client).await.unwrap()
}

async fn check_wire(mode: ConnectMode, stateless: bool) {
    let pair = pair(mode, true).await;
    pair.client.list_tools(None).await.unwrap();
    let tools = result_of(&pair, "tools/list");
    assert_eq!(tools["tools"], tools_listed());
    assert_eq!(tools.get("resultType").is_some(), stateless);

    pair.client.list_resources(None).await.unwrap();
    assert_eq!(
        result_of(&pair, "resources/list")["resources"],
        json!([{
            "uri": "ui://counter/view",
            "name": "counter view",
            "mimeType": "text/html;profile=mcp-app",
            "_meta": view_meta()
        }])
    );

    pair.client.read_resource("ui://counter/view").await.unwrap();
    assert_eq!(
        result_of(&pair, "resources/read")["contents"],
        json!([{
            "uri": "ui://counter/view",
            "mimeType": "text/html;profile=mcp-app",
            "text": HTML,
            "_meta": view_meta()
        }])
    );

    let declared = match stateless {
        true => pair.client.discover().await.unwrap().capabilities.extensions,
        false => pair.client.server_capabilities().extensions.clone(),
    };
    assert_eq!(
        serde_json::to_value(declared).unwrap(),
        json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}})
    );
}

#[tokio::test]
async fn the_handshake_era_lists_links_views_and_declares_the_extension() {
    check_wire(ConnectMode::Handshake, false).await;
}

#[tokio::test]
async fn the_stateless_era_lists_links_views_and_declares_the_extension() {
    check_wire(ConnectMode::Pinned(ProtocolVersion::V2026_07_28), true).await;
}

#[tokio::test]
async fn a_host_without_apps_gets_text_and_a_host_with_apps_is_told_apart() {
    for mode in [
        ConnectMode::Handshake,
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        for declare in [false, true] {
            let pair = pair(mode, declare).await;
            pair.client.call_tool("counter", json!({})).await.unwrap();
            assert_eq!(
                result_of(&pair, "tools/call")["content"],
                json!([{"type": "text", "text": format!("count 3 (apps: {declare})")}]),
                "{mode:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_host_declaring_another_mime_type_does_not_support_apps() {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), json!(["text/uri-list"]));
    let client = Client::builder().extension(EXTENSION_ID, settings);
    let pair = TestPair::connect(server(), client).await.unwrap();
    let result = pair.client.call_tool("counter", json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("count 3 (apps: false)"));
}

#[tokio::test]
async fn a_server_without_views_declares_no_apps_extension() {
    let server = Server::builder().tool(ToolDef::new("plain", || async { "x" })).build();
    assert!(server.capabilities().extensions.is_none());
}

#[mcpkit::tool(ui = "ui://counter/view")]
/// Count.
async fn counted() -> String {
    "3".into()
}

#[tokio::test]
async fn the_macro_form_links_the_same_view() {
    let server = Server::builder()
        .tool(counted_tool())
        .resource(UiResource::html("ui://counter/view", HTML))
        .build();
    let page = server
        .call::<mcpkit::types::method::ListTools>(Default::default())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&page.tools[0]).unwrap()["_meta"],
        json!({"ui": {"resourceUri": "ui://counter/view"}, "ui/resourceUri": "ui://counter/view"})
    );
}
