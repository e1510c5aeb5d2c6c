//! Tasks extension (SEP-2663): a task outlives the request that made it. Over HTTP on the
//! stateless wire, the client that started a task disconnects; another connection fetches the
//! task, answers its input request and gets its result. On a handshake-era session the call that
//! made the task is long answered when the result is fetched. Progress is kept on the task.
#![cfg(all(
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::http::Served;
use common::within;
use mcpkit::client::tasks::{task_progress, ToolOutcome};
use mcpkit::client::{CallOptions, ConnectMode};
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::http::HttpServer;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ext::tasks::ID;
use mcpkit::types::schema::{ElicitParams, ElicitResult, ElicitationSchema, JsonObject, TaskStatus, TaskSupport};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, ClientBuilder, Server};
use serde_json::json;

fn server() -> Server {
    Server::builder()
        .extension(Tasks::new(
            TasksConfig::default().poll_interval(Duration::from_millis(20)),
        ))
        .tool(
            ToolDef::new("ask_then_work", |cx: RequestContext| async move {
                let schema: JsonObject = serde_json::from_value(json!({
                    "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"]
                }))
                .unwrap();
                let answer = cx
                    .elicit(ElicitParams::form("Your name?", ElicitationSchema(schema)))
                    .await?;
                for i in 0..3 {
                    cx.progress(f64::from(i), Some(3.0), Some("working"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
                Ok::<_, mcpkit::Error>(format!("hello {}", name.as_str().unwrap_or("?")))
            })
            .task_support(TaskSupport::Optional),
        )
        .build()
}

fn builder(name: &'static str) -> ClientBuilder {
    Client::builder()
        .extension(ID, JsonObject::new())
        .on_elicitation(move |_p| async move {
            let mut content = JsonObject::new();
            content.insert("name".into(), json!(name));
            Ok(ElicitResult::accept(content))
        })
}

async fn connect(url: &str, b: ClientBuilder) -> Client {
    within("connect", b.connect(HttpClientTransport::new(url).unwrap()))
        .await
        .unwrap()
}

#[tokio::test]
async fn another_connection_finishes_a_task_whose_client_disconnected() {
    within("outlive stateless", async {
        let served = Served::start(HttpServer::new(server())).await;
        let pinned = |b: ClientBuilder| b.mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28));
        let first = connect(&served.url, pinned(builder("first"))).await;
        let id = match first
            .call_tool_as_task("ask_then_work", (), CallOptions::default())
            .await
            .unwrap()
        {
            ToolOutcome::Task(h) => h.task.task_id,
            other => panic!("expected a task: {other:?}"),
        };
        first.close().await.unwrap();
        drop(first);

        let second = connect(&served.url, pinned(builder("second"))).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let result = second
            .wait_task(&id, move |t| {
                log.lock().unwrap().push((t.task.task.status, task_progress(t)))
            })
            .await
            .unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello second"));
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.iter().any(|(s, _)| *s == TaskStatus::InputRequired),
            "it asked: {seen:?}"
        );
        assert!(
            seen.iter().any(|(_, p)| p.is_some()),
            "progress is kept on the task: {seen:?}"
        );
        // The result stays fetchable.
        let again = second.get_task(&id).await.unwrap();
        assert_eq!(again.task.task.status, TaskStatus::Completed);
    })
    .await;
}

#[tokio::test]
async fn a_handshake_session_fetches_the_result_after_its_call_was_answered() {
    within("outlive handshake", async {
        let served = Served::start(HttpServer::new(server())).await;
        let client = connect(&served.url, builder("session")).await;
        let id = match client
            .call_tool_as_task("ask_then_work", (), CallOptions::default())
            .await
            .unwrap()
        {
            ToolOutcome::Task(h) => h.task.task_id,
            other => panic!("expected a task: {other:?}"),
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let result = client.wait_task(&id, |_| {}).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some("hello session"));
        // The plain helper does the same in one call.
        let r = client.call_tool("ask_then_work", ()).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("hello session"));
    })
    .await;
}
