//! A handler that panics answers its own request with -32603 and nothing else: the connection,
//! other requests and later requests (even with the same id) are unaffected.

use crate::common;

use common::{assert_error, within, Wire};
use mcpkit::server::{PromptDef, ResourceDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::{GetPromptResult, ReadResourceResult};
use mcpkit::types::{ErrorCode, ErrorObject};
use mcpkit::{Client, Server};
use serde_json::json;

fn server() -> Server {
    Server::builder()
        .tool(ToolDef::new("boom", || async {
            if true {
                panic!("the tool exploded");
            }
            "unreachable"
        }))
        .tool(ToolDef::new("fine", || async { "fine" }))
        .resource(ResourceDef::new("test://boom", "boom", || async {
            if true {
                panic!("the resource exploded");
            }
            Ok::<_, ErrorObject>(ReadResourceResult::new(vec![]))
        }))
        .prompt(PromptDef::new("boom", || async {
            if true {
                panic!("the prompt exploded");
            }
            Ok::<_, ErrorObject>(GetPromptResult::new(vec![]))
        }))
        .on_roots_changed(|_| panic!("the notification handler exploded"))
        .build()
}

#[tokio::test]
async fn a_panicking_tool_returns_internal_error_for_that_request_only() {
    let mut w = Wire::serve(&server());
    w.initialize().await;
    for _ in 0..3 {
        let reply = w
            .request(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "boom"}}))
            .await;
        assert_error(&reply, -32603, &json!(5));
    }
    let reply = w
        .request(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "fine"}}))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "fine");
    w.assert_silent_then_ping("a panicking tool").await;
}

#[tokio::test]
async fn panics_in_every_kind_of_handler_are_contained() {
    let pair = within("connect", TestPair::connect(server(), Client::builder().roots(vec![])))
        .await
        .unwrap();
    let c = &pair.client;
    let e = within("boom tool", c.call_tool("boom", ())).await.unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code), Some(ErrorCode::INTERNAL_ERROR), "{e:?}");
    let e = within("boom resource", c.read_resource("test://boom"))
        .await
        .unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code), Some(ErrorCode::INTERNAL_ERROR), "{e:?}");
    let e = within("boom prompt", c.get_prompt("boom", Vec::<(String, String)>::new()))
        .await
        .unwrap_err();
    assert_eq!(e.rpc().map(|e| e.code), Some(ErrorCode::INTERNAL_ERROR), "{e:?}");
    // A panicking notification handler is not answered (notifications never are) and does not
    // stop later notifications or requests.
    c.set_roots(vec![]).unwrap();
    c.set_roots(vec![]).unwrap();
    within("ping", c.ping()).await.unwrap();
    let r = within("fine", c.call_tool("fine", ())).await.unwrap();
    assert!(!r.is_error());
    // Concurrent panics and successes do not mix up their answers.
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..20 {
        let c = c.clone();
        calls.spawn(async move { (i, c.call_tool(if i % 2 == 0 { "boom" } else { "fine" }, ()).await) });
    }
    while let Some(done) = within("concurrent calls", calls.join_next()).await {
        let (i, r) = done.unwrap();
        if i % 2 == 0 {
            assert_eq!(r.unwrap_err().rpc().map(|e| e.code), Some(ErrorCode::INTERNAL_ERROR));
        } else {
            assert!(!r.unwrap().is_error());
        }
    }
    let errors = pair
        .server_sent()
        .iter()
        .filter(|f| f.contains("\"code\":-32603"))
        .count();
    assert_eq!(errors, 13, "one -32603 per panicking request");
}
