//! Three `mcpkit serve --http --redis` instances behind HAProxy: a handshake-era session opened
//! through the balancer has its GET stream on one of them; the tool list is changed on each
//! instance in turn (a 2026-07-28 call straight to it), and the session's stream receives
//! every `notifications/tools/list_changed`, also the ones that two other instances published.
//! A 2026-07-28 `subscriptions/listen` stream receives them the same way.

use crate::cluster_wire;

use std::time::Duration;

use cluster_wire::{open_session, redis_cluster, stateless_client, EventStream, Next};
use mcpkit::client::ServerNotification;
use mcpkit::types::schema::SubscriptionFilter;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_any_instance_reaches_the_session_stream_wherever_it_is() {
    let (_redis, cluster) = redis_cluster();
    let url = cluster.balancer.url();
    let http = reqwest::Client::new();
    let session = open_session(&http, &url).await;
    let mut stream = EventStream::open(&http, &url, &session, None).await;
    let holder = cluster.balancer.open_streams().unwrap();
    assert_eq!(holder.len(), 1, "{holder:?}");

    // Each instance flips the deployment's dynamic-tool switch twice, in turn: six changes, two
    // per instance, four of them on instances that do not hold the stream. The switch is
    // shared, so each flip undoes the one before, whichever instance made it.
    for round in 0..2 {
        for (i, instance) in cluster.instances.iter().enumerate() {
            let direct = stateless_client(&instance.url()).await;
            let said = direct.call_tool("test_trigger_tool_change", ()).await.unwrap();
            let want = if (round * cluster.instances.len() + i) % 2 == 0 {
                "Added test_dynamic_tool"
            } else {
                "Removed test_dynamic_tool"
            };
            assert_eq!(said.content[0].as_text(), Some(want), "on {}", instance.id());
            match stream.next(Duration::from_secs(10)).await {
                Next::Event(e) => assert_eq!(
                    e.method().as_deref(),
                    Some("notifications/tools/list_changed"),
                    "from {} to the stream on {}: {e:?}",
                    instance.id(),
                    holder[0]
                ),
                other => panic!(
                    "list_changed from {} did not reach the stream on {}: {other:?}\n{}",
                    instance.id(),
                    holder[0],
                    cluster.stderr()
                ),
            }
        }
    }
    assert!(matches!(stream.next(Duration::from_millis(500)).await, Next::Quiet));
}

/// Whether a `notifications/tools/list_changed` arrives within 10 s (other notifications, such
/// as the subscription's acknowledgement, are skipped).
async fn next_list_changed(notes: &mut tokio::sync::broadcast::Receiver<ServerNotification>) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::ToolListChanged)) => return true,
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_any_instance_reaches_a_listen_stream_on_another() {
    let (_redis, cluster) = redis_cluster();
    let listener = stateless_client(&cluster.instances[0].url()).await;
    let mut notifications = listener.notifications();
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let subscription = listener.listen(filter).await.unwrap();
    for instance in &cluster.instances[1..] {
        let direct = stateless_client(&instance.url()).await;
        for _ in 0..2 {
            direct.call_tool("test_trigger_tool_change", ()).await.unwrap();
            assert!(
                next_list_changed(&mut notifications).await,
                "list_changed from {} did not reach the listen stream on i1",
                instance.id()
            );
        }
    }
    drop(subscription);
}
