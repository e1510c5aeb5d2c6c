//! While the client starts a new session (a POST carrying the session id got 404), no request
//! leaves: a request sent meanwhile waits until the new session is ready, then carries its id.
//!
//! The server is a real socket: mcpkit's endpoint behind a middleware that records every POST
//! and can hold the replayed `initialize` until the test lets it through. The session is made
//! to expire for real, by DELETE-ing it behind the client's back.
#![cfg(all(
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use common::within;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::{Client, HttpServer};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// One POST as it reached the server: its JSON-RPC method, the `text` argument of a
/// `tools/call`, and its session id.
#[derive(Debug, Clone)]
struct Post {
    method: Option<String>,
    text: Option<String>,
    session: Option<String>,
}

#[derive(Clone, Default)]
struct Gate {
    posts: Arc<Mutex<Vec<Post>>>,
    /// Hold the next `initialize` until `release`.
    armed: Arc<AtomicBool>,
    held: Arc<Notify>,
    release: Arc<Notify>,
}

impl Gate {
    fn posts(&self) -> Vec<Post> {
        self.posts.lock().unwrap().clone()
    }
    fn call(&self, text: &str) -> Vec<Post> {
        self.posts()
            .into_iter()
            .filter(|p| p.text.as_deref() == Some(text))
            .collect()
    }
}

async fn record_and_hold(State(gate): State<Gate>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    if parts.method == Method::POST {
        let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let method = message["method"].as_str().map(str::to_owned);
        gate.posts.lock().unwrap().push(Post {
            text: message["params"]["arguments"]["text"].as_str().map(str::to_owned),
            session: parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            method: method.clone(),
        });
        if method.as_deref() == Some("initialize") && gate.armed.swap(false, Ordering::SeqCst) {
            gate.held.notify_one();
            gate.release.notified().await;
        }
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

#[tokio::test]
async fn a_request_sent_during_a_new_session_start_waits_for_the_new_session_id() {
    let gate = Gate::default();
    let app = HttpServer::new(common::http::test_server())
        .router()
        .layer(middleware::from_fn_with_state(gate.clone(), record_and_hold));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    // No standalone stream: only POSTs see the session expire.
    let transport = HttpClientTransport::builder(&url)
        .standalone_stream(false)
        .build()
        .unwrap();
    let info = transport.info();
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    let old = info.session_id().unwrap();
    let version = info.protocol_version().unwrap();

    // The server forgets the session.
    let deleted = within(
        "DELETE the session",
        reqwest::Client::new()
            .delete(&url)
            .header("mcp-session-id", &old)
            .header("mcp-protocol-version", &version)
            .send(),
    )
    .await
    .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());

    // Call "a" gets 404 and starts a new session, whose `initialize` the gate holds.
    gate.armed.store(true, Ordering::SeqCst);
    let a = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("echo", serde_json::json!({"text": "a"})).await }
    });
    within("the replayed initialize", gate.held.notified()).await;

    // Call "b", sent while the new session is being started, must not leave yet.
    let b = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("echo", serde_json::json!({"text": "b"})).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        gate.call("b").is_empty(),
        "a request left during the re-initialization: {:?}",
        gate.call("b")
    );

    gate.release.notify_one();
    let a = within("call a", a).await.unwrap().unwrap();
    let b = within("call b", b).await.unwrap().unwrap();
    assert_eq!(a.content[0].as_text(), Some("a"));
    assert_eq!(b.content[0].as_text(), Some("b"));

    let new = info.session_id().unwrap();
    assert_ne!(new, old, "a new session was started");
    let sessions = |text| -> Vec<Option<String>> { gate.call(text).into_iter().map(|p| p.session).collect() };
    assert_eq!(
        sessions("a"),
        [Some(old.clone()), Some(new.clone())],
        "a: 404, then retried"
    );
    assert_eq!(
        sessions("b"),
        [Some(new.clone())],
        "b: sent once, with the new session id"
    );
    let initializes = gate
        .posts()
        .iter()
        .filter(|p| p.method.as_deref() == Some("initialize"))
        .count();
    assert_eq!(initializes, 2);
    for post in gate
        .posts()
        .iter()
        .filter(|p| p.method.as_deref() != Some("initialize"))
    {
        assert!(post.session.is_some(), "a POST without a session id: {post:?}");
    }

    within("close", client.close()).await.unwrap();
    served.abort();
}
