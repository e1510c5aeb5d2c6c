//! The mcpkit client's connection modes against the dual-era reference server (`mcpkit serve`),
//! over stdio and HTTP: `Auto` and a pinned 2026-07-28 speak the stateless wire (multi
//! round-trip input answered by the client's own handlers), `Legacy` the handshake; the same
//! tool handlers serve both.

use crate::support;

use mcpkit::client::{Client, ConnectMode};
use mcpkit::transport::child::ChildTransport;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::schema::{CreateMessageResult, ElicitAction, ElicitResult, JsonObject, LoggingLevel, Root};
use mcpkit::types::{ErrorCode, ProtocolVersion};
use serde_json::json;
use support::HttpServer;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

fn builder(mode: ConnectMode) -> mcpkit::client::ClientBuilder {
    Client::builder()
        .name("modes-test", "1")
        .mode(mode)
        .on_sampling(|p| async move {
            let asked = p
                .messages
                .first()
                .and_then(|m| m.content.iter().find_map(|c| c.as_text()))
                .unwrap_or("")
                .to_owned();
            Ok(CreateMessageResult::text("test-model", format!("answer to: {asked}")))
        })
        .on_elicitation(|_| async move {
            let content: JsonObject = json!({"name": "Alice", "color": "blue", "ok": true, "context": "ctx",
                "username": "alice", "email": "a@example.com"})
            .as_object()
            .cloned()
            .unwrap();
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content),
                meta: None,
            })
        })
        .roots(vec![Root::new("file:///work")])
}

