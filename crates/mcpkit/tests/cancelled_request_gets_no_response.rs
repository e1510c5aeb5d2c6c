//! MCP cancellation: when `notifications/cancelled` arrives for a request in flight, its
//! handler's cancellation token fires and no response is ever sent for it. Cancels for other ids
//! (including `"8"` for `8`) change nothing.

use crate::common;

use std::sync::Arc;

use common::{within, Wire};
use mcpkit::server::{State, ToolDef};
use mcpkit::{PeerOptions, Server};
use serde_json::json;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

/// What the `gate` tool reports: that it started (with its cancellation token), or that it got
/// through the gate.
#[derive(Debug)]
enum Event {
    Started(CancellationToken),
    Released,
}

/// Where the `gate` tool reports, and the gate it waits at.
struct Probe {
    events: mpsc::UnboundedSender<Event>,
    gate: Semaphore,
}

fn server(options: PeerOptions) -> (Server, mpsc::UnboundedReceiver<Event>, Arc<Probe>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let probe = Arc::new(Probe {
        events: tx,
        gate: Semaphore::new(0),
    });
    // `State` hands out an `Arc<Arc<Probe>>`; the test keeps its own clone to open the gate.
    let server = Server::builder()
        .state(probe.clone())
        .peer_options(options)
        .tool(ToolDef::new(
            "gate",
            |token: CancellationToken, State(probe): State<Arc<Probe>>| async move {
                let _ = probe.events.send(Event::Started(token.clone()));
                tokio::select! {
                    _ = token.cancelled() => "returned after being cancelled",
                    permit = probe.gate.acquire() => {
                        permit.unwrap().forget();
                        let _ = probe.events.send(Event::Released);
                        "released"
                    }
                }
            },
        ))
        .build();
    (server, rx, probe)
}

fn call(id: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "gate"}})
}

async fn started(rx: &mut mpsc::UnboundedReceiver<Event>) -> CancellationToken {
    match within("the tool to start", rx.recv()).await.unwrap() {
        Event::Started(token) => token,
        e => panic!("expected the tool to start, got {e:?}"),
    }
}

async fn released(rx: &mut mpsc::UnboundedReceiver<Event>) {
    match within("the tool to get through the gate", rx.recv()).await.unwrap() {
        Event::Released => {}
        e => panic!("expected the tool to get through, got {e:?}"),
    }
}

async fn fires(token: &CancellationToken) {
    within("the handler's cancellation token to fire", token.cancelled()).await;
}

#[tokio::test]
async fn a_cancelled_request_fires_its_token_and_gets_no_response() {
    let (server, mut events, _probe) = server(PeerOptions::default());
    let mut w = Wire::serve(&server);
    w.initialize().await;
    w.send_json(&call(json!(7))).await;
    let token = started(&mut events).await;
    assert!(!token.is_cancelled());
    w.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#)
        .await;
    fires(&token).await;
    w.assert_silent_then_ping("a cancelled request").await;
    w.assert_silent_then_ping("a cancelled request, again").await;
    // The id is free again: a new request with it is served normally.
    w.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#)
        .await;
    w.assert_silent_then_ping("a second cancel for the same id").await;
}

#[tokio::test]
async fn a_cancel_for_a_different_id_or_id_type_cancels_nothing() {
    let (server, mut events, probe) = server(PeerOptions::default());
    let mut w = Wire::serve(&server);
    w.initialize().await;
    w.send_json(&call(json!(8))).await;
    let token = started(&mut events).await;
    for cancel in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"8"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"no id"}}"#,
    ] {
        w.send(cancel).await;
        w.assert_silent_then_ping(cancel).await;
    }
    assert!(!token.is_cancelled(), "a cancel for another id fired the token");
    probe.gate.add_permits(1);
    released(&mut events).await;
    let reply = w.recv().await;
    assert_eq!(reply["id"], 8, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "released");
}

#[tokio::test]
async fn string_and_integer_ids_are_cancelled_separately() {
    let (server, mut events, probe) = server(PeerOptions::default());
    let mut w = Wire::serve(&server);
    w.initialize().await;
    w.send_json(&call(json!("10"))).await;
    let string_token = started(&mut events).await;
    w.send_json(&call(json!(10))).await;
    let integer_token = started(&mut events).await;
    w.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"10"}}"#)
        .await;
    fires(&string_token).await;
    w.assert_silent_then_ping("cancelling \"10\"").await;
    assert!(!integer_token.is_cancelled(), "cancelling \"10\" cancelled 10");
    probe.gate.add_permits(1);
    released(&mut events).await;
    let reply = w.recv().await;
    assert_eq!(reply["id"], json!(10), "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");
}

/// A request cancelled while it waits for a concurrency slot is never answered either.
#[tokio::test]
async fn a_request_cancelled_while_queued_gets_no_response() {
    let options = PeerOptions {
        max_concurrent_requests: 1,
        ..Default::default()
    };
    let (server, mut events, probe) = server(options);
    let mut w = Wire::serve(&server);
    w.initialize().await;
    w.send_json(&call(json!(20))).await;
    started(&mut events).await;
    // 21 waits for 20's slot; cancel it there.
    w.send_json(&call(json!(21))).await;
    w.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":21}}"#)
        .await;
    probe.gate.add_permits(1);
    let reply = w.recv().await;
    assert_eq!(reply["id"], 20, "{reply}");
    // The slot is free again and 21 must stay silent; a ping takes the slot next.
    w.assert_silent_then_ping("a request cancelled in the queue").await;
    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(e);
    }
    let through = seen.iter().filter(|e| matches!(e, Event::Released)).count();
    assert_eq!(through, 1, "the cancelled request took the gate too: {seen:?}");
}
