//! Helpers shared by mcpkit's integration tests: a raw wire driver (a server on one end of the
//! in-memory pair, hand-written frames on the other), and the workspace's timeout wrapper
//! (`within`, from mcpkit-test-support) so a hang fails a test instead of blocking it.
#![allow(dead_code, unused_imports, unreachable_pub)]

#[cfg(feature = "auth")]
pub mod callers;
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub mod http;
pub mod skills;

use mcpkit::engine::Connection;
use mcpkit::transport::memory::{self, MemoryTransport};
use mcpkit::transport::{Frame, FrameReader, FrameWriter, Transport};
use mcpkit::Server;
use serde_json::{json, Value};

pub use mcpkit_test_support::{within, STEP_TIMEOUT};

type Reader = <MemoryTransport as Transport>::Reader;
type Writer = <MemoryTransport as Transport>::Writer;

/// The raw client end of a connection: write any bytes, read what the other side wrote.
pub struct Wire {
    pub reader: Reader,
    pub writer: Writer,
    /// The server's connection, when the other end is a [`Server`].
    pub connection: Option<Connection>,
    next_ping: i64,
}

impl Wire {
    /// Start `server` on one end of an in-memory pair; drive the other end by hand.
    pub fn serve(server: &Server) -> Wire {
        let (a, b) = memory::pair();
        let connection = server.start(a);
        Wire::from_transport(b, Some(connection))
    }

    /// Like [`Wire::serve`], but the server refuses lines longer than `max_frame` bytes.
    pub fn serve_with_max_frame(server: &Server, max_frame: usize) -> Wire {
        let (a, b) = memory::pair();
        let connection = server.start(a.max_frame(max_frame));
        Wire::from_transport(b, Some(connection))
    }

    /// Wrap one end of a pair.
    pub fn from_transport(t: MemoryTransport, connection: Option<Connection>) -> Wire {
        let (reader, writer) = t.split();
        Wire {
            reader,
            writer,
            connection,
            next_ping: 1_000_000,
        }
    }

    /// Write raw bytes as one line (a newline is appended) and flush.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        within("write", self.writer.write_frame(bytes))
            .await
            .expect("write a frame");
        within("flush", self.writer.flush()).await.expect("flush");
    }

    /// Write one line.
    pub async fn send(&mut self, frame: &str) {
        self.send_bytes(frame.as_bytes()).await;
    }

    /// Write one JSON value as a line.
    pub async fn send_json(&mut self, v: &Value) {
        self.send(&v.to_string()).await;
    }

    /// The next frame, as JSON; fails the test on EOF, a timeout, or a frame that is not JSON.
    pub async fn recv(&mut self) -> Value {
        match within("a frame from the peer", self.reader.read_frame()).await {
            Ok(Some(Frame::Message(bytes))) => serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("the peer wrote a frame that is not JSON ({e}): {bytes:?}")),
            Ok(Some(Frame::Oversized(n))) => panic!("the peer wrote an oversized frame of {n} bytes"),
            Ok(None) => panic!("the peer closed the connection"),
            Err(e) => panic!("reading from the peer failed: {e}"),
        }
    }

    /// The next frame, or `None` at end of stream.
    pub async fn recv_or_eof(&mut self) -> Option<Value> {
        match within("a frame or EOF from the peer", self.reader.read_frame()).await {
            Ok(Some(Frame::Message(bytes))) => Some(serde_json::from_slice(&bytes).expect("JSON")),
            Ok(Some(Frame::Oversized(n))) => panic!("the peer wrote an oversized frame of {n} bytes"),
            Ok(None) => None,
            Err(e) => panic!("reading from the peer failed: {e}"),
        }
    }

    /// Send a request and return the very next frame (which must be its response).
    pub async fn request(&mut self, frame: &Value) -> Value {
        self.send_json(frame).await;
        let reply = self.recv().await;
        assert_eq!(
            reply["id"], frame["id"],
            "the next frame is not the reply to {frame}: {reply}"
        );
        reply
    }

    /// Run the handshake as a 2025-11-25 client with no capabilities.
    pub async fn initialize(&mut self) -> Value {
        self.initialize_as("2025-11-25", json!({})).await
    }

    /// Run the handshake asking for `version`, declaring `capabilities`; the result.
    pub async fn initialize_as(&mut self, version: &str, capabilities: Value) -> Value {
        let reply = self
            .request(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "raw-test-client", "version": "0.0.0"}
                }
            }))
            .await;
        assert!(reply.get("result").is_some(), "initialize failed: {reply}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        reply["result"].clone()
    }

    /// Send a ping and require that the very next frame is its reply: proves that nothing was
    /// sent in answer to what came before, and that the connection still works.
    pub async fn assert_silent_then_ping(&mut self, after: &str) {
        self.next_ping += 1;
        let id = self.next_ping;
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let reply = self.recv().await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "after {after}, the next frame was not the ping's reply"
        );
    }
}

/// Assert that `reply` is a JSON-RPC error with `code` and `id`.
pub fn assert_error(reply: &Value, code: i64, id: &Value) {
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    assert_eq!(reply["error"]["code"], code, "wrong error code in {reply}");
    assert!(reply["error"]["message"].is_string(), "no error message in {reply}");
    assert!(reply.get("result").is_none(), "{reply}");
    assert_eq!(&reply["id"], id, "wrong id in {reply}");
    assert!(
        reply.get("id").is_some(),
        "no id member (JSON-RPC requires one, null if unknown): {reply}"
    );
}
