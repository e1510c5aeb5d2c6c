//! One stdio server binary for both eras (spec: 2026-07-28 `basic/transports/stdio`,
//! `basic/versioning`): `mcpkit serve` answers a 2026-07-28 request that arrives without any
//! handshake statelessly (including `server/discover` and a multi round-trip tool), and a
//! 2025-11-25 client's `initialize` on another process as before.

use crate::common;

use std::process::Stdio;

use common::within;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");
const V: &str = "2026-07-28";

/// A running `mcpkit serve`, driven line by line.
struct Serve {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Serve {
    fn start() -> Serve {
        let mut child = Command::new(BIN)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn mcpkit serve");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Serve { child, stdin, lines }
    }

    async fn send(&mut self, frame: &Value) {
        let mut line = frame.to_string();
        line.push('\n');
        within("write a line", self.stdin.write_all(line.as_bytes()))
            .await
            .unwrap();
        within("flush", self.stdin.flush()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = within("a line from mcpkit serve", self.lines.next_line())
            .await
            .unwrap()
            .expect("mcpkit serve closed stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Send a request; the next line must be its reply.
    async fn request(&mut self, frame: &Value) -> Value {
        self.send(frame).await;
        let reply = self.recv().await;
        assert_eq!(reply["id"], frame["id"], "not the reply to {frame}: {reply}");
        reply
    }

    /// Close stdin; the server must exit 0.
    async fn finish(mut self) {
        drop(self.stdin);
        let status = within("mcpkit serve to exit", self.child.wait()).await.unwrap();
        assert!(status.success(), "{status}");
    }
}

fn stateless_request(id: i64, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "stdio-stateless", "version": "0"}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn server_info() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {
        "name": mcpkit_cli::reference::SERVER_NAME,
        "version": env!("CARGO_PKG_VERSION")
    }})
}

#[tokio::test]
async fn a_stateless_request_is_served_without_a_handshake() {
    let mut s = Serve::start();
    let reply = s
        .request(&stateless_request(1, "server/discover", json!({}), json!({})))
        .await;
    let r = &reply["result"];
    assert_eq!(r["supportedVersions"][0], V, "{reply}");
    assert!(r["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert!(r["capabilities"]["tools"].is_object(), "{reply}");
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["_meta"], server_info());

    let reply = s
        .request(&stateless_request(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "over stdio"}}),
            json!({}),
        ))
        .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "over stdio"}],
            "_meta": server_info()
        }})
    );
    // Removed methods are unknown on this wire.
    let reply = s.request(&stateless_request(3, "ping", json!({}), json!({}))).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    s.finish().await;
}

#[tokio::test]
async fn a_multi_round_trip_tool_over_stdio() {
    let mut s = Serve::start();
    let caps = json!({"elicitation": {}});
    let call = |id: i64, extra: Value| {
        let mut params = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        stateless_request(id, "tools/call", params, caps.clone())
    };
    let first = s.request(&call(1, json!({}))).await;
    let r = &first["result"];
    assert_eq!(r["resultType"], "input_required", "{first}");
    assert_eq!(
        r["inputRequests"]["user_name"]["method"], "elicitation/create",
        "{first}"
    );
    let state = r["requestState"].as_str().unwrap().to_owned();
    let second = s
        .request(&call(
            2,
            json!({
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": state
            }),
        ))
        .await;
    assert_eq!(second["result"]["content"][0]["text"], "Hello, Ada!", "{second}");
    assert_eq!(second["result"]["resultType"], "complete");

    // Another process has keys of its own: it cannot continue this process's request.
    let mut other = Serve::start();
    let refused = other
        .request(&call(
            3,
            json!({
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": state
            }),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    s.finish().await;
    other.finish().await;
}

#[tokio::test]
async fn a_legacy_client_on_another_process_gets_the_handshake() {
    let mut stateless_process = Serve::start();
    let reply = stateless_process
        .request(&stateless_request(1, "tools/list", json!({}), json!({})))
        .await;
    assert!(reply["result"]["tools"].is_array(), "{reply}");

    let mut legacy = Serve::start();
    let reply = legacy
        .request(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "stdio-legacy", "version": "0"}}}))
        .await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    assert_eq!(
        reply["result"]["serverInfo"]["name"],
        mcpkit_cli::reference::SERVER_NAME
    );
    legacy
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let reply = legacy
        .request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"message": "legacy"}}}))
        .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "legacy"}]}})
    );
    let reply = legacy
        .request(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    stateless_process.finish().await;
    legacy.finish().await;
}
