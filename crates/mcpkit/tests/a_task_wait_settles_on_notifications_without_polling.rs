//! Tasks extension, client side: `Client::wait_task` settles on the server's status
//! notifications (SEP-2663 `notifications/tasks`) without polling, and falls back to polling
//! when none come. The server suggests a 60 s poll interval, so a client that polled would
//! still be waiting; the frames the server read show one `tasks/get` (the first look) and no
//! more. Stateless era (a `subscriptions/listen` naming the task) and handshake era (a session
//! that declared the extension) over the in-memory pair, and the handshake era over real HTTP
//! (the notification travels on the session's GET stream).
#![cfg(all(
    feature = "client",
    feature = "server",
    feature = "http-client",
    feature = "http-server"
))]

use crate::common;

use std::time::{Duration, Instant};

use common::http::Served;
use common::within;
use mcpkit::client::tasks::ToolOutcome;
use mcpkit::client::{CallOptions, ConnectMode};
use mcpkit::server::extensions::tasks::{Tasks, TasksConfig};
use mcpkit::server::http::HttpServer;
use mcpkit::server::ToolDef;
use mcpkit::testing::TestPair;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ext::tasks::ID;
use mcpkit::types::schema::{JsonObject, TaskSupport};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, ClientBuilder, Server};

fn server(poll_interval: Duration) -> Server {
    Server::builder()
        .extension(Tasks::new(TasksConfig::default().poll_interval(poll_interval)))
        .tool(
            ToolDef::new("slow", || async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                "slow done"
            })
            .task_support(TaskSupport::Optional),
        )
        .build()
}

fn declaring() -> ClientBuilder {
    Client::builder().extension(ID, JsonObject::new())
}

/// Start `slow` as a task and wait for it; the result's text and how long the wait took.
async fn start_and_wait(client: &Client) -> (String, Duration) {
    let id = match client
        .call_tool_as_task("slow", (), CallOptions::default())
        .await
        .unwrap()
    {
        ToolOutcome::Task(h) => h.task.task_id,
        other => panic!("expected a task: {other:?}"),
    };
    let started = Instant::now();
    let result = client.wait_task(&id, |_| {}).await.unwrap();
    let text = result.content[0].as_text().unwrap().to_owned();
    (text, started.elapsed())
}

fn gets(pair: &TestPair) -> usize {
    pair.server_received()
        .iter()
        .filter(|f| f.contains(r#""method":"tasks/get""#))
        .count()
}

#[tokio::test]
async fn the_stateless_wire_settles_on_a_listen_stream() {
    within("stateless wait", async {
        let client = declaring().mode(ConnectMode::Pinned(ProtocolVersion::V2026_07_28));
        let pair = TestPair::connect(server(Duration::from_secs(60)), client)
            .await
            .unwrap();
        let (text, took) = start_and_wait(&pair.client).await;
        assert_eq!(text, "slow done");
        assert!(took < Duration::from_secs(20), "it waited {took:?}: it polled");
        assert_eq!(
            gets(&pair),
            1,
            "one look, then notifications: {:?}",
            pair.server_received()
        );
        assert!(
            pair.server_received()
                .iter()
                .any(|f| f.contains("subscriptions/listen") && f.contains("taskIds")),
            "it listened for the task"
        );
    })
    .await;
}

#[tokio::test]
async fn a_session_that_declared_the_extension_settles_on_pushed_notifications() {
    within("handshake wait", async {
        let pair = TestPair::connect(server(Duration::from_secs(60)), declaring())
            .await
            .unwrap();
        let (text, took) = start_and_wait(&pair.client).await;
        assert_eq!(text, "slow done");
        assert!(took < Duration::from_secs(20), "it waited {took:?}: it polled");
        assert_eq!(
            gets(&pair),
            1,
            "one look, then notifications: {:?}",
            pair.server_received()
        );
    })
    .await;
}

#[tokio::test]
async fn without_notifications_the_wait_polls() {
    within("polling wait", async {
        // The client did not declare the extension at initialize: the server pushes nothing.
        let pair = TestPair::connect(server(Duration::from_millis(50)), Client::builder())
            .await
            .unwrap();
        let (text, _) = start_and_wait(&pair.client).await;
        assert_eq!(text, "slow done");
        assert!(gets(&pair) >= 3, "it polled: {} tasks/get", gets(&pair));
        assert!(
            !pair.server_sent().iter().any(|f| f.contains("notifications/tasks")),
            "nothing was pushed to a session that did not declare the extension"
        );
    })
    .await;
}

#[tokio::test]
async fn over_http_the_notification_comes_on_the_get_stream() {
    within("http handshake wait", async {
        let served = Served::start(HttpServer::new(server(Duration::from_secs(60)))).await;
        let client = declaring()
            .connect(HttpClientTransport::new(&served.url).unwrap())
            .await
            .unwrap();
        let (text, took) = start_and_wait(&client).await;
        assert_eq!(text, "slow done");
        assert!(took < Duration::from_secs(20), "it waited {took:?}: it polled");
    })
    .await;
}
