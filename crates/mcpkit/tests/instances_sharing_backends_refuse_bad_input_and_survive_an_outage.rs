//! Instances sharing backends answer bad input as one instance does, and write nothing to a
//! backend for it: a session id never issued (or of another deployment) is 404, a forged
//! `Last-Event-ID` is ignored, a response for a request nobody awaits is ignored. When the
//! session store is unreachable, `initialize` gets 503 with a JSON-RPC error naming the cause,
//! `/readyz` says why, and 2026-07-28 requests needing no shared state keep working.
//!
//! The backends are the in-memory ones, behind a counter of writes (and a switch that makes
//! the session store fail as an unreachable database does).
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::http::*;
use mcpkit::server::backend::memory::{MemoryBus, MemoryEventStore, MemorySessionStore};
use mcpkit::server::backend::{
    Address, Admitted, BackendError, BackendFuture, Backends, Bus, EventStore, SessionLimits, SessionRecord,
    SessionStore, SessionUpdate, Subscription,
};
use mcpkit::server::http::HttpServer;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// Counts every write to the backends it wraps; `down` makes the session store fail.
#[derive(Debug, Default)]
struct Watch {
    writes: AtomicUsize,
    down: AtomicBool,
}

impl Watch {
    fn wrote(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }

    fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    fn gate<T: Send + 'static>(&self, op: BackendFuture<T>) -> BackendFuture<T> {
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(async { Err(BackendError::Unavailable("connection refused (127.0.0.1:1)".into())) });
        }
        op
    }
}

#[derive(Debug)]
struct Sessions(Arc<Watch>, MemorySessionStore);

impl SessionStore for Sessions {
    fn create(&self, record: SessionRecord, client: Option<String>, limits: SessionLimits) -> BackendFuture<Admitted> {
        self.0.wrote();
        self.0.gate(self.1.create(record, client, limits))
    }
    fn get(&self, id: &str) -> BackendFuture<Option<SessionRecord>> {
        self.0.gate(self.1.get(id))
    }
    fn update(&self, id: &str, change: SessionUpdate) -> BackendFuture<bool> {
        self.0.wrote();
        self.0.gate(self.1.update(id, change))
    }
    fn touch(&self, id: &str, ttl: Duration) -> BackendFuture<bool> {
        self.0.wrote();
        self.0.gate(self.1.touch(id, ttl))
    }
    fn delete(&self, id: &str) -> BackendFuture<bool> {
        self.0.wrote();
        self.0.gate(self.1.delete(id))
    }
    fn count(&self) -> BackendFuture<usize> {
        self.0.gate(self.1.count())
    }
    fn live(&self) -> BackendFuture<Vec<SessionRecord>> {
        self.0.gate(self.1.live())
    }
    fn ready(&self) -> BackendFuture<()> {
        self.0.gate(self.1.ready())
    }
}

#[derive(Debug)]
struct Events(Arc<Watch>, MemoryEventStore);

impl EventStore for Events {
    fn append(&self, session: &str, stream: &str, data: Bytes) -> BackendFuture<u64> {
        self.0.wrote();
        self.1.append(session, stream, data)
    }
    fn after(&self, session: &str, stream: &str, after: u64) -> BackendFuture<Vec<(u64, Bytes)>> {
        self.1.after(session, stream, after)
    }
    fn remove_stream(&self, session: &str, stream: &str) -> BackendFuture<()> {
        self.0.wrote();
        self.1.remove_stream(session, stream)
    }
    fn remove_session(&self, session: &str) -> BackendFuture<()> {
        self.0.wrote();
        self.1.remove_session(session)
    }
}

#[derive(Debug)]
struct Messages(Arc<Watch>, MemoryBus);

impl Bus for Messages {
    fn publish(&self, to: &Address, message: Bytes) -> BackendFuture<()> {
        self.0.wrote();
        self.1.publish(to, message)
    }
    fn subscribe(&self, to: &Address) -> BackendFuture<Subscription> {
        self.0.wrote();
        self.1.subscribe(to)
    }
}

fn watched() -> (Backends, Arc<Watch>) {
    let watch = Arc::new(Watch::default());
    let mut b = Backends::memory();
    b.sessions = Arc::new(Sessions(watch.clone(), MemorySessionStore::new()));
    b.events = Arc::new(Events(watch.clone(), MemoryEventStore::default()));
    b.bus = Arc::new(Messages(watch.clone(), MemoryBus::default()));
    (b, watch)
}

