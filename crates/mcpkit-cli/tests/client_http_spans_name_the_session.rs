//! The client's spans over Streamable HTTP carry `mcp.session.id` once the server assigned the
//! session (the `Mcp-Session-Id` of the `initialize` reply): every request and notification
//! the client sends after `initialize`, and what the server asks of it.

use crate::spans;

use mcpkit::client::ConnectMode;
use mcpkit::server::http::HttpServer;
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::transport::Transport as _;
use mcpkit::{Args, Client, Server, ToolDef};
use serde_json::{json, Value};

async fn serve() -> String {
    let echo = ToolDef::new("echo", |Args(a): Args<Value>| async move { a.to_string() });
    let server = Server::builder().tool(echo).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(HttpServer::new(server).serve(listener));
    format!("http://{addr}/mcp")
}

fn arguments() -> Value {
    json!({"message": "hi"})
}

#[tokio::test(flavor = "current_thread")]
async fn client_spans_after_initialize_carry_the_session_id() {
    let (spans, _guard) = spans::Spans::install();
    let url = serve().await;
    let transport = HttpClientTransport::new(&url).unwrap();
    let info = transport.info();
    let client = Client::builder()
        .mode(ConnectMode::Handshake)
        .connect(transport)
        .await
        .unwrap();
    client.call_tool("echo", arguments()).await.unwrap();
    let session = info.session_id().expect("the server assigned a session");

    for method in ["notifications/initialized", "tools/call"] {
        let sent = spans.of("mcp.client", method);
        assert_eq!(sent.len(), 1, "{method}: {:?}", spans.all());
        assert_eq!(
            sent[0].field("mcp.session.id"),
            Some(session.as_str()),
            "{method}: {:?}",
            sent[0]
        );
        assert_eq!(sent[0].field("network.transport"), Some("tcp"));
    }
    let _ = client.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_boxed_http_transport_names_the_session_too() {
    let (spans, _guard) = spans::Spans::install();
    let url = serve().await;
    let transport = HttpClientTransport::new(&url).unwrap();
    let info = transport.info();
    let client = Client::builder()
        .mode(ConnectMode::Handshake)
        .connect(transport.boxed())
        .await
        .unwrap();
    client.call_tool("echo", arguments()).await.unwrap();
    let session = info.session_id().expect("the server assigned a session");
    let sent = spans.of("mcp.client", "tools/call");
    assert_eq!(sent.len(), 1, "{:?}", spans.all());
    assert_eq!(sent[0].field("mcp.session.id"), Some(session.as_str()), "{:?}", sent[0]);
    let _ = client.close().await;
}
