//! mcpkit's MCP Apps shapes, as the official package (`@modelcontextprotocol/ext-apps` 2.0.4,
//! tests-interop/apps) reads them: each tool's `_meta.ui`, a view's `_meta.ui` (with its `csp`
//! and `permissions`), and the host bridge's `ui/initialize` result and notifications parse
//! under the package's schemas without losing a member; its host helpers
//! `getToolUiResourceUri` and `isToolVisibilityAppOnly` read the reference server's tools and
//! a tool linked only by the legacy key as intended; its `buildAllowAttribute` agrees with
//! mcpkit's `allow_attribute`. Node runs tests-interop/apps/check_shapes.mjs.

use std::io::Write;
use std::process::{Command, Stdio};

use mcpkit::apps::host::messages::{HostContext, ToolInfo};
use mcpkit::apps::host::{allow_attribute, AppBridge, View};
use mcpkit::apps::{Csp, Permission, UiResource, Visibility};
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{CallToolResult, Implementation, JsonObject, Meta};
use mcpkit::{Client, Server};
use mcpkit_cli::reference;
use serde_json::{json, Value};

use crate::support::peers::{apps_dir, node_20};

const FULL_VIEW: &str = "ui://shapes/full";

/// The reference server's tools and view, and a view declaring every setting.
fn server() -> Server {
    let legacy_only: Meta = serde_json::from_value(json!({"ui/resourceUri": FULL_VIEW})).unwrap();
    Server::builder()
        .tool(ToolDef::new("model_only", || async { "" }).visibility([Visibility::Model]))
        .tool(ToolDef::new("legacy_link", || async { "" }).meta(legacy_only))
        .tool(
            ToolDef::new("both_explicit", || async { "" })
                .ui(FULL_VIEW)
                .visibility([Visibility::Model, Visibility::App]),
        )
        .resource(
            UiResource::html(FULL_VIEW, "<!doctype html><p>full</p>")
                .csp(Csp {
                    connect_domains: vec!["https://api.example.com".into()],
                    resource_domains: vec!["https://cdn.example.com".into()],
                    frame_domains: vec!["https://www.youtube.com".into()],
                    base_uri_domains: vec!["https://base.example.com".into()],
                })
                .permissions(Permission::ALL)
                .domain("full.example.com")
                .prefers_border(false),
        )
        .build()
}

/// What the package makes of `input`.
fn official_reading(input: &Value) -> Value {
    let dir = apps_dir();
    let mut child = Command::new(node_20())
        .arg(dir.join("check_shapes.mjs"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn the_official_package_reads_mcpkits_apps_shapes_as_intended() {
    let full = TestPair::connect(server(), Client::builder()).await.unwrap();
    let counter = TestPair::connect(reference::server(), Client::builder()).await.unwrap();
    let mut tools = full.client.list_all_tools().await.unwrap();
    tools.extend(
        counter
            .client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .filter(|t| t.name.starts_with("test_app_counter") || t.name == "echo"),
    );
    let mut contents = Vec::new();
    for (client, uri) in [
        (&full.client, FULL_VIEW),
        (&counter.client, reference::apps::COUNTER_VIEW),
    ] {
        contents.extend(client.read_resource(uri).await.unwrap().contents);
    }

    // The bridge's own messages, as a view receives them.
    let view = View::read(&full.client, FULL_VIEW).await.unwrap();
    let context = HostContext {
        theme: Some("light".into()),
        display_mode: Some("inline".into()),
        tool_info: Some(ToolInfo::new(Some(1.into()), tools[2].clone())),
        ..HostContext::default()
    };
    let (bridge, mut outlet) = AppBridge::new(
        full.client.clone(),
        Implementation::new("shapes-host", "1.0.0"),
        context,
        view.meta.clone(),
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"}, "appCapabilities": {}}});
    let answer: Value = serde_json::from_str(&bridge.receive(&init.to_string()).await.unwrap()).unwrap();
    bridge
        .receive(r#"{"jsonrpc":"2.0","method":"ui/notifications/initialized"}"#)
        .await;
    let mut arguments = JsonObject::new();
    arguments.insert("city".into(), json!("Paris"));
    bridge.send_tool_input(arguments);
    let mut result = CallToolResult::text("20 C");
    result.structured_content = Some(json!({"celsius": 20}));
    bridge.send_tool_result(&result);
    bridge.send_tool_cancelled(Some("the user stopped it".into()));
    bridge.set_host_context(HostContext {
        theme: Some("dark".into()),
        ..HostContext::default()
    });
    let mut notifications = Vec::new();
    while let Ok(message) = outlet.to_view.try_recv() {
        notifications.push(serde_json::from_str::<Value>(&message).unwrap());
    }

    let reading = official_reading(&json!({
        "tools": tools,
        "contents": contents,
        "initializeResult": answer["result"],
        "notifications": notifications,
    }));
    assert_eq!(
        reading["tools"],
        json!([
            {"name": "model_only", "meta": "ok", "resourceUri": null, "appOnly": false},
            {"name": "legacy_link", "meta": "none", "resourceUri": FULL_VIEW, "appOnly": false},
            {"name": "both_explicit", "meta": "ok", "resourceUri": FULL_VIEW, "appOnly": false},
            {"name": "echo", "meta": "none", "resourceUri": null, "appOnly": false},
            {"name": "test_app_counter", "meta": "ok", "resourceUri": reference::apps::COUNTER_VIEW, "appOnly": false},
            {"name": "test_app_counter_increment", "meta": "ok", "resourceUri": reference::apps::COUNTER_VIEW, "appOnly": true},
        ])
    );
    let full_allow = allow_attribute(view.meta.as_ref());
    assert_eq!(full_allow, "camera; microphone; geolocation; clipboard-write");
    assert_eq!(
        reading["views"],
        json!([
            {"uri": FULL_VIEW, "meta": "ok", "csp": "ok", "permissions": "ok", "allow": full_allow},
            {"uri": reference::apps::COUNTER_VIEW, "meta": "ok", "csp": "none", "permissions": "none", "allow": ""},
        ])
    );
    assert_eq!(reading["initializeResult"], "ok");
    assert_eq!(
        reading["notifications"],
        json!([
            "ui/notifications/tool-input: ok",
            "ui/notifications/tool-result: ok",
            "ui/notifications/tool-cancelled: ok",
            "ui/notifications/host-context-changed: ok",
        ])
    );
}
