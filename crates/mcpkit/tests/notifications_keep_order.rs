//! Notifications are handled one at a time in arrival order, also when a handler has to wait:
//! later notifications (even ones whose handlers would complete at once) queue behind it. And a
//! request whose handler completes at once is answered while an earlier one still waits.

use crate::common;

use std::sync::{Arc, Mutex};

use common::within;
use mcpkit::engine::{self, BoxFuture, HandlerResult, IncomingRequest, Peer, PeerOptions, Role};
use mcpkit::transport::memory;
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Transport};
use serde_json::value::RawValue;
use tokio::sync::Notify;

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<String>>,
    release: Notify,
}

struct Svc(Arc<Recorder>);

impl Role for Svc {
    fn handle_request(&self, _peer: Peer, request: IncomingRequest) -> BoxFuture<HandlerResult> {
        let rec = self.0.clone();
        Box::pin(async move {
            if request.method == "wait" {
                rec.release.notified().await;
            }
            Ok(RawValue::from_string(format!("\"{}\"", request.method)).unwrap())
        })
    }

    fn handle_notification(&self, _peer: Peer, method: String, _params: Option<Box<RawValue>>) -> BoxFuture<()> {
        let rec = self.0.clone();
        Box::pin(async move {
            if method == "slow" {
                // Wait until the test lets it go: later notifications must not overtake it.
                rec.release.notified().await;
            }
            rec.seen.lock().unwrap().push(method);
        })
    }
}

async fn read_line(r: &mut impl FrameReader) -> String {
    match within("a frame", r.read_frame()).await.unwrap() {
        Some(Frame::Message(m)) => String::from_utf8(m).unwrap(),
        other => panic!("expected a frame, got {other:?}"),
    }
}

#[tokio::test]
async fn a_waiting_notification_handler_keeps_later_ones_behind_it() {
    let rec = Arc::new(Recorder::default());
    let (client_end, server_end) = memory::pair();
    let _conn = engine::start(server_end, Arc::new(Svc(rec.clone())), PeerOptions::default());
    let (mut r, mut w) = client_end.split();
    for m in ["first", "slow", "after1", "after2"] {
        let frame = format!(r#"{{"jsonrpc":"2.0","method":"{m}"}}"#);
        w.write_frame(frame.as_bytes()).await.unwrap();
    }
    // A request behind them, answered at once: the notifications were all read by then.
    w.write_frame(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await
        .unwrap();
    w.flush().await.unwrap();
    assert!(read_line(&mut r).await.contains(r#""result":"ping""#));
    assert_eq!(
        *rec.seen.lock().unwrap(),
        vec!["first".to_owned()],
        "nothing may overtake `slow`"
    );
    rec.release.notify_one();
    within("the queued notifications", async {
        while rec.seen.lock().unwrap().len() < 4 {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(*rec.seen.lock().unwrap(), ["first", "slow", "after1", "after2"]);
}

#[tokio::test]
async fn a_request_answered_at_once_does_not_wait_for_an_earlier_one() {
    let rec = Arc::new(Recorder::default());
    let (client_end, server_end) = memory::pair();
    let _conn = engine::start(server_end, Arc::new(Svc(rec.clone())), PeerOptions::default());
    let (mut r, mut w) = client_end.split();
    w.write_frame(br#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#)
        .await
        .unwrap();
    w.write_frame(br#"{"jsonrpc":"2.0","id":2,"method":"now"}"#)
        .await
        .unwrap();
    w.flush().await.unwrap();
    let first = read_line(&mut r).await;
    assert!(
        first.contains(r#""id":2"#),
        "the immediate request comes back first: {first}"
    );
    rec.release.notify_one();
    let second = read_line(&mut r).await;
    assert!(
        second.contains(r#""id":1"#) && second.contains(r#""result":"wait""#),
        "{second}"
    );
}
