//! A tool that asks the user a question (elicitation) and the client's LLM for a completion
//! (sampling), and a client that answers both — once over a 2025-11-25 session and once over
//! the 2026-07-28 stateless wire, with the same server and client code.
//!
//! ```text
//! cargo run -p mcpkit --features http-server,http-client --example sampling_elicitation
//! ```
//!
//! Server and client run in this one process and talk over real HTTP on a loopback port.
//! Output:
//!
//! ```text
//! == 2025-11-25 (stateless: false) ==
//! [server] plan_trip, run 1
//! [client] elicitation: Where would you like to go?
//! [client] sampling: Suggest one thing to do in Lisbon.
//! result: Trip to Lisbon: ride tram 28 up to the castle.
//! == 2026-07-28 (stateless: true) ==
//! [server] plan_trip, run 2
//! [client] elicitation: Where would you like to go?
//! [server] plan_trip, run 3
//! [client] sampling: Suggest one thing to do in Lisbon.
//! [server] plan_trip, run 4
//! result: Trip to Lisbon: ride tram 28 up to the castle.
//! ```
//!
//! On a 2025-11-25 session, `cx.elicit(…)` and `cx.sample(…)` are requests from the server to
//! the client on the open session, and the handler waits for their answers. The 2026-07-28
//! wire has no session: the server ends the call with an `input_required` result listing what
//! it needs (with a sealed `requestState`), and the client calls again with the answers, so the
//! handler runs again from the top and this time gets them. That is why a handler must be
//! repeatable up to its input calls: do side effects only after them.

use std::error::Error;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcpkit::client::ConnectMode;
use mcpkit::server::http::HttpServer;
use mcpkit::server::{RequestContext, ToolDef};
use mcpkit::transport::http_client::HttpClientTransport;
use mcpkit::types::schema::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ElicitationSchema, JsonObject,
    SamplingMessage,
};
use mcpkit::types::ProtocolVersion;
use mcpkit::{Client, Server};
use serde_json::json;

/// How many times the tool handler has started (to show the stateless re-runs).
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// The tool. The same code serves both eras.
async fn plan_trip(cx: RequestContext) -> mcpkit::Result<String> {
    println!("[server] plan_trip, run {}", RUNS.fetch_add(1, Ordering::SeqCst) + 1);

    // 1. Ask the user, with a form (a JSON Schema of flat properties).
    let form = ElicitationSchema::new().with_required_property("destination", json!({"type": "string"}));
    let answer = cx
        .elicit(ElicitParams::form("Where would you like to go?", form))
        .await?;
    let destination = match (answer.action, &answer.content) {
        (ElicitAction::Accept, Some(content)) => content["destination"].as_str().unwrap_or("nowhere").to_owned(),
        // Declined or cancelled: not an error, just nothing to plan.
        _ => return Ok("No trip, then.".into()),
    };

    // 2. Ask the client's LLM. The client decides which model runs (and may ask the user).
    let prompt = format!("Suggest one thing to do in {destination}.");
    let reply = cx
        .sample(CreateMessageParams::new(vec![SamplingMessage::user_text(prompt)], 100))
        .await?;
    let idea = reply
        .content
        .as_slice()
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or_default();

    // Side effects (booking the trip…) belong here, after the last input call.
    Ok(format!("Trip to {destination}: {idea}"))
}

/// A client that answers the server's questions. A real host would show the form to the user
/// and run the sampling request through its LLM (after the user approves it).
async fn connect(url: &str, mode: ConnectMode) -> mcpkit::Result<Client> {
    Client::builder()
        .mode(mode)
        .on_elicitation(|params: ElicitParams| async move {
            println!("[client] elicitation: {}", params.message());
            let content = JsonObject::from_iter([("destination".to_owned(), json!("Lisbon"))]);
            Ok(ElicitResult::accept(content))
        })
        .on_sampling(|params: CreateMessageParams| async move {
            let asked = params
                .messages
                .last()
                .and_then(|m| m.content.as_slice().first()?.as_text());
            println!("[client] sampling: {}", asked.unwrap_or_default());
            Ok(CreateMessageResult::text(
                "example-llm",
                "ride tram 28 up to the castle.",
            ))
        })
        .connect(HttpClientTransport::new(url)?)
        .await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    // The server: one endpoint serves both eras.
    let server = Server::builder()
        .name("example-trips", "1.0.0")
        .tool(ToolDef::new("plan_trip", plan_trip).description("Plans a trip, asking where to"))
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    tokio::spawn(HttpServer::new(server).serve(listener));

    // `ConnectMode::Handshake` (the default) runs the `initialize` handshake: a 2025-11-25 session.
    // `ConnectMode::Pinned(V2026_07_28)` speaks the stateless wire (`ConnectMode::Auto` would
    // probe the server and pick it too).
    for mode in [
        ConnectMode::Handshake,
        ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
    ] {
        let client = connect(&url, mode).await?;
        println!(
            "== {} (stateless: {}) ==",
            client.protocol_version().as_str(),
            client.is_stateless()
        );
        let result = client.call_tool("plan_trip", json!({})).await?;
        let text = result.content.first().and_then(|c| c.as_text()).unwrap_or_default();
        println!("result: {text}");
        client.close().await?;
    }
    Ok(())
}
