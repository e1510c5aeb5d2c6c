//! Tasks are a pooled resource shared fairly: each client (its verified caller, else its
//! address) may keep only its share of live tasks, is refused beyond it with an error naming
//! the limit, and can never push out another client's task, not even a finished one, before
//! that task's TTL ends. With authorization, a task is its caller's whole identity's: a client
//! acting for no user never reads the task of a user whose name equals its client id. Through
//! the router, over sessionless HTTP (every request on its own).
#![cfg(all(feature = "http-server", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::http::*;
use common::within;
use mcpkit::server::backend::memory::MemoryTaskStore;
use mcpkit::server::backend::TaskLimits;
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::ToolDef;
use mcpkit::types::schema::TaskSupport;
use mcpkit::Server;
use serde_json::{json, Value};

/// `quick` answers at once, `forever` never; both only as tasks.
fn server(limits: TaskLimits) -> Server {
    let config = TasksConfig::default()
        .poll_interval(Duration::from_millis(20))
        .store(MemoryTaskStore::new(limits));
    Server::builder()
        .extension(Tasks::new(config))
        .tool(ToolDef::new("quick", || async { "quick done" }).task_support(TaskSupport::Required))
        .tool(
            ToolDef::new("forever", || async {
                std::future::pending::<()>().await;
                "never"
            })
            .task_support(TaskSupport::Required),
        )
        .build()
}

fn sessionless() -> HttpConfig {
    HttpConfig {
        sessionless: true,
        ..HttpConfig::default()
    }
}

const TASKS_META: &str =
    r#"{"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}"#;

/// One sessionless request, from `addr` and with the `authorization` header when given.
async fn send_as(mcp: &Mcp, addr: &str, token: Option<&str>, method: &str, mut params: Value) -> Value {
    params["_meta"] = serde_json::from_str(TASKS_META).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut req = mcp
        .post_with(None, body, &[("mcp-protocol-version", Some("2025-11-25"))])
        .sent_from(addr);
    if let Some(token) = token {
        req = req.header("authorization", token);
    }
    json_body(send(req).await).await
}

async fn call_as(mcp: &Mcp, addr: &str, tool: &str) -> Value {
    send_as(mcp, addr, None, "tools/call", json!({"name": tool, "arguments": {}})).await
}

/// A new task's id, or the error that refused it.
fn task_id(made: &Value) -> Result<String, String> {
    match made["result"]["taskId"].as_str() {
        Some(id) => Ok(id.to_owned()),
        None => Err(made["error"]["message"].as_str().unwrap_or("").to_owned()),
    }
}

async fn status(mcp: &Mcp, addr: &str, task: &str) -> Value {
    let got = send_as(mcp, addr, None, "tasks/get", json!({"taskId": task})).await;
    got["result"]["status"].clone()
}

#[tokio::test]
async fn one_client_at_its_share_leaves_every_other_clients_tasks_alone() {
    within("per-client task shares", async {
        let limits = TaskLimits::new(6, 3, 1 << 20);
        let mcp = Mcp::router(HttpServer::new(server(limits)).config(sessionless()).router());
        let (a, b, c) = ("10.0.0.1:5000", "10.0.0.2:5000", "10.0.0.3:5000");

        // B's task finishes and stays readable for its TTL.
        let finished = task_id(&call_as(&mcp, b, "quick").await).unwrap();
        while status(&mcp, b, &finished).await != "completed" {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }

        // A takes its whole share, and is refused beyond it, by name.
        for _ in 0..3 {
            task_id(&call_as(&mcp, a, "forever").await).unwrap();
        }
        let refused = task_id(&call_as(&mcp, a, "forever").await).unwrap_err();
        assert!(refused.contains("at most 3 tasks"), "{refused}");

        // B is not affected, and its finished task is still there.
        task_id(&call_as(&mcp, b, "forever").await).unwrap();
        assert_eq!(status(&mcp, b, &finished).await, "completed");

        // The store's capacity (6) is reached by C; the next is refused, and nothing is
        // evicted to make room: B's finished task is still there.
        task_id(&call_as(&mcp, c, "forever").await).unwrap();
        let full = task_id(&call_as(&mcp, c, "forever").await).unwrap_err();
        assert!(full.contains("too many tasks"), "{full}");
        assert_eq!(status(&mcp, b, &finished).await, "completed");
    })
    .await;
}

#[cfg(feature = "auth")]
#[tokio::test]
async fn a_client_acting_for_no_user_never_reads_the_task_of_the_user_of_its_name() {
    use common::callers::{bearer, UserTokens, ISSUER, RESOURCE};
    use mcpkit::auth::resource::ProtectedResource;
    use std::sync::Arc;

    within("one identity per caller", async {
        let layer = ProtectedResource::new(RESOURCE, [ISSUER], Arc::new(UserTokens)).unwrap();
        let http = HttpServer::new(server(TaskLimits::default())).config(sessionless());
        let mcp = Mcp::router(http.layer(layer).router());
        let addr = "10.0.0.1:5000";
        let user = bearer("alice");
        let made = send_as(
            &mcp,
            addr,
            Some(&user),
            "tools/call",
            json!({"name": "forever", "arguments": {}}),
        )
        .await;
        let task = task_id(&made).unwrap();
        let get = json!({"taskId": task});
        let mine = send_as(&mcp, addr, Some(&user), "tasks/get", get.clone()).await;
        assert_eq!(mine["result"]["status"], "working", "{mine}");
        // `client-alice`: no subject, client id "alice".
        let client = "Bearer client-alice";
        let theirs = send_as(&mcp, addr, Some(client), "tasks/get", get.clone()).await;
        assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
        let cancel = send_as(&mcp, addr, Some(client), "tasks/cancel", get.clone()).await;
        assert_eq!(cancel["error"]["code"], -32602, "{cancel}");
    })
    .await;
}
