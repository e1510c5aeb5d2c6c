//! The reference server's MCP App: `test_app_counter` answers with text for any host (both
//! eras, with or without the Apps extension declared) and links to a self-contained view;
//! the view's own messages, fed to the host bridge, call the app-only
//! `test_app_counter_increment`, which the model is not given; `mcpkit read` prints the view's
//! HTML and `mcpkit inspect` marks the view and the app-only tool.

use assert_cmd::Command;
use mcpkit::apps::host::messages::HostContext;
use mcpkit::apps::host::{model_tools, AppBridge, View};
use mcpkit::apps::EXTENSION_ID;
use mcpkit::client::ConnectMode;
use mcpkit::testing::TestPair;
use mcpkit::types::schema::Implementation;
use mcpkit::types::ProtocolVersion;
use mcpkit::Client;
use mcpkit_cli::reference::{self, apps::COUNTER_VIEW};
use serde_json::{json, Value};

async fn connect(mode: ConnectMode, apps: bool) -> TestPair {
    let mut client = Client::builder().mode(mode);
    if apps {
        client = client.extension(EXTENSION_ID, mcpkit::apps::settings());
    }
    TestPair::connect(reference::server(), client).await.unwrap()
}

async fn count_text(client: &Client) -> String {
    let result = client.call_tool("test_app_counter", json!({})).await.unwrap();
    result.content[0].as_text().unwrap().to_owned()
}

/// What the view posts, in its order, and what it reads back (see counter.html).
async fn click_increment(bridge: &AppBridge) -> Value {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {
        "protocolVersion": "2026-01-26",
        "appInfo": {"name": "mcpkit-counter-view", "version": "1.0.0"},
        "appCapabilities": {}
    }});
    let answer: Value = serde_json::from_str(&bridge.receive(&init.to_string()).await.unwrap()).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], "2026-01-26");
    let initialized = json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}});
    assert!(bridge.receive(&initialized.to_string()).await.is_none());
    let click = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "test_app_counter_increment", "arguments": {}}});
    serde_json::from_str(&bridge.receive(&click.to_string()).await.unwrap()).unwrap()
}

#[tokio::test]
async fn the_view_increments_the_count_the_model_reads_in_both_eras() {
    for mode in [
        ConnectMode::Handshake,
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        for apps in [false, true] {
            let pair = connect(mode, apps).await;
            assert_eq!(count_text(&pair.client).await, "Count: 0", "{mode:?} {apps}");
            let tools = pair.client.list_all_tools().await.unwrap();
            let counter = tools.iter().find(|t| t.name == "test_app_counter").unwrap();
            assert_eq!(
                serde_json::to_value(&counter.meta).unwrap(),
                json!({"ui": {"resourceUri": COUNTER_VIEW}, "ui/resourceUri": COUNTER_VIEW})
            );
            let given: Vec<String> = model_tools(tools).into_iter().map(|t| t.name).collect();
            assert!(given.iter().any(|n| n == "test_app_counter"));
            assert!(!given.iter().any(|n| n == "test_app_counter_increment"));

            let view = View::read(&pair.client, COUNTER_VIEW).await.unwrap();
            let (bridge, _outlet) = AppBridge::new(
                pair.client.clone(),
                Implementation::new("test-host", "1"),
                HostContext::default(),
                view.meta,
            );
            let answer = click_increment(&bridge).await;
            assert_eq!(
                answer,
                json!({"jsonrpc": "2.0", "id": 2, "result": {
                    "content": [{"type": "text", "text": "Count: 1"}],
                    "structuredContent": {"count": 1}
                }})
            );
            assert_eq!(count_text(&pair.client).await, "Count: 1");
        }
    }
}

#[tokio::test]
async fn the_view_is_one_self_contained_page_with_an_increment_button() {
    let pair = connect(ConnectMode::Handshake, true).await;
    let view = View::read(&pair.client, COUNTER_VIEW).await.unwrap();
    let html = &view.html;
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(html.contains(r#"<button id="increment" type="button" disabled>Increment</button>"#));
    // It calls the app-only tool by the name the server serves it under.
    assert!(html.contains(r#"name: "test_app_counter_increment""#));
    // Nothing from elsewhere: no outside scripts, styles or links.
    for outside in ["src=", "href=", "http://", "https://", "@import"] {
        assert!(!html.contains(outside), "{outside}");
    }
    assert_eq!(
        serde_json::to_value(&view.meta).unwrap(),
        json!({"prefersBorder": true})
    );
}

fn mcpkit(args: &[&str]) -> String {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .env("COLUMNS", "200")
        .timeout(std::time::Duration::from_secs(120))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn read_prints_the_views_html_and_inspect_marks_the_app_tools() {
    let read = mcpkit(&["read", COUNTER_VIEW]);
    assert_eq!(
        read,
        format!(
            "[resource {COUNTER_VIEW} (text/html;profile=mcp-app)]\n{}\n",
            reference::apps::COUNTER_HTML
        )
    );
    let inspect = mcpkit(&["inspect"]);
    let hints = |tool: &str| {
        let line = inspect
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{tool} ")))
            .unwrap();
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .nth(2)
            .unwrap()
            .to_owned()
    };
    assert_eq!(hints("test_app_counter"), "view");
    assert_eq!(hints("test_app_counter_increment"), "view, app only");
}