fn text(r: &mcpkit::types::schema::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

/// What every mode must get right on any transport.
async fn exercise(client: &Client, stateless: bool) {
    assert_eq!(client.is_stateless(), stateless);
    assert_eq!(client.server_info().name, "mcpkit-reference");
    let expected = if stateless {
        ProtocolVersion::V2026_07_28
    } else {
        ProtocolVersion::V2025_11_25
    };
    assert_eq!(client.protocol_version(), expected);
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let r = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&r), "hi");

    // One handler, both eras: a server→client request on a session, input_required rounds on
    // the stateless wire, answered by the same client handlers.
    let r = client
        .call_tool("test_sampling", json!({"prompt": "2+2?"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "LLM response: answer to: 2+2?");
    let r = client
        .call_tool("test_elicitation", json!({"message": "who?"}))
        .await
        .unwrap();
    assert!(text(&r).starts_with("User response: action=accept"), "{}", text(&r));
    let r = client
        .call_tool("test_input_required_result_multi_round", ())
        .await
        .unwrap();
    assert_eq!(text(&r), "Alice likes blue");
    let r = client
        .call_tool("test_input_required_result_multiple_inputs", ())
        .await
        .unwrap();
    assert_eq!(
        text(&r),
        "name=Alice; greeting=answer to: Write a short greeting; Client roots: file:///work"
    );
    let p = client
        .get_prompt("test_input_required_result_prompt", Vec::<(String, String)>::new())
        .await
        .unwrap();
    assert_eq!(p.messages.len(), 1);
    let r = client.read_resource("test://static-text").await.unwrap();
    assert_eq!(r.contents.len(), 1);
    client.set_log_level(LoggingLevel::Debug).await.unwrap();
    client.ping().await.unwrap();

    // A resource that does not exist: -32602 on the stateless wire, -32002 before.
    let e = client.read_resource("test://missing").await.unwrap_err();
    let code = e.rpc().unwrap().code;
    if stateless {
        assert_eq!(code, ErrorCode::INVALID_PARAMS);
    } else {
        assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_auto_mode_is_stateless_and_legacy_mode_handshakes() {
    for (mode, stateless) in [
        (ConnectMode::Auto, true),
        (ConnectMode::Pinned(ProtocolVersion::V2026_07_28), true),
        (ConnectMode::Handshake, false),
    ] {
        let transport = ChildTransport::spawn(BIN, ["serve"]).expect("spawn mcpkit serve");
        let client = builder(mode).connect(transport).await.unwrap();
        exercise(&client, stateless).await;
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_auto_mode_is_stateless_and_legacy_mode_handshakes() {
    let server = HttpServer::start();
    let url = format!("{}/mcp", server.base);
    for (mode, stateless) in [
        (ConnectMode::Auto, true),
        (ConnectMode::Pinned(ProtocolVersion::V2026_07_28), true),
        (ConnectMode::Handshake, false),
    ] {
        let transport = HttpClientTransport::new(url.clone()).unwrap();
        let client = builder(mode).connect(transport).await.unwrap();
        exercise(&client, stateless).await;
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_stateless_client_mirrors_x_mcp_header_parameters() {
    let server = HttpServer::start();
    let transport = HttpClientTransport::new(format!("{}/mcp", server.base)).unwrap();
    let client = builder(ConnectMode::Auto).connect(transport).await.unwrap();
    // The server refuses a tools/call whose Mcp-Param-Region header is missing or wrong, so a
    // successful call proves the client learned the annotation from tools/list and sent it,
    // Base64-encoded where the value is not plain header text.
    client.list_all_tools().await.unwrap();
    for region in ["us-west1", "Zürich ", "=?base64?literal?="] {
        let r = client
            .call_tool("test_header_param", json!({"region": region, "query": "q"}))
            .await
            .unwrap();
        assert_eq!(text(&r), format!("region={region}, query=q"));
    }
}

async fn wait_for_tools_changed(notes: &mut tokio::sync::broadcast::Receiver<mcpkit::client::ServerNotification>) {
    loop {
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), notes.recv())
            .await
            .expect("no tools/list_changed within 10 s")
            .unwrap();
        if matches!(n, mcpkit::client::ServerNotification::ToolListChanged) {
            return;
        }
    }
}

/// `subscriptions/listen` and the response cache, on the stateless wire: a cached `tools/list`
/// (the reference server says it stays fresh for 60 s) is served again until a
/// `tools/list_changed` from an open subscription makes it stale.
async fn listen_and_cache(client: &Client) {
    use mcpkit::types::schema::SubscriptionFilter;
    let has_dynamic = |tools: &[mcpkit::types::schema::Tool]| tools.iter().any(|t| t.name == "test_dynamic_tool");
    let before = client.list_all_tools().await.unwrap();
    assert!(!has_dynamic(&before));
    // No subscription yet: the change is not seen, the cached list is still fresh.
    client.call_tool("test_trigger_tool_change", ()).await.unwrap();
    assert!(
        !has_dynamic(&client.list_all_tools().await.unwrap()),
        "served from the cache"
    );

    let mut notes = client.notifications();
    let sub = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    assert_eq!(sub.acknowledged().prompts_list_changed, None);
    // Removes the tool again (it was added above) and tells the subscription.
    client.call_tool("test_trigger_tool_change", ()).await.unwrap();
    wait_for_tools_changed(&mut notes).await;
    // The notification invalidated the cache: this list is fetched anew.
    client.call_tool("test_trigger_tool_change", ()).await.unwrap();
    wait_for_tools_changed(&mut notes).await;
    assert!(
        has_dynamic(&client.list_all_tools().await.unwrap()),
        "refetched after list_changed"
    );
    drop(sub);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_client_listens_and_caches_over_stdio() {
    let transport = ChildTransport::spawn(BIN, ["serve"]).expect("spawn mcpkit serve");
    let client = builder(ConnectMode::Auto).connect(transport).await.unwrap();
    listen_and_cache(&client).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_client_listens_and_caches_over_http() {
    let server = HttpServer::start();
    let transport = HttpClientTransport::new(format!("{}/mcp", server.base)).unwrap();
    let client = builder(ConnectMode::Auto).connect(transport).await.unwrap();
    listen_and_cache(&client).await;
    client.close().await.unwrap();
}
