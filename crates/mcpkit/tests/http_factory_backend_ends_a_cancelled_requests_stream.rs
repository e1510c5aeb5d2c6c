//! A session served by a [`SessionFactory`] backend (a gateway or proxy): when the backend drops
//! a request after the client cancels it, `SessionWriter::end_unanswered` ends that request's
//! response stream at once — the client is not left holding an open stream until the session
//! ends. Through the router, without a socket.
#![cfg(all(feature = "http-server", feature = "server"))]

use crate::common;

use std::sync::Arc;

use common::http::*;
use mcpkit::server::http::{HttpServer, SessionFactory, SessionTransport};
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Route, Transport};
use mcpkit::types::RequestId;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

/// Answers `initialize` and `ping`; on `tools/call` sends one progress notification on the call's stream
/// and never answers; on `notifications/cancelled` drops the call.
struct Backend;

impl SessionFactory for Backend {
    fn start(&self, _id: &str, transport: SessionTransport) -> CancellationToken {
        let stop = CancellationToken::new();
        let (mut reader, mut writer) = transport.split();
        tokio::spawn(async move {
            while let Ok(Some(Frame::Message(bytes))) = reader.read_frame().await {
                let message: Value = serde_json::from_slice(&bytes).unwrap();
                let id = || serde_json::from_value::<RequestId>(message["id"].clone()).unwrap();
                match message["method"].as_str() {
                    Some("initialize") => {
                        let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                            "protocolVersion": VERSION,
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "factory", "version": "0"}
                        }});
                        let frame = serde_json::to_vec(&reply).unwrap();
                        writer.write_routed(&frame, &Route::Reply(id())).await.unwrap();
                    }
                    Some("ping") => {
                        let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
                        let frame = serde_json::to_vec(&reply).unwrap();
                        writer.write_routed(&frame, &Route::Reply(id())).await.unwrap();
                    }
                    Some("tools/call") => {
                        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": "t", "progress": 1}});
                        let frame = serde_json::to_vec(&progress).unwrap();
                        writer.write_routed(&frame, &Route::Related(id())).await.unwrap();
                    }
                    Some("notifications/cancelled") => {
                        let cancelled = message["params"]["requestId"].clone();
                        writer.end_unanswered(&serde_json::from_value(cancelled).unwrap());
                    }
                    _ => {}
                }
            }
        });
        stop
    }
}

#[tokio::test]
async fn the_stream_of_a_cancelled_request_ends_without_a_reply() {
    let mcp = Mcp::router(HttpServer::with_factory(Arc::new(Backend)).router());
    let session = mcp.open_session().await;
    let call = send(mcp.post(Some(&session), progress_body(2, "hold", "t"))).await;
    let mut stream = SseReader::new(call);
    let progress = loop {
        let event = stream.next().await.expect("the progress notification");
        // A priming event (an id, no data) may come first.
        if let Some(data) = event.data.filter(|d| !d.is_empty()) {
            break serde_json::from_str::<Value>(&data).unwrap();
        }
    };
    assert_eq!(progress["method"], "notifications/progress");

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "the user stopped it"}});
    let accepted = send(mcp.post(Some(&session), cancel.to_string())).await;
    assert_eq!(accepted.status(), reqwest::StatusCode::ACCEPTED);

    // The stream ends (within the harness's wait), with nothing after the notification.
    let rest = stream.rest().await;
    assert!(
        rest.iter().all(|e| e.data.as_deref().unwrap_or("").is_empty()),
        "{rest:?}"
    );
    assert_eq!(stream.error, None);
    mcp.assert_serves(&session, "the cancelled call").await;
}
