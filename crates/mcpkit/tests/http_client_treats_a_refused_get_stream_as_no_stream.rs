//! Against a server that routes only `POST /mcp` (the shape most tutorials produce), the client's
//! standalone GET gets 404 or 405. Either means "no server stream", never "session expired":
//! the client keeps its session, starts no new one, and every request carries the session id.
//!
//! The server is a real socket: mcpkit's own endpoint mounted as the POST handler of an axum
//! app that answers GET itself, behind a middleware that records every POST.
#![cfg(all(
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{post_service, MethodRouter};
use axum::Router;
use common::within;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::{Client, HttpServer};
use tokio::net::TcpListener;

/// One POST as it reached the server: its JSON-RPC method (none for a response) and session id.
#[derive(Debug, Clone)]
struct Post {
    method: Option<String>,
    session: Option<String>,
}

/// What the server saw.
#[derive(Clone, Default)]
struct Seen {
    posts: Arc<Mutex<Vec<Post>>>,
    gets: Arc<AtomicUsize>,
}

impl Seen {
    fn posts(&self) -> Vec<Post> {
        self.posts.lock().unwrap().clone()
    }
    fn initializes(&self) -> usize {
        self.posts()
            .iter()
            .filter(|p| p.method.as_deref() == Some("initialize"))
            .count()
    }
}

async fn record(State(seen): State<Seen>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    if parts.method == Method::GET {
        seen.gets.fetch_add(1, Ordering::SeqCst);
    }
    if parts.method == Method::POST {
        let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        seen.posts.lock().unwrap().push(Post {
            method: message["method"].as_str().map(str::to_owned),
            session: parts
                .headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        });
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// Serve mcpkit's endpoint as the only POST route of `/mcp`; GET answers `get_status` (404 from
/// a handler of its own, 405 from axum itself when GET is not routed at all).
async fn serve_post_only(get_status: StatusCode) -> (String, Seen, tokio::task::JoinHandle<()>) {
    let mcp = HttpServer::new(common::http::test_server()).router();
    let mut route: MethodRouter = post_service(mcp);
    if get_status == StatusCode::NOT_FOUND {
        route = route.get(|| async { StatusCode::NOT_FOUND });
    }
    let seen = Seen::default();
    let app = Router::new()
        .route("/mcp", route)
        .layer(middleware::from_fn_with_state(seen.clone(), record));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, seen, task)
}

async fn several_calls_keep_one_session(get_status: StatusCode) {
    let (url, seen, task) = serve_post_only(get_status).await;
    let transport = HttpClientTransport::new(&url).unwrap();
    let info = transport.info();
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    let session = info.session_id().expect("the server assigned a session id");

    for i in 0..5 {
        let text = format!("call {i}");
        let r = within("echo", client.call_tool("echo", serde_json::json!({ "text": text })))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some(text.as_str()));
    }
    let together = (0..5).map(|i| client.call_tool("echo", serde_json::json!({ "text": format!("together {i}") })));
    for r in within("5 concurrent calls", futures_util::future::join_all(together)).await {
        r.unwrap();
    }
    within("list", client.list_all_tools()).await.unwrap();
    // A re-initialization started by the refused GET would show up by now.
    tokio::time::sleep(Duration::from_millis(300)).await;

    assert!(
        seen.gets.load(Ordering::SeqCst) >= 1,
        "the client tried the standalone GET"
    );
    assert_eq!(seen.initializes(), 1, "no new session was started: {:?}", seen.posts());
    assert_eq!(info.session_id().as_deref(), Some(session.as_str()));
    for post in seen
        .posts()
        .iter()
        .filter(|p| p.method.as_deref() != Some("initialize"))
    {
        assert_eq!(post.session.as_deref(), Some(session.as_str()), "{post:?}");
    }
    within("close", client.close()).await.unwrap();
    task.abort();
}

#[tokio::test]
async fn a_404_on_the_get_stream_means_no_stream_not_an_expired_session() {
    several_calls_keep_one_session(StatusCode::NOT_FOUND).await;
}

#[tokio::test]
async fn a_405_on_the_get_stream_means_no_stream_not_an_expired_session() {
    several_calls_keep_one_session(StatusCode::METHOD_NOT_ALLOWED).await;
}
