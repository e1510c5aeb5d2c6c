//! Tasks extension (SEP-2663 "Task Status Notifications"): `notifications/tasks` carries the
//! complete task, as `tasks/get` would answer it, to the caller that declared the extension.
//! Stateless era: on a `subscriptions/listen` stream whose filter names the task; the
//! acknowledgement lists the ids honoured (not unknown ones), the first notification is the
//! task's state then, the next its end with the result, each tagged with the subscription id;
//! naming tasks without declaring the extension is -32021. Handshake era: pushed to the session
//! the task runs for when it declared the extension at `initialize`, and never to one that did
//! not. Raw frames over the in-memory transport.
#![cfg(feature = "server")]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{assert_error, within, Wire};
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::ToolDef;
use mcpkit::types::schema::TaskSupport;
use mcpkit::Server;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

const V: &str = "2026-07-28";
const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A server whose task-capable tool `gate` finishes when the test releases it.
fn server(gate: Arc<Semaphore>) -> Server {
    Server::builder()
        .extension(Tasks::new(
            TasksConfig::default().poll_interval(Duration::from_secs(60)),
        ))
        .tool(
            ToolDef::new("gate", move || {
                let gate = gate.clone();
                async move {
                    let _permit = gate.acquire().await;
                    "released"
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .build()
}

fn meta(declare: bool) -> Value {
    let caps = if declare {
        json!({"extensions": {TASKS: {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}

/// Start `gate` as a task on the stateless wire; its id.
async fn start_stateless(wire: &mut Wire, id: i64) -> String {
    let reply = wire
        .request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "gate", "arguments": {}, "_meta": meta(true)}}))
        .await;
    assert_eq!(reply["result"]["resultType"], "task", "{reply}");
    reply["result"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_listen_stream_naming_a_task_carries_its_state_then_its_end() {
    within("a listen stream naming a task carries its state then its end", async {
        let gate = Arc::new(Semaphore::new(0));
        let mut wire = Wire::serve(&server(gate.clone()));
        let task = start_stateless(&mut wire, 1).await;
        let unknown = "0123456789abcdef0123456789abcdef";
        wire.send_json(&json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task, unknown, "not-an-id"]}, "_meta": meta(true)}}))
            .await;
        let ack = wire.recv().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        assert_eq!(ack["params"]["notifications"], json!({"taskIds": [task]}), "{ack}");
        assert_eq!(ack["params"]["_meta"][SUB_ID], 2, "{ack}");

        let now = wire.recv().await;
        assert_eq!(now["method"], "notifications/tasks", "{now}");
        assert_eq!(now["params"]["taskId"], task.as_str(), "{now}");
        assert_eq!(now["params"]["status"], "working", "{now}");
        assert_eq!(now["params"]["_meta"][SUB_ID], 2, "{now}");
        assert!(
            now["params"]["createdAt"].is_string() && now["params"]["ttlMs"].is_u64(),
            "{now}"
        );

        gate.add_permits(1);
        let end = wire.recv().await;
        assert_eq!(end["method"], "notifications/tasks", "{end}");
        assert_eq!(end["params"]["status"], "completed", "{end}");
        assert_eq!(end["params"]["result"]["content"][0]["text"], "released", "{end}");
        assert_eq!(end["params"]["_meta"][SUB_ID], 2, "{end}");
        assert!(end["params"].get("resultType").is_none(), "{end}");

        // What the notification carried is what tasks/get answers.
        let got = wire
            .request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                "params": {"taskId": task, "_meta": meta(true)}}))
            .await;
        for key in [
            "taskId",
            "status",
            "createdAt",
            "lastUpdatedAt",
            "ttlMs",
            "pollIntervalMs",
            "result",
        ] {
            assert_eq!(got["result"][key], end["params"][key], "{key}: {got} vs {end}");
        }
        // The stream stays open for other kinds; ending it (cancel) sends nothing.
        wire.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "_meta": meta(true)}}))
            .await;
        wire.assert_silent_then_ping("the end of the task and of the stream")
            .await;
    })
    .await;
}

