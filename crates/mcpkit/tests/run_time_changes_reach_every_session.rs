//! One `Server` serving several connections: tools added or removed at run time are announced
//! to every initialized session (`notifications/tools/list_changed`) and visible to all of them;
//! `resources/updated` goes only to the sessions subscribed to that URI. Notifications reach the
//! client in the order they were sent.

use crate::common;

use common::within;
use mcpkit::client::ServerNotification;
use mcpkit::server::{RequestContext, ResourceDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::schema::LoggingLevel;
use mcpkit::{Client, Server};
use tokio::sync::broadcast;

fn server() -> Server {
    Server::builder()
        .enable_tools()
        .resource(ResourceDef::text("test://watched", "watched", "text/plain", "v1"))
        .tool(ToolDef::new("chatty", |cx: RequestContext| async move {
            for i in 0..200 {
                cx.log(LoggingLevel::Info, None, i).unwrap();
            }
            "said 200 things"
        }))
        .build()
}

async fn wait_for(rx: &mut broadcast::Receiver<ServerNotification>, what: &str, want: fn(&ServerNotification) -> bool) {
    within(what, async {
        loop {
            if want(&rx.recv().await.unwrap()) {
                return;
            }
        }
    })
    .await;
}

#[tokio::test]
async fn tool_changes_are_announced_to_every_session() {
    let server = server();
    let one = within("connect 1", TestPair::connect(server.clone(), Client::builder()))
        .await
        .unwrap();
    let two = within("connect 2", TestPair::connect(server.clone(), Client::builder()))
        .await
        .unwrap();
    // A request round trip on each, so both servers have handled `notifications/initialized`.
    within("ping 1", one.client.ping()).await.unwrap();
    within("ping 2", two.client.ping()).await.unwrap();
    let (mut n1, mut n2) = (one.client.notifications(), two.client.notifications());

    server.add_tool(ToolDef::new("late", || async { "late" }));
    for (rx, who) in [(&mut n1, "client 1"), (&mut n2, "client 2")] {
        wait_for(rx, who, |n| matches!(n, ServerNotification::ToolListChanged)).await;
    }
    for pair in [&one, &two] {
        let names: Vec<String> = within("list", pair.client.list_all_tools())
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert!(names.contains(&"late".to_owned()), "{names:?}");
        let r = within("late", pair.client.call_tool("late", ())).await.unwrap();
        assert!(!r.is_error());
    }
    assert!(server.remove_tool("late"));
    assert!(
        !server.remove_tool("late"),
        "removing twice reports that nothing was removed"
    );
    for (rx, who) in [(&mut n1, "client 1"), (&mut n2, "client 2")] {
        wait_for(rx, who, |n| matches!(n, ServerNotification::ToolListChanged)).await;
    }
    let e = within("removed", one.client.call_tool("late", ())).await.unwrap_err();
    assert!(e.rpc().is_some(), "{e:?}");
}

#[tokio::test]
async fn resource_updates_go_only_to_subscribed_sessions() {
    let server = server();
    let one = within("connect 1", TestPair::connect(server.clone(), Client::builder()))
        .await
        .unwrap();
    let two = within("connect 2", TestPair::connect(server.clone(), Client::builder()))
        .await
        .unwrap();
    let mut n1 = one.client.notifications();
    within("subscribe", one.client.subscribe("test://watched"))
        .await
        .unwrap();
    server.notify_resource_updated("test://watched");
    wait_for(
        &mut n1,
        "the update",
        |n| matches!(n, ServerNotification::ResourceUpdated(u) if u.uri == "test://watched"),
    )
    .await;
    within("ping 2", two.client.ping()).await.unwrap();
    let updates = |p: &TestPair| {
        p.server_sent()
            .iter()
            .filter(|f| f.contains("notifications/resources/updated"))
            .count()
    };
    assert_eq!(updates(&one), 1);
    assert_eq!(updates(&two), 0, "a session that never subscribed got the update");
}

#[tokio::test]
async fn notifications_reach_the_client_in_the_order_they_were_sent() {
    let pair = within("connect", TestPair::connect(server(), Client::builder()))
        .await
        .unwrap();
    let mut notes = pair.client.notifications();
    within("chatty", pair.client.call_tool("chatty", ())).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 200 {
        match within("log messages", notes.recv()).await.unwrap() {
            ServerNotification::Log(m) => seen.push(m.data.as_i64().unwrap()),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, (0..200).collect::<Vec<i64>>());
}
