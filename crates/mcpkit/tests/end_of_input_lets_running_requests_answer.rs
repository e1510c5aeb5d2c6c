//! When the other side ends its input (a client closes our stdin) while requests are still
//! running, they may finish and send their answers within the drain limit; the connection
//! ends as soon as the last one is done, and those still running at the limit are cancelled.

use std::sync::Arc;
use std::time::Duration;

use mcpkit::engine::{self, BoxFuture, HandlerResult, IncomingRequest, Peer, PeerOptions, Role};
use mcpkit::transport::memory;
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Transport};
use serde_json::value::RawValue;

/// Long enough that no test may wait for it.
const LONG: Duration = Duration::from_secs(60);

/// `slow` answers after a short wait, `never` waits forever.
struct Svc;

impl Role for Svc {
    fn handle_request(&self, _peer: Peer, request: IncomingRequest) -> BoxFuture<HandlerResult> {
        Box::pin(async move {
            match &*request.method {
                "slow" => tokio::time::sleep(Duration::from_millis(50)).await,
                _ => std::future::pending().await,
            }
            Ok(RawValue::from_string(format!("\"{}\"", request.method)).unwrap())
        })
    }

    fn handle_notification(&self, _peer: Peer, _method: String, _params: Option<Box<RawValue>>) -> BoxFuture<()> {
        Box::pin(async {})
    }
}

async fn step<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), fut)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

#[tokio::test]
async fn requests_running_at_end_of_input_still_answer_and_the_connection_ends_after_them() {
    let (client_end, server_end) = memory::pair();
    let options = PeerOptions {
        drain_timeout: LONG,
        ..PeerOptions::default()
    };
    let conn = engine::start(server_end, Arc::new(Svc), options);
    let (mut r, mut w) = client_end.split();
    w.write_frame(br#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#)
        .await
        .unwrap();
    w.write_frame(br#"{"jsonrpc":"2.0","id":2,"method":"slow"}"#)
        .await
        .unwrap();
    w.close().await.unwrap();
    let mut answers = Vec::new();
    for _ in 0..2 {
        match step("an answer", r.read_frame()).await.unwrap() {
            Some(Frame::Message(m)) => answers.push(String::from_utf8(m).unwrap()),
            other => panic!("expected an answer, got {other:?}"),
        }
    }
    assert!(answers.iter().all(|a| a.contains(r#""result":"slow""#)), "{answers:?}");
    // Not the drain limit: the connection ends once the last request has answered.
    step("the connection to end", conn.closed()).await.unwrap();
    assert!(step("end of output", r.read_frame()).await.unwrap().is_none());
}

#[tokio::test]
async fn requests_still_running_at_the_drain_limit_are_cancelled_without_an_answer() {
    let (client_end, server_end) = memory::pair();
    let options = PeerOptions {
        drain_timeout: Duration::from_millis(50),
        ..PeerOptions::default()
    };
    let conn = engine::start(server_end, Arc::new(Svc), options);
    let (mut r, mut w) = client_end.split();
    w.write_frame(br#"{"jsonrpc":"2.0","id":1,"method":"never"}"#)
        .await
        .unwrap();
    w.close().await.unwrap();
    step("the connection to end", conn.closed()).await.unwrap();
    assert!(step("end of output", r.read_frame()).await.unwrap().is_none());
}
