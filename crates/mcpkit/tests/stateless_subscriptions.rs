//! `subscriptions/listen` on the 2026-07-28 wire (spec: 2026-07-28
//! `basic/patterns/subscriptions`): the first frame acknowledges the honoured filter with the
//! subscription id; only the kinds asked for arrive, each tagged with the id; `notifications/cancelled`
//! ends the stream without a reply; `Server::end_subscriptions` ends it with a `complete` result.
//! Over HTTP: one listen stream end to end, and closing a request's response stream cancels the
//! request (how an HTTP client ends a subscription). Raw frames over the in-memory transport and
//! over real sockets on 127.0.0.1.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::{within, Wire};
use futures_util::StreamExt;
use mcpkit::server::http::HttpServer;
use mcpkit::server::{PromptDef, ResourceDef, ToolDef};
use mcpkit::types::schema::{GetPromptResult, PromptMessage};
use mcpkit::types::ErrorObject;
use mcpkit::Server;
use serde_json::{json, Value};

const V: &str = "2026-07-28";
const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn server() -> Server {
    Server::builder()
        .name("listen-test", "1.0.0")
        .tool(ToolDef::new("t0", || async { "t0" }))
        .prompt(prompt("p0"))
        .resource(ResourceDef::text("test://a", "a", "text/plain", "A"))
        .resource(ResourceDef::text("test://b", "b", "text/plain", "B"))
        .build()
}

fn prompt(name: &str) -> PromptDef {
    PromptDef::new(name, || async {
        Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::user_text("p")]))
    })
}

fn listen(id: Value, filter: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"notifications": filter, "_meta": meta()}})
}

fn tagged(method: &str, id: &Value, extra: Value) -> Value {
    let mut params = json!({"_meta": {SUB_ID: id}});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// Open a listen stream with `filter`; assert the acknowledgment and return it.
async fn open(wire: &mut Wire, id: Value, filter: Value) -> Value {
    wire.send_json(&listen(id.clone(), filter)).await;
    let ack = wire.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"], json!({SUB_ID: id}), "{ack}");
    assert!(ack.get("id").is_none(), "{ack}");
    ack
}

/// A stateless `tools/list`; the next frame must be its reply (so nothing was queued before it).
async fn assert_next_is_reply(wire: &mut Wire, id: i64, after: &str) {
    let reply = wire
        .request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"_meta": meta()}}))
        .await;
    assert!(reply["result"]["tools"].is_array(), "after {after}: {reply}");
}

#[tokio::test]
async fn acknowledgment_echoes_the_honoured_filter_with_the_subscription_id() {
    let s = server();
    let mut wire = Wire::serve(&s);
    let ack = open(
        &mut wire,
        json!("sub-1"),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["test://a"]}),
    )
    .await;
    assert_eq!(
        ack,
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": {
                    "toolsListChanged": true,
                    "promptsListChanged": true,
                    "resourceSubscriptions": ["test://a"]
                },
                "_meta": {SUB_ID: "sub-1"}
            }
        })
    );
}

#[tokio::test]
async fn kinds_not_offered_are_not_honoured() {
    // No prompts or resources on this server: only the tools kind can be honoured.
    let s = Server::builder()
        .name("tools-only", "1")
        .tool(ToolDef::new("t", || async { "t" }))
        .build();
    let mut wire = Wire::serve(&s);
    let ack = open(
        &mut wire,
        json!(1),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
               "resourceSubscriptions": ["test://a"]}),
    )
    .await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );
}

