//! A trivial MCP server that answers every call with the same canned JSON, for measuring the
//! ceiling of `mcpkit bench` (the server does next to nothing, so the load generator is what is
//! measured). Not a real server: it ignores sessions and capabilities.
//!
//! ```text
//! cargo run --release -p mcpkit-cli --example canned_server                      # stdio
//! cargo run --release -p mcpkit-cli --example canned_server -- --http 127.0.0.1:8931
//! ```
//!
//! It answers `initialize`, `tools/list` (one tool, `canned`), `tools/call`, `ping`; anything
//! else gets -32601. Over HTTP it serves POST /mcp (plain JSON replies, `Mcp-Session-Id: canned`),
//! 405 on GET and 200 on DELETE.

use std::io::{BufRead, Write};

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
}

const INIT: &str =
    r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"0"}}"#;
const LIST: &str = r#"{"tools":[{"name":"canned","inputSchema":{"type":"object"}}]}"#;
const CALL: &str = r#"{"content":[{"type":"text","text":"ok"}]}"#;

/// The reply to one frame, or `None` for a notification or response.
fn answer(frame: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(env) = serde_json::from_slice::<Envelope<'_>>(frame) else {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
        return true;
    };
    let (Some(id), Some(method)) = (env.id, env.method) else {
        return false;
    };
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    let result = match method {
        "tools/call" => CALL,
        "initialize" => INIT,
        "tools/list" => LIST,
        "ping" => "{}",
        _ => {
            out.extend_from_slice(br#","error":{"code":-32601,"message":"Method not found"}}"#);
            return true;
        }
    };
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    true
}

fn stdio() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let mut output = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = Vec::new();
    let mut reply = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return output.flush();
        }
        reply.clear();
        if answer(&line, &mut reply) {
            reply.push(b'\n');
            output.write_all(&reply)?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}

async fn post(body: axum::body::Bytes) -> Response {
    let mut reply = Vec::with_capacity(128);
    if !answer(&body, &mut reply) {
        return StatusCode::ACCEPTED.into_response();
    }
    let mut r = ([(header::CONTENT_TYPE, "application/json")], reply).into_response();
    r.headers_mut()
        .insert("mcp-session-id", HeaderValue::from_static("canned"));
    r
}

async fn http(addr: &str) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("canned_server: listening on http://{}/mcp", listener.local_addr()?);
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(post)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::OK }),
    );
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => stdio(),
        [flag, addr] if flag == "--http" => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(http(addr)),
        _ => {
            eprintln!("usage: canned_server [--http ADDR]");
            std::process::exit(2);
        }
    }
}
