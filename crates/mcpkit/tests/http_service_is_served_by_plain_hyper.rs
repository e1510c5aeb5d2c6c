//! `HttpServer::into_service()` is a plain `tower::Service<http::Request<B>>`: served by hyper
//! alone (its HTTP/1.1 connection API with hyper-util's tower adapter, no axum in the test) on
//! a real socket, it answers mcpkit's client in both eras, streams SSE progress, and refuses a
//! foreign `Host` like the router does.
#![cfg(all(
    feature = "http-client",
    feature = "http-server",
    feature = "client",
    feature = "server"
))]

use crate::common;

use common::http::{config, initialize_body, send, test_server, Mcp};
use common::within;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use mcpkit::client::{CallOptions, ConnectMode};
use mcpkit::server::http::{HttpServer, HttpService};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::ProtocolVersion;
use mcpkit::Client;
use reqwest::StatusCode;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// `service` served by hyper on a free loopback port; the URL of its endpoint. The
/// connections end with the returned set.
async fn serve_with_hyper(service: HttpService) -> (String, JoinSet<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut tasks = JoinSet::new();
    tasks.spawn(async move {
        let mut connections = JoinSet::new();
        while let Ok((tcp, _)) = listener.accept().await {
            let service = TowerToHyperService::new(service.clone());
            connections.spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    (format!("http://{addr}/mcp"), tasks)
}

#[tokio::test]
async fn plain_hyper_serves_the_endpoint_in_both_eras() {
    let (url, _served) = serve_with_hyper(HttpServer::new(test_server()).config(config()).into_service()).await;
    for mode in [
        ConnectMode::Handshake,
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        let transport = HttpClientTransport::new(url.as_str()).unwrap();
        let client = within("connect", Client::builder().mode(mode).connect(transport))
            .await
            .unwrap();
        let tools = within("tools/list", client.list_all_tools()).await.unwrap();
        assert_eq!(tools.len(), 5, "{mode:?}");
        let r = within(
            "echo",
            client.call_tool("echo", serde_json::json!({"text": "via hyper"})),
        )
        .await
        .unwrap();
        assert_eq!(serde_json::to_value(&r.content).unwrap()[0]["text"], "via hyper");

        // Progress arrives over the SSE reply before the result.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = CallOptions {
            progress: Some(tx),
            ..CallOptions::default()
        };
        let r = within("progress", client.call_tool_with("progress", (), options))
            .await
            .unwrap();
        assert_eq!(serde_json::to_value(&r.content).unwrap()[0]["text"], "progressed");
        let mut seen = Vec::new();
        while let Ok(p) = rx.try_recv() {
            seen.push(p.progress);
        }
        assert_eq!(seen, [1.0, 2.0, 3.0], "{mode:?}");
        within("close", client.close()).await.unwrap();
    }
}

#[tokio::test]
async fn plain_hyper_keeps_the_host_check() {
    let (url, _served) = serve_with_hyper(HttpServer::new(test_server()).config(config()).into_service()).await;
    let mcp = Mcp::new(&url);
    let r = send(mcp.post(None, initialize_body(1)).header("host", "evil.example.com")).await;
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST);
    let session = mcp.open_session().await;
    mcp.assert_serves(&session, "initialize through hyper").await;
}
