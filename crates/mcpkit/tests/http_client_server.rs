//! The Streamable HTTP client transport against mcpkit's own HTTP server on 127.0.0.1: JSON and
//! SSE replies, progress, sampling over the response stream, resumption after the server closes
//! a response stream, concurrency, the standalone GET stream, transparent re-initialization
//! after session expiry, DELETE on close — and the fallback to the 2024-11-05 HTTP+SSE
//! transport against a small hand-written legacy server.
#![cfg(all(
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use common::http::Served;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use common::within;
use futures_util::stream;
use mcpkit::client::{CallOptions, ServerNotification};
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::server::{Args, RequestContext, ToolDef};
use mcpkit::transport::http_client::{HttpClientInfo, HttpClientTransport};
use mcpkit::transport::memory;
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Transport};
use mcpkit::types::schema::{CallToolResult, CreateMessageParams, CreateMessageResult, SamplingMessage};
use mcpkit::{Client, ClientBuilder, Server};
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, Mutex};

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// echo; progress (three steps); sample (asks the client's LLM); resumable (closes its
/// response stream, then answers 100 ms later).
fn test_server() -> Server {
    Server::builder()
        .name("http-test", "1.0.0")
        .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.text }))
        .tool(ToolDef::new("progress", |cx: RequestContext| async move {
            for i in 1..=3 {
                cx.progress(f64::from(i), Some(3.0), None);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            "progressed"
        }))
        .tool(ToolDef::new("sample", |cx: RequestContext| async move {
            let params = CreateMessageParams::new(vec![SamplingMessage::user_text("hello?")], 16);
            match cx.sample(params).await {
                Ok(r) => Ok(format!(
                    "the model said {:?}",
                    r.content.as_slice()[0].as_text().unwrap_or("")
                )),
                Err(e) => Err(e.to_string()),
            }
        }))
        .tool(ToolDef::new("resumable", |cx: RequestContext| async move {
            cx.close_response_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            "resumed"
        }))
        .build()
}

fn fast_config() -> HttpConfig {
    HttpConfig {
        sse_retry: Duration::from_millis(50),
        ..HttpConfig::default()
    }
}

/// A running HTTP server; stops when dropped.
struct Running {
    url: String,
    _served: Option<Served>,
    _stop: Option<oneshot::Sender<()>>,
}

async fn start(server: Server, config: HttpConfig) -> Running {
    let served = Served::start(HttpServer::new(server).config(config).sse_legacy(true)).await;
    Running {
        url: served.url.clone(),
        _served: Some(served),
        _stop: None,
    }
}

fn sampling_client() -> ClientBuilder {
    Client::builder().on_sampling(|p: CreateMessageParams| async move {
        assert_eq!(p.max_tokens, 16);
        Ok(CreateMessageResult::text("test-model", "sampled words"))
    })
}

async fn connect(url: &str, builder: ClientBuilder) -> (Client, HttpClientInfo) {
    let transport = HttpClientTransport::new(url).unwrap();
    let info = transport.info();
    let client = within("connect", builder.connect(transport)).await.unwrap();
    (client, info)
}

fn text(r: &CallToolResult) -> &str {
    r.content.first().and_then(|c| c.as_text()).unwrap_or("")
}

#[tokio::test]
async fn lists_tools_and_calls_echo() {
    let running = start(test_server(), fast_config()).await;
    let (client, info) = connect(&running.url, Client::builder()).await;
    assert_eq!(client.server_info().name, "http-test");
    assert!(info.session_id().is_some(), "the server assigned a session id");
    assert_eq!(
        info.protocol_version().as_deref(),
        Some(client.protocol_version().as_str())
    );
    assert!(!info.is_sse_legacy());
    let mut names: Vec<String> = within("list", client.list_all_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    assert_eq!(names, ["echo", "progress", "resumable", "sample"]);
    let r = within("echo", client.call_tool("echo", serde_json::json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&r), "hi");
    within("close", client.close()).await.unwrap();
}

#[tokio::test]
async fn progress_reaches_the_caller_over_sse() {
    let running = start(test_server(), fast_config()).await;
    let (client, _) = connect(&running.url, Client::builder()).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let options = CallOptions {
        progress: Some(tx),
        ..Default::default()
    };
    let r = within("progress", client.call_tool_with("progress", (), options))
        .await
        .unwrap();
    assert_eq!(text(&r), "progressed");
    let mut got = Vec::new();
    while let Ok(p) = rx.try_recv() {
        got.push(p.progress);
    }
    assert_eq!(got, [1.0, 2.0, 3.0]);
}

#[tokio::test]
async fn sampling_is_answered_by_the_client_over_the_response_stream() {
    let running = start(test_server(), fast_config()).await;
    let (client, _) = connect(&running.url, sampling_client()).await;
    let r = within("sample", client.call_tool("sample", ())).await.unwrap();
    assert!(!r.is_error(), "{r:?}");
    assert_eq!(text(&r), "the model said \"sampled words\"");
}

#[tokio::test]
async fn a_closed_response_stream_is_resumed_until_the_result() {
    // The server's `retry` (1.5 s, longer than the client's 1 s default) must be waited for:
    // the tool answers after 100 ms, so the result can only come from the resumed stream, and
    // only a client that honours the server's value waits this long. Lower bounds only: a
    // loaded machine makes calls slower, never faster.
    let config = HttpConfig {
        sse_retry: Duration::from_millis(1500),
        ..HttpConfig::default()
    };
    let running = start(test_server(), config).await;
    let (client, _) = connect(&running.url, Client::builder()).await;
    let started = std::time::Instant::now();
    let r = within("resumable", client.call_tool("resumable", ())).await.unwrap();
    assert_eq!(text(&r), "resumed");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1500),
        "answered in {took:?}: the server's retry was not honoured"
    );
}