#[tokio::test]
async fn list_changes_and_resource_updates_arrive_tagged() {
    let s = server();
    let mut wire = Wire::serve(&s);
    let id = json!(7);
    open(
        &mut wire,
        id.clone(),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
               "resourceSubscriptions": ["test://a"]}),
    )
    .await;
    s.add_tool(ToolDef::new("t1", || async { "t1" }));
    assert_eq!(
        wire.recv().await,
        tagged("notifications/tools/list_changed", &id, json!({}))
    );
    s.add_prompt(prompt("p1"));
    assert_eq!(
        wire.recv().await,
        tagged("notifications/prompts/list_changed", &id, json!({}))
    );
    s.add_resource(ResourceDef::text("test://c", "c", "text/plain", "C"));
    assert_eq!(
        wire.recv().await,
        tagged("notifications/resources/list_changed", &id, json!({}))
    );
    // Only the subscribed URI: b's update is dropped, a's arrives.
    s.notify_resource_updated("test://b");
    s.notify_resource_updated("test://a");
    assert_eq!(
        wire.recv().await,
        tagged("notifications/resources/updated", &id, json!({"uri": "test://a"}))
    );
    assert_next_is_reply(&mut wire, 100, "the updates").await;
}

#[tokio::test]
async fn only_the_kinds_asked_for_arrive() {
    let s = server();
    let mut wire = Wire::serve(&s);
    let id = json!("prompts-only");
    open(&mut wire, id.clone(), json!({"promptsListChanged": true})).await;
    // Tools and resources change: nothing for this subscription.
    s.add_tool(ToolDef::new("t1", || async { "t1" }));
    s.remove_tool("t1");
    s.add_resource(ResourceDef::text("test://c", "c", "text/plain", "C"));
    s.notify_resource_updated("test://a");
    // The first frame after those is the prompt change.
    s.add_prompt(prompt("p1"));
    assert_eq!(
        wire.recv().await,
        tagged("notifications/prompts/list_changed", &id, json!({}))
    );
    assert_next_is_reply(&mut wire, 100, "the prompt change").await;
}

#[tokio::test]
async fn two_subscriptions_on_one_connection_each_get_their_own_kinds() {
    let s = server();
    let mut wire = Wire::serve(&s);
    open(&mut wire, json!("tools"), json!({"toolsListChanged": true})).await;
    open(&mut wire, json!("prompts"), json!({"promptsListChanged": true})).await;
    s.add_prompt(prompt("p1"));
    assert_eq!(
        wire.recv().await,
        tagged("notifications/prompts/list_changed", &json!("prompts"), json!({}))
    );
    s.add_tool(ToolDef::new("t1", || async { "t1" }));
    assert_eq!(
        wire.recv().await,
        tagged("notifications/tools/list_changed", &json!("tools"), json!({}))
    );
}

#[tokio::test]
async fn cancelling_the_listen_request_ends_the_stream_without_a_reply() {
    let s = server();
    let mut wire = Wire::serve(&s);
    open(&mut wire, json!(3), json!({"toolsListChanged": true})).await;
    wire.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}))
        .await;
    // Let the cancellation land: a request round trip after it is processed in order.
    assert_next_is_reply(&mut wire, 100, "the cancellation").await;
    s.add_tool(ToolDef::new("t1", || async { "t1" }));
    // Neither a change notification nor a reply to the cancelled listen.
    assert_next_is_reply(&mut wire, 101, "a change after the cancellation").await;
}

#[tokio::test]
async fn ending_subscriptions_completes_every_stream() {
    let s = server();
    let mut wire = Wire::serve(&s);
    open(&mut wire, json!(1), json!({"toolsListChanged": true})).await;
    open(&mut wire, json!(2), json!({"promptsListChanged": true})).await;
    s.end_subscriptions();
    let mut replies = [wire.recv().await, wire.recv().await];
    replies.sort_by_key(|r| r["id"].as_i64());
    for (r, id) in replies.iter().zip([1, 2]) {
        assert_eq!(
            r,
            &json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "_meta": {SUB_ID: id}}})
        );
    }
}

#[tokio::test]
async fn listen_on_a_handshake_session_is_not_a_method() {
    let s = server();
    let mut wire = Wire::serve(&s);
    wire.initialize().await;
    let reply = wire
        .request(&json!({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
                         "params": {"notifications": {"toolsListChanged": true}}}))
        .await;
    common::assert_error(&reply, -32601, &json!(5));
}