#[tokio::test]
async fn a_task_that_ended_before_the_listen_is_told_once() {
    within("a task that ended before the listen is told once", async {
        let gate = Arc::new(Semaphore::new(0));
        let mut wire = Wire::serve(&server(gate.clone()));
        let task = start_stateless(&mut wire, 1).await;
        gate.add_permits(1);
        loop {
            let got = wire
                .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                    "params": {"taskId": task, "_meta": meta(true)}}))
                .await;
            if got["result"]["status"] == "completed" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        wire.send_json(&json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": [task]}, "_meta": meta(true)}}))
            .await;
        let ack = wire.recv().await;
        assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task]), "{ack}");
        let end = wire.recv().await;
        assert_eq!(end["params"]["status"], "completed", "{end}");
        wire.assert_silent_then_ping("the one notification of an ended task")
            .await;
    })
    .await;
}

#[tokio::test]
async fn naming_tasks_without_declaring_the_extension_is_refused() {
    within("naming tasks without declaring the extension is refused", async {
        let gate = Arc::new(Semaphore::new(0));
        let mut wire = Wire::serve(&server(gate.clone()));
        let task = start_stateless(&mut wire, 1).await;
        let reply = wire
            .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                "params": {"notifications": {"taskIds": [task]}, "_meta": meta(false)}}))
            .await;
        assert_error(&reply, -32021, &json!(2));
        assert_eq!(
            reply["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
            json!({}),
            "{reply}"
        );
        // A listen that names no task is the core one, declared or not.
        wire.send_json(&json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": true}, "_meta": meta(false)}}))
            .await;
        let ack = wire.recv().await;
        assert_eq!(
            ack["params"]["notifications"],
            json!({"toolsListChanged": true}),
            "{ack}"
        );
        gate.add_permits(1);
        wire.assert_silent_then_ping("a task ending with no stream naming it")
            .await;
    })
    .await;
}

/// Start `gate` as a task on a handshake-era session; its id.
async fn start_on_session(wire: &mut Wire, declared_at_initialize: bool) -> String {
    let caps = if declared_at_initialize {
        json!({"extensions": {TASKS: {}}})
    } else {
        json!({})
    };
    wire.initialize_as("2025-11-25", caps).await;
    let reply = wire
        .request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "gate", "arguments": {},
                "_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}}}))
        .await;
    assert_eq!(reply["result"]["resultType"], "task", "{reply}");
    reply["result"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_session_that_declared_the_extension_hears_its_task_end() {
    within("a session that declared the extension hears its task end", async {
        let gate = Arc::new(Semaphore::new(0));
        let mut wire = Wire::serve(&server(gate.clone()));
        let task = start_on_session(&mut wire, true).await;
        gate.add_permits(1);
        let end = wire.recv().await;
        assert_eq!(end["method"], "notifications/tasks", "{end}");
        assert_eq!(end["params"]["taskId"], task.as_str(), "{end}");
        assert_eq!(end["params"]["status"], "completed", "{end}");
        assert_eq!(end["params"]["result"]["content"][0]["text"], "released", "{end}");
        assert!(end.get("id").is_none(), "{end}");
    })
    .await;
}

#[tokio::test]
async fn a_session_that_did_not_declare_the_extension_hears_nothing() {
    within("a session that did not declare the extension hears nothing", async {
        let gate = Arc::new(Semaphore::new(0));
        let mut wire = Wire::serve(&server(gate.clone()));
        let task = start_on_session(&mut wire, false).await;
        gate.add_permits(1);
        loop {
            let got = wire
                .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                    "params": {"taskId": task,
                        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}}}))
                .await;
            if got["result"]["status"] == "completed" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        wire.assert_silent_then_ping("the end of a task of a session that did not declare tasks")
            .await;
    })
    .await;
}