#[tokio::test]
async fn twenty_concurrent_calls() {
    let running = start(test_server(), fast_config()).await;
    let (client, _) = connect(&running.url, sampling_client()).await;
    let calls = (0..20).map(|i| {
        let client = client.clone();
        async move {
            let r = match i % 4 {
                0 => {
                    client
                        .call_tool("echo", serde_json::json!({"text": format!("n{i}")}))
                        .await
                }
                1 => client.call_tool("progress", ()).await,
                2 => client.call_tool("sample", ()).await,
                _ => client.call_tool("resumable", ()).await,
            }
            .unwrap();
            (i, text(&r).to_owned())
        }
    });
    let results = within("20 calls", futures_util::future::join_all(calls)).await;
    for (i, t) in results {
        let want = match i % 4 {
            0 => format!("n{i}"),
            1 => "progressed".into(),
            2 => "the model said \"sampled words\"".into(),
            _ => "resumed".into(),
        };
        assert_eq!(t, want, "call {i}");
    }
}

#[tokio::test]
async fn list_changed_arrives_on_the_standalone_stream() {
    let server = test_server();
    let running = start(server.clone(), fast_config()).await;
    let (client, _) = connect(&running.url, Client::builder()).await;
    let mut notes = client.notifications();
    // The GET stream opens in the background after `notifications/initialized`: a change made
    // before it is open is not replayed to it, so keep changing until one arrives.
    let mut seen = false;
    for i in 0..50 {
        server.add_tool(ToolDef::new(format!("added{i}"), || async { "new" }));
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(100), notes.recv()).await {
            assert!(matches!(n, ServerNotification::ToolListChanged), "{n:?}");
            seen = true;
            break;
        }
    }
    assert!(seen, "no tools/list_changed arrived");
    let tools = within("list", client.list_all_tools()).await.unwrap();
    assert!(tools.iter().any(|t| t.name.starts_with("added")));
}

#[tokio::test]
async fn an_expired_session_is_replaced_transparently() {
    // No GET stream: an open one keeps a session alive (and 405 must be handled quietly).
    let config = HttpConfig {
        session_idle_timeout: Duration::from_millis(200),
        enable_get_stream: false,
        ..fast_config()
    };
    let running = start(test_server(), config).await;
    let (client, info) = connect(&running.url, Client::builder()).await;
    let first = info.session_id().unwrap();
    within("echo", client.call_tool("echo", serde_json::json!({"text": "one"})))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let r = within(
        "echo after expiry",
        client.call_tool("echo", serde_json::json!({"text": "two"})),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "two");
    let second = info.session_id().unwrap();
    assert_ne!(first, second, "a new session was started");
    // The new session is fully initialized: it serves lists too.
    assert_eq!(within("list", client.list_all_tools()).await.unwrap().len(), 4);
}

#[tokio::test]
async fn close_deletes_the_session() {
    let running = start(test_server(), fast_config()).await;
    let (client, info) = connect(&running.url, Client::builder()).await;
    within("echo", client.call_tool("echo", serde_json::json!({"text": "x"})))
        .await
        .unwrap();
    let session = info.session_id().unwrap();
    let version = info.protocol_version().unwrap();
    within("close", client.close()).await.unwrap();
    let status = within(
        "POST with the old session",
        reqwest::Client::new()
            .post(&running.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", &version)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .send(),
    )
    .await
    .unwrap()
    .status();
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_unreachable_server_fails_connect_instead_of_hanging() {
    // Bind then drop a listener: nothing listens on that port any more.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let transport = HttpClientTransport::new(format!("http://{addr}/mcp")).unwrap();
    let r = within("connect", Client::builder().connect(transport)).await;
    assert!(r.is_err());
}

// ---------------------------------------------------------------------------------------------
// A hand-written 2024-11-05 HTTP+SSE server: GET /sse opens the stream (first event `endpoint`),
// POST /messages delivers a message (202); replies go out as `message` events. Behind it, a real
// mcpkit server on an in-memory pair. It knows nothing of Streamable HTTP: a POST to /sse is 405.

type PairWriter = <memory::MemoryTransport as Transport>::Writer;

#[derive(Clone)]
struct Legacy {
    server: Server,
    to_server: Arc<Mutex<Option<PairWriter>>>,
}

async fn legacy_open(State(st): State<Legacy>) -> Response {
    let (a, b) = memory::pair();
    let _connection = st.server.start(a);
    let (mut reader, writer) = b.split();
    *st.to_server.lock().await = Some(writer);
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    let _ = tx.send(Bytes::from_static(
        b": hello\n\nevent: endpoint\ndata: /messages?session=1\n\n",
    ));
    tokio::spawn(async move {
        while let Ok(Some(Frame::Message(m))) = reader.read_frame().await {
            let mut event = b"event: message\ndata: ".to_vec();
            event.extend_from_slice(&m);
            event.extend_from_slice(b"\n\n");
            if tx.send(Bytes::from(event)).is_err() {
                break;
            }
        }
    });
    let body = stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    ([(header::CONTENT_TYPE, "text/event-stream")], Body::from_stream(body)).into_response()
}

async fn legacy_message(State(st): State<Legacy>, body: Bytes) -> StatusCode {
    let mut guard = st.to_server.lock().await;
    let Some(w) = guard.as_mut() else {
        return StatusCode::NOT_FOUND;
    };
    if w.write_frame(&body).await.is_err() || w.flush().await.is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    StatusCode::ACCEPTED
}

async fn start_legacy() -> Running {
    let state = Legacy {
        server: test_server(),
        to_server: Arc::new(Mutex::new(None)),
    };
    let app = axum::Router::new()
        .route("/sse", axum::routing::get(legacy_open))
        .route("/messages", axum::routing::post(legacy_message))
        .with_state(state);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
    });
    Running {
        url: format!("http://{addr}/sse"),
        _served: None,
        _stop: Some(stop),
    }
}

