//! Three instances of the reference server, each an `HttpServer` with its own Redis backends
//! (`mcpkit_redis::RedisBackends`, one real Redis), behind HAProxy: a handshake-era client
//! subscribes to `test://watched-resource` through the balancer, and an update of that
//! resource announced by any of the three instances reaches it once; an update of a resource it
//! did not subscribe to does not, nor any after it unsubscribed. (The reference server has no
//! tool that updates a resource, so the instances run in this process, where the test holds
//! their `Server` handles.)

use crate::cluster_wire;

use std::net::SocketAddr;
use std::time::Duration;

use mcpkit::client::ServerNotification;
use mcpkit::server::http::HttpServer;
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::haproxy::Balancer;
use mcpkit_test_support::redis::RedisProcess;
use tokio::sync::broadcast;

const WATCHED: &str = "test://watched-resource";

/// A reference server on shared Redis backends, serving on a free port; its handle and address.
async fn instance(redis: &str, id: &str) -> (mcpkit::Server, SocketAddr) {
    let server = mcpkit_cli::reference::server();
    let backends = RedisBackends::connect(redis, "mcpkit", id).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(server.clone()).scale_out(backends).serve(listener));
    (server, addr)
}

/// The next resource update, or `None` when none arrives within `wait`.
async fn next_update(notes: &mut broadcast::Receiver<ServerNotification>, wait: Duration) -> Option<String> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::ResourceUpdated(p))) => return Some(p.uri),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("notification stream: {e}"),
            Err(_) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_on_any_instance_reaches_the_subscribed_session_once() {
    let redis = RedisProcess::start();
    let mut servers = Vec::new();
    let mut backends = Vec::new();
    for n in 1..=3 {
        let id = format!("i{n}");
        let (server, addr) = instance(&redis.url(), &id).await;
        servers.push(server);
        backends.push((id, addr));
    }
    // Blocking: the instances answer HAProxy's health checks on the runtime meanwhile.
    let balancer = tokio::task::spawn_blocking(move || Balancer::start(&backends))
        .await
        .unwrap();
    let client = cluster_wire::handshake_client(&balancer.url()).await;
    let mut notes = client.notifications();
    client.subscribe(WATCHED).await.unwrap();

    for (n, server) in servers.iter().enumerate() {
        server.notify_resource_updated(WATCHED);
        let got = next_update(&mut notes, Duration::from_secs(10)).await;
        assert_eq!(got.as_deref(), Some(WATCHED), "the update announced by i{}", n + 1);
        // Once: the other instances do not deliver it again.
        assert_eq!(next_update(&mut notes, Duration::from_millis(300)).await, None);
    }
    // Not subscribed: nothing.
    servers[1].notify_resource_updated("test://static-text");
    assert_eq!(next_update(&mut notes, Duration::from_millis(500)).await, None);

    client.unsubscribe(WATCHED).await.unwrap();
    for server in &servers {
        server.notify_resource_updated(WATCHED);
    }
    assert_eq!(
        next_update(&mut notes, Duration::from_millis(800)).await,
        None,
        "after unsubscribe"
    );
    let served: std::collections::BTreeSet<String> = balancer
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.server)
        .collect();
    assert!(served.len() >= 2, "the session's requests were spread: {served:?}");
}
