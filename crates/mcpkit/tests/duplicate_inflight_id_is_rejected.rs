//! A request whose id is already in flight on the connection is answered -32600 (with that id)
//! and not run; the original request still completes normally. `"1"` and `1` are different ids.

use crate::common;

use std::sync::Arc;

use common::{assert_error, within, Wire};
use mcpkit::server::{State, ToolDef};
use mcpkit::Server;
use serde_json::json;
use tokio::sync::{mpsc, Semaphore};

struct Gate {
    started: mpsc::UnboundedSender<()>,
    open: Semaphore,
}

fn server() -> (Server, mpsc::UnboundedReceiver<()>, Arc<Gate>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let gate = Arc::new(Gate {
        started: tx,
        open: Semaphore::new(0),
    });
    let server = Server::builder()
        .state(gate.clone())
        .tool(ToolDef::new("wait", |State(gate): State<Arc<Gate>>| async move {
            let _ = gate.started.send(());
            gate.open.acquire().await.unwrap().forget();
            "opened"
        }))
        .build();
    (server, rx, gate)
}

#[tokio::test]
async fn a_duplicate_in_flight_id_gets_invalid_request_and_the_original_completes() {
    let (server, mut started, gate) = server();
    let mut w = Wire::serve(&server);
    w.initialize().await;
    let wait =
        |id: serde_json::Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "wait"}});
    w.send_json(&wait(json!(1))).await;
    within("the tool to start", started.recv()).await.unwrap();

    // Same id, any method: rejected with the id, and the handler does not run again.
    let reply = w.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    assert_error(&reply, -32600, &json!(1));
    let reply = w.request(&wait(json!(1))).await;
    assert_error(&reply, -32600, &json!(1));
    assert!(started.try_recv().is_err(), "the duplicate request ran");

    // "1" is another id: it is served.
    let reply = w.request(&json!({"jsonrpc": "2.0", "id": "1", "method": "ping"})).await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": "1", "result": {}}));

    // The original completes normally, exactly once.
    gate.open.add_permits(1);
    let reply = w.recv().await;
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "opened");
    w.assert_silent_then_ping("the original request's reply").await;
}

#[tokio::test]
async fn an_id_can_be_used_again_once_its_request_is_answered() {
    let (server, mut started, gate) = server();
    let mut w = Wire::serve(&server);
    w.initialize().await;
    for round in 0..3 {
        w.send(r#"{"jsonrpc":"2.0","id":"job","method":"tools/call","params":{"name":"wait"}}"#)
            .await;
        within("the tool to start", started.recv()).await.unwrap();
        gate.open.add_permits(1);
        let reply = w.recv().await;
        assert_eq!(reply["id"], "job", "round {round}: {reply}");
        assert!(reply.get("result").is_some(), "round {round}: {reply}");
    }
}