#[tokio::test]
async fn falls_back_to_the_legacy_http_sse_transport() {
    let running = start_legacy().await;
    let (client, info) = connect(&running.url, sampling_client()).await;
    assert!(info.is_sse_legacy());
    assert_eq!(client.server_info().name, "http-test");
    assert_eq!(
        info.protocol_version().as_deref(),
        Some(client.protocol_version().as_str())
    );
    let r = within("echo", client.call_tool("echo", serde_json::json!({"text": "old"})))
        .await
        .unwrap();
    assert_eq!(text(&r), "old");
    let r = within("sample", client.call_tool("sample", ())).await.unwrap();
    assert_eq!(text(&r), "the model said \"sampled words\"");
    within("close", client.close()).await.unwrap();
}

#[tokio::test]
async fn legacy_can_be_forced() {
    let running = start_legacy().await;
    let transport = HttpClientTransport::sse_legacy(&running.url).unwrap();
    let info = transport.info();
    let client = within("connect", Client::builder().connect(transport)).await.unwrap();
    assert!(info.is_sse_legacy());
    let r = within("echo", client.call_tool("echo", serde_json::json!({"text": "forced"})))
        .await
        .unwrap();
    assert_eq!(text(&r), "forced");
}

// ---------------------------------------------------------------------------------------------
// A hand-written Streamable HTTP server that fails: HTTP errors must become the request's
// JSON-RPC error, never a hang. It offers no GET stream and refuses DELETE (405 for both).

async fn failing_post(body: Bytes) -> Response {
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let id = v.get("id").cloned();
    let json = |status: StatusCode, v: serde_json::Value| {
        (status, [(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
    };
    match v["method"].as_str().unwrap_or("") {
        "initialize" => {
            let result = serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "failing", "version": "0"}
            });
            let mut r = json(
                StatusCode::OK,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            );
            r.headers_mut().insert("mcp-session-id", "s1".parse().unwrap());
            r
        }
        _ if id.is_none() => StatusCode::ACCEPTED.into_response(),
        "tools/list" => json(
            StatusCode::BAD_REQUEST,
            serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32602, "message": "no lists today"}}),
        ),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
    }
}

#[tokio::test]
async fn http_errors_fail_the_request_with_a_json_rpc_error() {
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(failing_post)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::METHOD_NOT_ALLOWED }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (client, info) = connect(&format!("http://{addr}/mcp"), Client::builder()).await;
    assert_eq!(info.session_id().as_deref(), Some("s1"));
    let e = within("list", client.list_tools(None)).await.unwrap_err();
    let rpc = e.rpc().expect("a JSON-RPC error");
    assert_eq!((rpc.code.0, rpc.message.as_str()), (-32602, "no lists today"));
    let e = within("call", client.call_tool("anything", ())).await.unwrap_err();
    let rpc = e.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code.0, -32603);
    assert!(
        rpc.message.contains("500") && rpc.message.contains("boom"),
        "{}",
        rpc.message
    );
    within("close", client.close()).await.unwrap();
}

#[tokio::test]
async fn falls_back_to_mcpkits_own_legacy_server() {
    let app = HttpServer::new(test_server()).sse_legacy(true).router();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let (client, info) = connect(&format!("http://{addr}/sse"), sampling_client()).await;
    assert!(info.is_sse_legacy());
    let r = within(
        "echo",
        client.call_tool("echo", serde_json::json!({"text": "via legacy_router"})),
    )
    .await
    .unwrap();
    assert_eq!(text(&r), "via legacy_router");
    let r = within("sample", client.call_tool("sample", ())).await.unwrap();
    assert_eq!(text(&r), "the model said \"sampled words\"");
    within("close", client.close()).await.unwrap();
}
