//! The host bridge (`mcpkit::apps::host::AppBridge`): it answers the view's `ui/initialize`
//! with the host's context, holds notifications until the view is initialized, proxies the
//! view's `tools/call` and `resources/read` to the view's own server, and refuses a call to a
//! model-only tool or to a tool of another server. Exact frames, over a client of either era.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mcpkit::apps::host::messages::{HostContext, ToolInfo};
use mcpkit::apps::host::{AppBridge, View, ViewEvent};
use mcpkit::apps::{UiResource, Visibility};
use mcpkit::client::ConnectMode;
use mcpkit::server::{ResourceDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{CallToolResult, Implementation, JsonObject};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use serde_json::{json, Value};

fn counter_server() -> Server {
    let count = Arc::new(AtomicU32::new(0));
    Server::builder()
        .tool(ToolDef::new("counter", || async { "count 0" }).ui("ui://counter/view"))
        .tool(
            ToolDef::new("bump", move || {
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                async move { format!("count {n}") }
            })
            .ui("ui://counter/view")
            .visibility([Visibility::App]),
        )
        .tool(ToolDef::new("reset", || async { "reset" }).visibility([Visibility::Model]))
        .resource(UiResource::html("ui://counter/view", "<p>0</p>").prefers_border(false))
        .build()
}

fn other_server() -> Server {
    Server::builder()
        .tool(ToolDef::new("other_tool", || async { "other" }))
        .build()
}

fn frame(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

async fn bridge(mode: ConnectMode) -> (AppBridge, mcpkit::apps::host::Outlet, TestPair, TestPair) {
    let pair = TestPair::connect(counter_server(), Client::builder().mode(mode))
        .await
        .unwrap();
    // The host is connected to another server too; its tools are not the view's to call.
    let other = TestPair::connect(other_server(), Client::builder().mode(mode))
        .await
        .unwrap();
    let view = View::read(&pair.client, "ui://counter/view").await.unwrap();
    let tools = pair.client.list_all_tools().await.unwrap();
    let context = HostContext {
        theme: Some("dark".into()),
        tool_info: Some(ToolInfo::new(Some(7.into()), tools[0].clone())),
        ..HostContext::default()
    };
    let (bridge, outlet) = AppBridge::new(
        pair.client.clone(),
        Implementation::new("test-host", "1.0.0"),
        context,
        view.meta,
    );
    (bridge, outlet, pair, other)
}

async fn ask(bridge: &AppBridge, id: u32, method: &str, params: Value) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    frame(&bridge.receive(&message.to_string()).await.unwrap())
}

async fn gate_in(mode: ConnectMode) {
    let (bridge, mut outlet, _pair, other) = bridge(mode).await;
    assert!(other.client.list_all_tools().await.unwrap()[0].name == "other_tool");

    let init = ask(
        &bridge,
        1,
        "ui/initialize",
        json!({"protocolVersion": "2026-01-26", "appInfo": {"name": "counter-view", "version": "1"}, "appCapabilities": {}}),
    )
    .await;
    assert_eq!(init["id"], 1);
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2026-01-26");
    assert_eq!(result["hostInfo"], json!({"name": "test-host", "version": "1.0.0"}));
    assert_eq!(
        result["hostCapabilities"],
        json!({"openLinks": {}, "serverTools": {}, "serverResources": {}, "logging": {}, "sandbox": {}})
    );
    assert_eq!(result["hostContext"]["theme"], "dark");
    assert_eq!(result["hostContext"]["toolInfo"]["id"], 7);
    assert_eq!(result["hostContext"]["toolInfo"]["tool"]["name"], "counter");

    // Held until the view says it is initialized, then delivered in order.
    let mut args = JsonObject::new();
    args.insert("start".into(), json!(0));
    bridge.send_tool_input(args);
    bridge.send_tool_result(&CallToolResult::text("count 0"));
    assert!(outlet.to_view.try_recv().is_err());
    let none = bridge
        .receive(r#"{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}"#)
        .await;
    assert!(none.is_none());
    assert_eq!(
        frame(&outlet.to_view.try_recv().unwrap()),
        json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-input", "params": {"arguments": {"start": 0}}})
    );
    assert_eq!(
        frame(&outlet.to_view.try_recv().unwrap()),
        json!({"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
               "params": {"content": [{"type": "text", "text": "count 0"}]}})
    );
    assert_eq!(outlet.events.try_recv().unwrap(), ViewEvent::Initialized);

    // The app-only tool and the tool both may call are proxied.
    let bumped = ask(&bridge, 2, "tools/call", json!({"name": "bump", "arguments": {}})).await;
    assert_eq!(
        bumped,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "count 1"}]}})
    );
    let counted = ask(&bridge, 3, "tools/call", json!({"name": "counter"})).await;
    assert_eq!(counted["result"]["content"][0]["text"], "count 0");

    // A model-only tool and another server's tool are refused; the server never sees them.
    assert_eq!(
        ask(&bridge, 4, "tools/call", json!({"name": "reset", "arguments": {}})).await,
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602,
            "message": "tool \"reset\" is not callable from a view: its visibility leaves out \"app\""}})
    );
    assert_eq!(
        ask(&bridge, 5, "tools/call", json!({"name": "other_tool", "arguments": {}})).await,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32602,
            "message": "\"other_tool\" is not a tool of this view's server"}})
    );
    let bumped = ask(&bridge, 6, "tools/call", json!({"name": "bump", "arguments": {}})).await;
    assert_eq!(bumped["result"]["content"][0]["text"], "count 2");

    // Reads go to the view's server.
    let read = ask(&bridge, 7, "resources/read", json!({"uri": "ui://counter/view"})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "<p>0</p>");
    assert_eq!(
        read["result"]["contents"][0]["_meta"],
        json!({"ui": {"prefersBorder": false}})
    );

    // What is for the host alone becomes an event.
    let logged = bridge
        .receive(r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"clicked"}}"#)
        .await;
    assert!(logged.is_none());
    assert!(matches!(outlet.events.try_recv().unwrap(), ViewEvent::Log(l) if l.data == json!("clicked")));
    let opened = ask(&bridge, 8, "ui/open-link", json!({"url": "https://example.com"})).await;
    assert_eq!(opened, json!({"jsonrpc": "2.0", "id": 8, "result": {}}));
    assert_eq!(
        outlet.events.try_recv().unwrap(),
        ViewEvent::OpenLink("https://example.com".into())
    );
    assert_eq!(
        ask(&bridge, 9, "sampling/createMessage", json!({})).await["error"]["code"],
        -32601
    );
}

