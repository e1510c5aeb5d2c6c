//! The harness of mcpkit-cli's integration tests: the reference server's expected tool list, a
//! client that answers sampling and elicitation the way the conformance harness does, a raw
//! wire with a transcript for the stateless era, and helpers to read results and notifications.
//! The timeout wrapper and the schema validator come from mcpkit-test-support.
#![allow(dead_code, unused_imports, unreachable_pub)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpkit::client::{prompt_ref, resource_ref, CallOptions, ServerNotification};
use mcpkit::server::{PromptDef, ResourceDef, ToolDef};
use mcpkit::testing::TestPair;
use mcpkit::types::method::{CreateMessage, ListRoots, Ping};
use mcpkit::types::schema::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, GetPromptResult, JsonObject, LoggingLevel,
    PromptMessage, Root, SamplingMessage,
};
use mcpkit::types::{ErrorCode, ErrorObject, ProtocolVersion};
use mcpkit::{Client, ClientBuilder, Error, RequestOptions, Server};
use mcpkit_cli::reference;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

pub use mcpkit_test_support::schema::SchemaValidator;
pub use mcpkit_test_support::within;

/// The tools the reference server (`mcpkit serve`) offers, sorted: what the tests expect to be
/// listed, written down here rather than read from the server so a lost or renamed tool fails.
pub const REFERENCE_TOOL_NAMES: [&str; 39] = [
    "add",
    "confirm_delete",
    "echo",
    "failing_job",
    "greet",
    "json_schema_2020_12_tool",
    "multi_input",
    "protocol_error_job",
    "slow_compute",
    "test_app_counter",
    "test_app_counter_increment",
    "test_audio_content",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_embedded_resource",
    "test_error_handling",
    "test_header_param",
    "test_image_content",
    "test_input_required_result_capabilities",
    "test_input_required_result_elicitation",
    "test_input_required_result_list_roots",
    "test_input_required_result_multi_round",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_request_state",
    "test_input_required_result_sampling",
    "test_input_required_result_tampered_state",
    "test_logging_tool",
    "test_missing_capability",
    "test_multiple_content_types",
    "test_reconnection",
    "test_sampling",
    "test_simple_text",
    "test_streaming_elicitation",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_tool_with_task",
    "test_trigger_prompt_change",
    "test_trigger_tool_change",
];

/// The Tasks extension fixtures that do not end in a result when called as plain tools: a
/// task-only tool (-32021 without the extension) and one that fails at the protocol level.
pub const NOT_PLAIN_TOOLS: [&str; 3] = ["failing_job", "protocol_error_job", "test_tool_with_task"];

pub const SAMPLING_REPLY: &str = "This is a test response from the client";
/// A sampling prompt the client's handler never answers (to make the server cancel it).
pub const HANG: &str = "hang forever";

pub fn object(v: Value) -> JsonObject {
    v.as_object().cloned().expect("an object")
}

/// What the client's handlers were asked.
#[derive(Default)]
pub struct Asked {
    pub sampling: Mutex<Vec<CreateMessageParams>>,
    pub elicitation: Mutex<Vec<ElicitParams>>,
}

/// A client that answers sampling and elicitation the way the conformance harness does, and
/// offers one root.
pub fn harness_client(asked: Arc<Asked>) -> ClientBuilder {
    let sampled = asked.clone();
    Client::builder()
        .on_sampling(move |p: CreateMessageParams| {
            sampled.sampling.lock().unwrap().push(p.clone());
            async move {
                let prompt = p
                    .messages
                    .first()
                    .and_then(|m| m.content.iter().find_map(|c| c.as_text()));
                if prompt == Some(HANG) {
                    std::future::pending::<()>().await;
                }
                Ok::<_, ErrorObject>(CreateMessageResult::text("test-model", SAMPLING_REPLY))
            }
        })
        .on_elicitation(move |p: ElicitParams| {
            asked.elicitation.lock().unwrap().push(p.clone());
            async move {
                let content = match p.message() {
                    "Please review and update the form fields with defaults" => json!({
                        "name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": false
                    }),
                    "Please select options from the enum fields" => json!({
                        "untitledSingle": "option1",
                        "titledSingle": "value1",
                        "legacyEnum": "opt1",
                        "untitledMulti": ["option1", "option2"],
                        "titledMulti": ["value1", "value2"]
                    }),
                    _ => json!({"username": "testuser", "email": "test@example.com"}),
                };
                Ok::<_, ErrorObject>(ElicitResult::accept(object(content)))
            }
        })
        .roots(vec![Root::new("file:///workspace").with_name("workspace")])
}

pub fn text_of(r: &mcpkit::types::schema::CallToolResult) -> String {
    let content = serde_json::to_value(&r.content).unwrap();
    assert_eq!(
        content.as_array().map(Vec::len),
        Some(1),
        "expected one content block: {content}"
    );
    assert_eq!(content[0]["type"], "text", "expected a text block: {content}");
    content[0]["text"].as_str().unwrap().to_owned()
}

