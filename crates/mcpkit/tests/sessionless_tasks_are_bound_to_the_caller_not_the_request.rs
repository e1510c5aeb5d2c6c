//! Tasks extension over sessionless HTTP (handshake era without sessions: every request runs on
//! a throwaway session of its own). A task must outlive the request that made it, so it is bound
//! to the verified caller when there is one, otherwise to nothing but its unguessable id
//! (SEP-2663 "Security Implications"), never to the per-request session: the client that made
//! it reads it back and gets its result; with authorization, another user's `tasks/get` and
//! `tasks/cancel` of it are "not found" (-32602) while its owner's succeed. Real HTTP on
//! 127.0.0.1.
#![cfg(all(
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use std::time::Duration;

use common::http::Served;
use common::within;
use mcpkit::client::tasks::ToolOutcome;
use mcpkit::client::CallOptions;
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::ToolDef;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ext::tasks::ID;
use mcpkit::types::schema::{JsonObject, TaskSupport};
use mcpkit::{Client, Server};

fn server() -> Server {
    Server::builder()
        .extension(Tasks::new(
            TasksConfig::default().poll_interval(Duration::from_millis(20)),
        ))
        .tool(
            ToolDef::new("slow", || async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                "slow done"
            })
            .task_support(TaskSupport::Required),
        )
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

#[tokio::test]
async fn a_sessionless_client_reads_its_task_back_and_gets_the_result() {
    within("sessionless task", async {
        let served = Served::start(HttpServer::new(server()).config(sessionless())).await;
        let client = Client::builder()
            .extension(ID, JsonObject::new())
            .connect(HttpClientTransport::new(&served.url).unwrap())
            .await
            .unwrap();
        let id = match client
            .call_tool_as_task("slow", (), CallOptions::default())
            .await
            .unwrap()
        {
            ToolOutcome::Task(h) => h.task.task_id,
            other => panic!("expected a task: {other:?}"),
        };
        // Each of these is a request of its own, on a session of its own.
        let now = client.get_task(&id).await.unwrap();
        assert_eq!(now.task.task.task_id, id);
        let result = client.wait_task(&id, |_| {}).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("slow done"));
        // The plain helper (the tool runs only as a task) does the same in one call.
        let r = client.call_tool("slow", ()).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("slow done"));
    })
    .await;
}

#[cfg(feature = "auth")]
mod with_authorization {
    use std::sync::Arc;

    use mcpkit::auth::resource::ProtectedResource;
    use mcpkit::server::http::HttpServer;
    use mcpkit::types::schema::TaskStatus;
    use serde_json::{json, Value};

    use super::common::callers::{bearer, UserTokens, RESOURCE};
    use super::common::http::{json_body, send, Mcp, Served};
    use super::common::within;
    use super::{server, sessionless};

    const TASKS_META: &str =
        r#"{"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}"#;

    /// One sessionless JSON-RPC request from `user`; its reply.
    async fn as_user(mcp: &Mcp, user: &str, id: i64, method: &str, mut params: Value) -> Value {
        params["_meta"] = serde_json::from_str(TASKS_META).unwrap();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let r = send(
            mcp.post_with(None, body, &[("mcp-protocol-version", Some("2025-11-25"))])
                .header("authorization", bearer(user)),
        )
        .await;
        json_body(r).await
    }

    #[tokio::test]
    async fn with_authorization_a_sessionless_task_is_its_callers_alone() {
        within("sessionless task per caller", async {
            let layer = ProtectedResource::new(RESOURCE, ["https://issuer.test"], Arc::new(UserTokens)).unwrap();
            let served = Served::start(HttpServer::new(server()).config(sessionless()).layer(layer)).await;
            let mcp = Mcp::new(&served.url);
            let made = as_user(
                &mcp,
                "alice",
                1,
                "tools/call",
                json!({"name": "forever", "arguments": {}}),
            )
            .await;
            assert_eq!(made["result"]["resultType"], "task", "{made}");
            let task = made["result"]["taskId"].as_str().unwrap().to_owned();

            let mine = as_user(&mcp, "alice", 2, "tasks/get", json!({"taskId": task})).await;
            assert_eq!(mine["result"]["taskId"], task.as_str(), "{mine}");
            assert_eq!(mine["result"]["status"], "working", "{mine}");

            for (n, method) in [(3, "tasks/get"), (4, "tasks/cancel")] {
                let theirs = as_user(&mcp, "bob", n, method, json!({"taskId": task})).await;
                assert_eq!(theirs["error"]["code"], -32602, "{method} by another user: {theirs}");
            }
            // Bob's cancel changed nothing; alice's stops it.
            let still = as_user(&mcp, "alice", 5, "tasks/get", json!({"taskId": task})).await;
            assert_eq!(still["result"]["status"], "working", "{still}");
            let cancel = as_user(&mcp, "alice", 6, "tasks/cancel", json!({"taskId": task})).await;
            assert_eq!(cancel["result"]["resultType"], "complete", "{cancel}");
            let after = as_user(&mcp, "alice", 7, "tasks/get", json!({"taskId": task})).await;
            let status: TaskStatus = serde_json::from_value(after["result"]["status"].clone()).unwrap();
            assert_eq!(status, TaskStatus::Cancelled, "{after}");
        })
        .await;
    }
}