async fn two(backends: &Backends) -> (Served, Served) {
    let serve = |name: &str| {
        Served::start(
            HttpServer::new(test_server())
                .config(config())
                .scale_out(backends.clone().with_instance_id(name)),
        )
    };
    (serve("a").await, serve("b").await)
}

#[tokio::test]
async fn bad_input_gets_the_single_instance_answer_and_writes_nothing() {
    let (backends, watch) = watched();
    let (a, b) = two(&backends).await;
    let (a, b) = (Mcp::new(&a.url), Mcp::new(&b.url));
    let s = a.open_session().await;
    b.assert_serves(&s, "initialize on A").await;
    // Let the sessions' subscriptions and the first touches settle.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let before = watch.writes();

    // Never issued (well-formed, or not), or issued by another deployment: 404 on both.
    for id in [
        "0123456789abcdef0123456789abcdef",
        "not-a-session",
        "../../etc",
        "ABCDEF0123456789ABCDEF0123456789",
    ] {
        for mcp in [&a, &b] {
            let (status, body) = mcp.call(Some(id), request(1, "ping", json!({}))).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{id}: {body}");
            assert_eq!(send(mcp.get(id)).await.status(), StatusCode::NOT_FOUND, "GET {id}");
            assert_eq!(
                send(mcp.delete(id)).await.status(),
                StatusCode::NOT_FOUND,
                "DELETE {id}"
            );
        }
    }
    assert_eq!(watch.writes(), before, "nothing written for unknown sessions");

    // A response for a request no instance awaits: accepted and ignored, nothing sent on (an
    // id naming no instance is not forwarded).
    for id in [json!(12345), json!("forged"), json!(-1), json!(1_u64 << 60)] {
        let forged = json!({"jsonrpc": "2.0", "id": id, "result": {}});
        assert_eq!(
            send(b.post(Some(&s), forged.to_string())).await.status(),
            StatusCode::ACCEPTED
        );
    }
    assert_eq!(watch.writes(), before, "nothing written for unknown responses");
    b.assert_serves(&s, "unknown responses").await;

    // A forged Last-Event-ID is ignored: the GET opens the standalone stream as without one.
    for forged in ["x-1", "99.99-1", "0-notanumber", "1.2.3-4", "../0-1"] {
        let s = a.open_session().await;
        let r = send(b.get(&s).header("last-event-id", forged)).await;
        assert_eq!(r.status(), StatusCode::OK, "{forged}");
        let mut sse = SseReader::new(r);
        let prime = sse.next().await.expect("a priming event");
        assert_eq!(prime.data.as_deref(), Some(""), "{forged}: a fresh stream");
    }
}

#[tokio::test]
async fn an_unreachable_session_store_refuses_new_sessions_with_503_and_stateless_requests_go_on() {
    let (backends, watch) = watched();
    let (a, _b) = two(&backends).await;
    let a = Mcp::new(&a.url);
    watch.down.store(true, Ordering::SeqCst);

    let r = send(a.post(None, initialize_body(1))).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body = json_body(r).await;
    assert_eq!(body["jsonrpc"], "2.0");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("connection refused"), "the cause is named: {body}");

    let r = send(a.raw(Method::GET, "/readyz")).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let text = String::from_utf8(r.bytes().await.unwrap().to_vec()).unwrap();
    assert!(text.contains("connection refused"), "{text}");
    assert_eq!(send(a.raw(Method::GET, "/healthz")).await.status(), StatusCode::OK);

    // 2026-07-28 needs no shared state for this: it is served.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "still here"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
        }
    }});
    let req = a
        .raw(Method::POST, "/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(call.to_string());
    let r = send(req).await;
    assert_eq!(r.status(), StatusCode::OK);
    let reply: Value = json_body(r).await;
    assert_eq!(reply["result"]["content"][0]["text"], "still here", "{reply}");

    // Back up: sessions open again, without a restart.
    watch.down.store(false, Ordering::SeqCst);
    let s = a.open_session().await;
    a.assert_serves(&s, "the store came back").await;
    assert_eq!(send(a.raw(Method::GET, "/readyz")).await.status(), StatusCode::OK);
}
