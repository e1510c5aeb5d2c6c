//! Tasks extension (SEP-2663): every bad input gets the error the extension names, and the
//! connection keeps serving: an unknown or malformed task id, a task of another session or
//! caller, `tasks/cancel` of a finished task (acknowledged, the task stays finished), a result
//! fetched after the task's TTL, a task-required tool without the extension, the `tasks/*`
//! methods without it, and the removed `tasks/result` / `tasks/list`. Task ids are unguessable.
#![cfg(all(feature = "server", feature = "client"))]

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::within;
use mcpkit::client::tasks::ToolOutcome;
use mcpkit::client::CallOptions;
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::types::ext::tasks::{TaskParams, ID};
use mcpkit::types::method::Ping;
use mcpkit::types::schema::{JsonObject, TaskStatus, TaskSupport};
use mcpkit::types::{ErrorCode, ErrorObject, ProtocolVersion};
use mcpkit::{Client, Error, Server};
use serde_json::json;

fn server(ttl: Duration) -> Server {
    Server::builder()
        .extension(Tasks::new(
            TasksConfig::default().ttl(ttl).poll_interval(Duration::from_millis(20)),
        ))
        .tool(ToolDef::new("quick", || async { "quick done" }).task_support(TaskSupport::Optional))
        .tool(
            ToolDef::new("slow", || async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "slow done"
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(ToolDef::new("only_task", || async { "ran" }).task_support(TaskSupport::Required))
        .build()
}

fn with_tasks() -> mcpkit::ClientBuilder {
    Client::builder().extension(ID, JsonObject::new())
}

async fn start_task(client: &Client, tool: &str) -> String {
    match client
        .call_tool_as_task(tool, (), CallOptions::default())
        .await
        .unwrap()
    {
        ToolOutcome::Task(handle) => handle.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn rpc(e: Error) -> ErrorObject {
    match e {
        Error::Rpc(e) => e,
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}

async fn raw_error(client: &Client, method: &str, params: serde_json::Value) -> ErrorObject {
    let params = client.wire_params(params).unwrap();
    let e = client
        .peer()
        .request_raw(method, Some(&*params), Default::default())
        .await
        .expect_err("the request must fail");
    rpc(e)
}

#[tokio::test]
async fn unknown_and_malformed_task_ids_are_invalid_params_and_the_session_goes_on() {
    within("bad ids", async {
        let pair = TestPair::connect(server(Duration::from_secs(60)), with_tasks())
            .await
            .unwrap();
        for id in ["0123456789abcdef0123456789abcdef", "not-a-task", "", &"f".repeat(5000)] {
            let e = rpc(pair.client.get_task(id).await.unwrap_err());
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "tasks/get {id:.40}");
            assert!(e.message.contains("Task not found"), "{}", e.message);
            let e = rpc(pair.client.cancel_task(id).await.unwrap_err());
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "tasks/cancel {id:.40}");
            let e = rpc(pair.client.update_task(id, JsonObject::new()).await.unwrap_err());
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "tasks/update {id:.40}");
        }
        pair.client.peer().request::<Ping>(&Default::default()).await.unwrap();
        assert_eq!(
            pair.client.call_tool("quick", ()).await.unwrap().content[0].as_text(),
            Some("quick done")
        );
    })
    .await;
}

#[tokio::test]
async fn another_session_can_neither_read_nor_cancel_a_task() {
    within("other session", async {
        let server = server(Duration::from_secs(60));
        let alice = TestPair::connect(server.clone(), with_tasks()).await.unwrap();
        let bob = TestPair::connect(server.clone(), with_tasks()).await.unwrap();
        let id = start_task(&alice.client, "slow").await;
        let e = rpc(bob.client.get_task(&id).await.unwrap_err());
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(
            e.message.contains("Task not found"),
            "another's task reads as unknown: {}",
            e.message
        );
        let e = rpc(bob.client.cancel_task(&id).await.unwrap_err());
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        // A stateless caller (no session, no authentication) is another caller too.
        let stateless = server
            .call_as::<mcpkit::types::ext::tasks::GetTask>(ProtocolVersion::V2026_07_28, {
                let mut p = TaskParams::new(&id);
                p.meta = serde_json::from_value(json!({
                    "io.modelcontextprotocol/clientCapabilities": { "extensions": { ID: {} } }
                }))
                .unwrap();
                p
            })
            .await
            .unwrap_err();
        assert_eq!(stateless.code, ErrorCode::INVALID_PARAMS);
        // The owner still sees it running, and can cancel it.
        assert_eq!(
            alice.client.get_task(&id).await.unwrap().task.task.status,
            TaskStatus::Working
        );
        alice.client.cancel_task(&id).await.unwrap();
        assert_eq!(
            alice.client.get_task(&id).await.unwrap().task.task.status,
            TaskStatus::Cancelled
        );
    })
    .await;
}

#[tokio::test]
async fn cancelling_a_finished_task_is_acknowledged_and_changes_nothing() {
    within("cancel finished", async {
        let pair = TestPair::connect(server(Duration::from_secs(60)), with_tasks())
            .await
            .unwrap();
        let id = start_task(&pair.client, "quick").await;
        let result = pair.client.wait_task(&id, |_| {}).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("quick done"));
        pair.client.cancel_task(&id).await.unwrap();
        let task = pair.client.get_task(&id).await.unwrap();
        assert_eq!(task.task.task.status, TaskStatus::Completed);
        assert!(task.task.result.is_some());
    })
    .await;
}

#[tokio::test]
async fn a_result_fetched_after_its_ttl_says_the_task_expired() {
    within("expired", async {
        let pair = TestPair::connect(server(Duration::from_millis(300)), with_tasks())
            .await
            .unwrap();
        let id = start_task(&pair.client, "quick").await;
        let handle_ttl = pair.client.get_task(&id).await.unwrap().task.task.ttl_ms;
        assert_eq!(handle_ttl, Some(300));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let e = rpc(pair.client.get_task(&id).await.unwrap_err());
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("expired"), "{}", e.message);
        // A task still running at its TTL is stopped and gone too.
        let id = start_task(&pair.client, "slow").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let e = rpc(pair.client.get_task(&id).await.unwrap_err());
        assert!(e.message.contains("expired"), "{}", e.message);
        pair.client.peer().request::<Ping>(&Default::default()).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn without_the_extension_task_methods_and_task_only_tools_need_it() {
    within("not negotiated", async {
        let pair = TestPair::connect(server(Duration::from_secs(60)), Client::builder())
            .await
            .unwrap();
        for method in ["tasks/get", "tasks/cancel"] {
            let e = raw_error(
                &pair.client,
                method,
                json!({ "taskId": "0123456789abcdef0123456789abcdef" }),
            )
            .await;
            assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "{method}");
        }
        let e = raw_error(&pair.client, "tools/call", json!({ "name": "only_task" })).await;
        assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            e.data.unwrap()["requiredCapabilities"]["extensions"][ID],
            json!({}),
            "the error names the extension"
        );
        // A task-capable tool runs as a plain call for this client.
        let r = raw_error(&pair.client, "tasks/result", json!({ "taskId": "x" })).await;
        assert_eq!(
            r.code,
            ErrorCode::METHOD_NOT_FOUND,
            "tasks/result is not part of the extension"
        );
        let r = raw_error(&pair.client, "tasks/list", json!({})).await;
        assert_eq!(
            r.code,
            ErrorCode::METHOD_NOT_FOUND,
            "tasks/list is not part of the extension"
        );
        assert_eq!(
            pair.client.call_tool("quick", ()).await.unwrap().content[0].as_text(),
            Some("quick done")
        );
        // The call_tool helper runs a task-only tool as a task by itself.
        assert_eq!(
            pair.client.call_tool("only_task", ()).await.unwrap().content[0].as_text(),
            Some("ran")
        );
    })
    .await;
}

#[tokio::test]
async fn task_ids_are_unguessable() {
    within("ids", async {
        let pair = TestPair::connect(server(Duration::from_secs(60)), with_tasks())
            .await
            .unwrap();
        let mut seen = HashSet::new();
        for _ in 0..100 {
            let id = start_task(&pair.client, "quick").await;
            assert_eq!(id.len(), 32, "128 random bits, hex: {id}");
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
            assert!(seen.insert(id), "ids never repeat");
        }
    })
    .await;
}