#[tokio::test]
async fn the_gate_holds_over_a_handshake_era_client() {
    gate_in(ConnectMode::Handshake).await;
}

#[tokio::test]
async fn the_gate_holds_over_a_stateless_era_client() {
    gate_in(ConnectMode::Pinned(ProtocolVersion::V2026_07_28)).await;
}

#[tokio::test]
async fn a_view_served_as_base64_is_read_and_another_mime_type_is_refused() {
    let server = Server::builder()
        .resource(ResourceDef::blob(
            "ui://b64/view",
            "view",
            "text/html;profile=mcp-app",
            "PHA+aGk8L3A+",
        ))
        .resource(ResourceDef::text("ui://plain/page", "page", "text/html", "<p>hi</p>"))
        .build();
    let pair = TestPair::connect(server, Client::builder()).await.unwrap();
    let view = View::read(&pair.client, "ui://b64/view").await.unwrap();
    assert_eq!(view.html, "<p>hi</p>");
    let err = View::read(&pair.client, "ui://plain/page").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid response from the peer: ui://plain/page is not a text/html;profile=mcp-app view: another MIME type"
    );
}

#[tokio::test]
async fn a_broken_message_gets_the_json_rpc_error() {
    let (bridge, _outlet, _pair, _other) = bridge(ConnectMode::Handshake).await;
    assert_eq!(
        frame(&bridge.receive("{not json").await.unwrap())["error"]["code"],
        -32700
    );
    let invalid = frame(&bridge.receive(r#"{"jsonrpc":"2.0","id":3}"#).await.unwrap());
    assert_eq!((&invalid["id"], &invalid["error"]["code"]), (&json!(3), &json!(-32600)));
}