#[tokio::test]
async fn a_listen_stream_over_http_carries_the_ack_and_the_changes() {
    let s = server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(HttpServer::new(s.clone()).sse_legacy(true).serve(listener));
    let r = within(
        "the listen response",
        reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V)
            .header("mcp-method", "subscriptions/listen")
            .body(listen(json!(11), json!({"toolsListChanged": true})).to_string())
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("mcp-session-id").is_none(), "no sessions on this wire");
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut body = r.bytes_stream();
    let mut parser = mcpkit_test_support::sse::SseParser::default();
    let mut events: Vec<Value> = Vec::new();
    let mut changed = false;
    while events.len() < 2 {
        if events.len() == 1 && !changed {
            // The ack is in: now change the tools.
            s.add_tool(ToolDef::new("t1", || async { "t1" }));
            changed = true;
        }
        let chunk = within("an SSE chunk", body.next()).await.expect("stream open").unwrap();
        parser.push(&chunk);
        while let Some(event) = parser.next_event() {
            assert_eq!(event.id, None, "2026 streams carry no event ids: {event:?}");
            if event.has_message() {
                events.push(event.json());
            }
        }
    }
    assert_eq!(events[0]["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(events[0]["params"]["_meta"], json!({SUB_ID: 11}));
    assert_eq!(
        events[1],
        tagged("notifications/tools/list_changed", &json!(11), json!({}))
    );
    // The server ends subscriptions: the stream closes with the final result.
    s.end_subscriptions();
    let mut rest = String::new();
    while let Some(chunk) = within("the end of the stream", body.next()).await {
        rest.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
    }
    let last: Value = mcpkit_test_support::sse::events(&rest)
        .iter()
        .rev()
        .find(|e| e.has_message())
        .expect("a final event")
        .json();
    assert_eq!(
        last,
        json!({"jsonrpc": "2.0", "id": 11, "result": {"resultType": "complete", "_meta": {SUB_ID: 11}}})
    );
    task.abort();
}

#[tokio::test]
async fn closing_the_http_response_stream_cancels_the_request() {
    // A tool that reports progress (so its response becomes a stream at once), then waits until
    // its request is cancelled. Whether the engine fires the cancellation token or drops the
    // handler, the guard reports that the handler stopped; without cancellation it never would.
    struct Ended(Option<tokio::sync::oneshot::Sender<()>>);
    impl Drop for Ended {
        fn drop(&mut self) {
            if let Some(tx) = self.0.take() {
                let _ = tx.send(());
            }
        }
    }
    let (ended_tx, ended_rx) = tokio::sync::oneshot::channel::<()>();
    let ended_tx = std::sync::Arc::new(std::sync::Mutex::new(Some(ended_tx)));
    let s = Server::builder()
        .name("cancel-test", "1")
        .tool(ToolDef::new("wait", move |cx: mcpkit::server::RequestContext| {
            let guard = Ended(ended_tx.lock().unwrap().take());
            async move {
                let _guard = guard;
                cx.progress(1.0, None, None);
                cx.cancellation().cancelled().await;
                "cancelled"
            }
        }))
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(HttpServer::new(s).sse_legacy(true).serve(listener));
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "wait", "arguments": {}, "_meta": {
        "progressToken": "p",
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let r = within(
        "the tool's response",
        reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "wait")
            .body(frame.to_string())
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut body = r.bytes_stream();
    let first = within("the progress event", body.next()).await.unwrap().unwrap();
    assert!(
        std::str::from_utf8(&first).unwrap().contains("notifications/progress"),
        "{first:?}"
    );
    // The client goes away: the handler must see its request cancelled.
    drop(body);
    within("the handler to stop", ended_rx).await.unwrap();
    task.abort();
}