pub fn content_json(r: &mcpkit::types::schema::CallToolResult) -> Value {
    serde_json::to_value(&r.content).unwrap()
}

/// Wait for the first notification `pick` accepts, skipping others.
pub async fn next_notification<T>(
    rx: &mut broadcast::Receiver<ServerNotification>,
    what: &str,
    mut pick: impl FnMut(&ServerNotification) -> Option<T>,
) -> T {
    within(what, async {
        loop {
            match rx.recv().await {
                Ok(n) => {
                    if let Some(t) = pick(&n) {
                        return t;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => panic!("the notification stream closed ({what})"),
            }
        }
    })
    .await
}

pub fn count_sent(pair: &TestPair, method: &str) -> usize {
    pair.server_sent()
        .iter()
        .filter(|f| serde_json::from_str::<Value>(f).is_ok_and(|v| v["method"] == method))
        .count()
}

/// The raw client end of an in-memory connection to a server, keeping a transcript of both
/// directions (for the stateless wire, which has no mcpkit client here).
pub struct RawWire {
    reader: <mcpkit::transport::memory::MemoryTransport as mcpkit::transport::Transport>::Reader,
    writer: <mcpkit::transport::memory::MemoryTransport as mcpkit::transport::Transport>::Writer,
    _connection: mcpkit::engine::Connection,
    /// What the client end wrote, one frame per entry.
    pub sent: Vec<String>,
    /// What the server wrote.
    pub received: Vec<String>,
}

impl RawWire {
    pub fn serve(server: &Server) -> RawWire {
        use mcpkit::transport::Transport;
        let (a, b) = mcpkit::transport::memory::pair();
        let connection = server.start(a);
        let (reader, writer) = b.split();
        RawWire {
            reader,
            writer,
            _connection: connection,
            sent: Vec::new(),
            received: Vec::new(),
        }
    }

    pub async fn send(&mut self, frame: &Value) {
        use mcpkit::transport::FrameWriter;
        let line = frame.to_string();
        within("write", self.writer.write_frame(line.as_bytes())).await.unwrap();
        within("flush", self.writer.flush()).await.unwrap();
        self.sent.push(line);
    }

    pub async fn recv(&mut self) -> Value {
        use mcpkit::transport::{Frame, FrameReader};
        match within("a frame from the server", self.reader.read_frame()).await {
            Ok(Some(Frame::Message(bytes))) => {
                let line = String::from_utf8(bytes.to_vec()).unwrap();
                let v = serde_json::from_str(&line).unwrap();
                self.received.push(line);
                v
            }
            other => panic!("no frame from the server: {other:?}"),
        }
    }

    /// The 2025-11-25 handshake: `initialize` (asserted answered with a result), then
    /// `notifications/initialized`.
    pub async fn open_session(&mut self) {
        let init = self
            .request(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
            }))
            .await;
        assert!(init.get("result").is_some(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Send a request and read up to its reply (notifications before it are kept in the
    /// transcript); the reply.
    pub async fn request(&mut self, frame: &Value) -> Value {
        self.send(frame).await;
        loop {
            let v = self.recv().await;
            if v.get("id") == frame.get("id") && v.get("method").is_none() {
                return v;
            }
        }
    }
}

/// The `_meta` every 2026-07-28 request carries: every client capability declared.
pub fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {}
        },
        "io.modelcontextprotocol/clientInfo": {"name": "schema-test", "version": "0"},
        "io.modelcontextprotocol/logLevel": "debug"
    })
}

/// A client's answer to one input request of an `input_required` result.
pub fn answer_input(request: &Value) -> Value {
    match request["method"].as_str().unwrap() {
        "sampling/createMessage" => json!({
            "role": "assistant", "content": {"type": "text", "text": SAMPLING_REPLY}, "model": "test-model"
        }),
        "roots/list" => json!({"roots": [{"uri": "file:///workspace", "name": "workspace"}]}),
        "elicitation/create" => {
            let mut content = serde_json::Map::new();
            let props = request["params"]["requestedSchema"]["properties"].as_object();
            for (name, p) in props.into_iter().flatten() {
                let v = if let Some(first) = p["enum"].get(0) {
                    first.clone()
                } else if let Some(first) = p["oneOf"].get(0) {
                    first["const"].clone()
                } else {
                    match p["type"].as_str() {
                        Some("boolean") => json!(true),
                        Some("integer") | Some("number") => json!(1),
                        Some("array") => json!([]),
                        _ => json!("text"),
                    }
                };
                content.insert(name.clone(), v);
            }
            json!({"action": "accept", "content": content})
        }
        other => panic!("unexpected input request {other}"),
    }
}
