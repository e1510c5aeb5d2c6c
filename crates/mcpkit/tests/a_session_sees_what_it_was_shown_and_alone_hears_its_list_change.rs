//! Per-session visibility: a tool `hidden` until shown is neither listed nor found; a handler
//! shows it to its own session (`cx.show(Select::tag(..))`) and hides it again
//! (`cx.hide(Select::name(..))`); that session alone gets `notifications/tools/list_changed`,
//! and another session on the same server keeps its own view. Two raw sessions on one server.
#![cfg(feature = "server")]

use mcpkit::server::{RequestContext, Select, ToolDef};
use mcpkit::Server;
use serde_json::{json, Value};

use crate::common::Wire;

fn server() -> Server {
    Server::builder()
        .tool(
            ToolDef::new("admin", || async { "admin work" })
                .tags(["admin"])
                .hidden(),
        )
        .tool(ToolDef::new("unlock", |cx: RequestContext| async move {
            cx.show(Select::tag("admin"));
            "unlocked"
        }))
        .tool(ToolDef::new("lock", |cx: RequestContext| async move {
            cx.hide(Select::name("admin"));
            "locked"
        }))
        .build()
}

fn call(id: i64, name: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": {} } })
}

async fn names(wire: &mut Wire, id: i64) -> Vec<String> {
    let reply = wire
        .request(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {} }))
        .await;
    reply["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn shown_to_one_session_hidden_from_the_other() {
    let server = server();
    let (mut a, mut b) = (Wire::serve(&server), Wire::serve(&server));
    a.initialize().await;
    b.initialize().await;
    assert_eq!(names(&mut a, 1).await, ["unlock", "lock"]);
    let hidden = a.request(&call(2, "admin")).await;
    assert_eq!(hidden["error"]["message"], "Unknown tool: admin", "{hidden}");

    // Showing it: A hears its list changed before the call's reply; B hears nothing.
    a.send_json(&call(3, "unlock")).await;
    let first = a.recv().await;
    assert_eq!(
        first,
        json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" })
    );
    assert_eq!(a.recv().await["id"], 3);
    assert_eq!(names(&mut a, 4).await, ["admin", "unlock", "lock"]);
    assert_eq!(
        a.request(&call(5, "admin")).await["result"]["content"][0]["text"],
        "admin work"
    );
    b.assert_silent_then_ping("A's change").await;
    assert_eq!(names(&mut b, 6).await, ["unlock", "lock"]);
    assert_eq!(
        b.request(&call(7, "admin")).await["error"]["message"],
        "Unknown tool: admin"
    );

    // Hiding it again, by name: the last change that names an item decides.
    a.send_json(&call(8, "lock")).await;
    assert_eq!(a.recv().await["method"], "notifications/tools/list_changed");
    assert_eq!(a.recv().await["id"], 8);
    assert_eq!(names(&mut a, 9).await, ["unlock", "lock"]);
    b.assert_silent_then_ping("A's second change").await;
}
