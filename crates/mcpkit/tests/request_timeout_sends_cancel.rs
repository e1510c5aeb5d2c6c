//! A request that outlives its timeout fails with `Error::Timeout`, and the server is told with
//! `notifications/cancelled` (its handler's token fires, it sends nothing). Progress can keep a
//! request alive when asked to, and a late response after a timeout is ignored.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{within, Wire};
use mcpkit::client::CallOptions;
use mcpkit::server::{RequestContext, State, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::transport::memory;
use mcpkit::{Client, Error, PeerOptions, Server};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

struct Probe(mpsc::UnboundedSender<CancellationToken>);

fn server() -> (Server, mpsc::UnboundedReceiver<CancellationToken>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let server = Server::builder()
        .state(Arc::new(Probe(tx)))
        .tool(ToolDef::new(
            "slow",
            |token: CancellationToken, State(probe): State<Arc<Probe>>| async move {
                let _ = probe.0.send(token);
                tokio::time::sleep(Duration::from_secs(60)).await;
                "finished"
            },
        ))
        // 30 progress steps 20 ms apart: 600 ms in all, never more than 20 ms between signs of life.
        .tool(ToolDef::new("steady", |cx: RequestContext| async move {
            for i in 1..=30 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                cx.progress(f64::from(i), Some(30.0), None);
            }
            "steady"
        }))
        .build();
    (server, rx)
}

fn cancels_for(pair: &TestPair) -> Vec<Value> {
    pair.server_received()
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .filter(|v| v["method"] == "notifications/cancelled")
        .collect()
}

fn slow_id(pair: &TestPair) -> Value {
    pair.server_received()
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .find(|v| v["method"] == "tools/call" && v["params"]["name"] == "slow")
        .map(|v| v["id"].clone())
        .expect("the slow call reached the server")
}

#[tokio::test]
async fn a_call_timeout_fails_the_call_and_cancels_it_on_the_server() {
    let (server, mut started) = server();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    let options = CallOptions {
        timeout: Some(Duration::from_millis(50)),
        ..Default::default()
    };
    let e = within("the slow call", pair.client.call_tool_with("slow", (), options))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Timeout(d) if d == Duration::from_millis(50)),
        "{e:?}"
    );
    let token = within("the tool to start", started.recv()).await.unwrap();
    within("the handler's token to fire", token.cancelled()).await;
    within("ping", pair.client.ping()).await.unwrap();
    let cancels = cancels_for(&pair);
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["params"]["requestId"], slow_id(&pair));
    let id = slow_id(&pair);
    assert!(
        !pair.server_sent().iter().any(|f| {
            let v: Value = serde_json::from_str(f).unwrap();
            v.get("method").is_none() && v["id"] == id
        }),
        "the server answered the timed-out request"
    );
}

#[tokio::test]
async fn the_connection_default_timeout_applies_to_every_request() {
    let (server, mut started) = server();
    let client = Client::builder().peer_options(PeerOptions {
        request_timeout: Some(Duration::from_millis(50)),
        ..Default::default()
    });
    let pair = within("connect", TestPair::connect(server, client)).await.unwrap();
    let e = within("the slow call", pair.client.call_tool("slow", ()))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Timeout(_)), "{e:?}");
    let token = within("the tool to start", started.recv()).await.unwrap();
    within("the handler's token to fire", token.cancelled()).await;
    // A per-call timeout overrides the default.
    let options = CallOptions {
        timeout: Some(Duration::from_secs(5)),
        ..Default::default()
    };
    let r = within("steady", pair.client.call_tool_with("steady", (), options))
        .await
        .unwrap();
    assert!(!r.is_error());
}

#[tokio::test]
async fn progress_resets_the_timeout_only_when_asked() {
    let (server, _started) = server();
    let pair = within("connect", TestPair::connect(server, Client::builder()))
        .await
        .unwrap();
    // 600 ms of work with a 200 ms timeout: fails without resets …
    let (tx, _rx) = mpsc::unbounded_channel();
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        reset_timeout_on_progress: false,
        progress: Some(tx),
    };
    let e = within("steady, no reset", pair.client.call_tool_with("steady", (), options))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Timeout(_)), "{e:?}");
    // … and succeeds when every progress notification restarts the clock.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        reset_timeout_on_progress: true,
        progress: Some(tx),
    };
    let r = within("steady, reset", pair.client.call_tool_with("steady", (), options))
        .await
        .unwrap();
    assert!(!r.is_error());
    let mut n = 0;
    while rx.try_recv().is_ok() {
        n += 1;
    }
    assert!(n >= 25, "only {n} progress notifications reached the caller");
}

/// A response that arrives after the caller gave up is dropped quietly; the client goes on.
#[tokio::test]
async fn a_late_response_after_a_timeout_is_ignored() {
    let (a, b) = memory::pair();
    let mut server = Wire::from_transport(b, None);
    let connect = tokio::spawn(Client::builder().connect(a));
    let init = server.recv().await;
    assert_eq!(init["method"], "initialize");
    server
        .send_json(&json!({"jsonrpc": "2.0", "id": init["id"], "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"}
        }}))
        .await;
    let client = within("connect", connect).await.unwrap().unwrap();
    assert_eq!(server.recv().await["method"], "notifications/initialized");

    let options = CallOptions {
        timeout: Some(Duration::from_millis(30)),
        ..Default::default()
    };
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool_with("slow", (), options).await }
    });
    let request = server.recv().await;
    assert_eq!(request["method"], "tools/call");
    let cancel = server.recv().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], request["id"]);
    let e = within("the timed-out call", call).await.unwrap().unwrap_err();
    assert!(matches!(e, Error::Timeout(_)), "{e:?}");

    // The late answer, then a ping that must still work.
    server
        .send_json(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}}))
        .await;
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let p = server.recv().await;
    assert_eq!(p["method"], "ping");
    server
        .send_json(&json!({"jsonrpc": "2.0", "id": p["id"], "result": {}}))
        .await;
    within("ping", ping).await.unwrap().unwrap();
}
