//! The floor: the least work an MCP `echo` server can do, as a measure of the machine's limit.
//!
//! It parses each frame into a borrowed envelope, copies the request id (and, for `tools/call`,
//! the raw `message` argument) into a canned reply and writes it. No schema, no dispatch table,
//! no validation beyond "is this JSON".
//!
//! Usage:
//!   floor stdio        newline-delimited JSON-RPC on stdin/stdout; replies are buffered and flushed
//!                      when no more input is buffered (so pipelined requests share writes)
//!   floor http ADDR    Streamable HTTP at http://ADDR/mcp with hyper (HTTP/1.1, TCP_NODELAY);
//!                      prints `listening on http://ADDR/mcp` on stdout once bound. JSON replies,
//!                      202 for notifications, a session id on `initialize` (never checked).
//!
//! Methods: `initialize`, `server/discover`, `tools/list`, `tools/call` (echo), `ping`; any other
//! request gets a "method not found" error; notifications get nothing.

use std::convert::Infallible;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    arguments: Option<EchoArgs<'a>>,
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    message: Option<&'a RawValue>,
}

const INIT: &str =
    r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"0"}}"#;
const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"0"}}}"#;
const LIST: &str = r#"{"tools":[{"name":"echo","description":"Echoes the message back","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}"#;

/// What to do with one frame.
enum Reply {
    /// Nothing to send (a notification, or a response from the client).
    None,
    /// Reply bytes (no trailing newline); `initialize` is flagged for the HTTP session header.
    Frame { bytes: Vec<u8>, initialize: bool },
}

/// Parse one frame and build its reply. `stateless_era` adds the 2026-07-28 `resultType`.
fn answer(frame: &[u8], stateless_era: bool) -> Reply {
    let Ok(env) = serde_json::from_slice::<Envelope>(frame) else {
        return Reply::Frame {
            bytes: br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#.to_vec(),
            initialize: false,
        };
    };
    let (Some(id), Some(method)) = (env.id, env.method) else {
        return Reply::None;
    };
    let mut out = Vec::with_capacity(160);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    let result: &str = match &*method {
        "tools/call" => {
            let msg = env
                .params
                .and_then(|p| serde_json::from_str::<CallParams>(p.get()).ok())
                .and_then(|p| p.arguments)
                .and_then(|a| a.message)
                .map_or("\"\"", |m| m.get());
            out.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
            out.extend_from_slice(msg.as_bytes());
            out.extend_from_slice(if stateless_era {
                br#"}],"resultType":"complete"}}"#
            } else {
                b"}]}}"
            });
            return Reply::Frame {
                bytes: out,
                initialize: false,
            };
        }
        "initialize" => INIT,
        "server/discover" => DISCOVER,
        "tools/list" => LIST,
        "ping" => "{}",
        _ => {
            out.extend_from_slice(br#","error":{"code":-32601,"message":"Method not found"}}"#);
            return Reply::Frame {
                bytes: out,
                initialize: false,
            };
        }
    };
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    Reply::Frame {
        bytes: out,
        initialize: &*method == "initialize",
    }
}

fn stdio() -> std::io::Result<()> {
    // Our own buffer (larger than stdin's, so reads bypass it) to see whether input is pending.
    let mut input = std::io::BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if let Reply::Frame { bytes, .. } = answer(&line, false) {
            output.write_all(&bytes)?;
            output.write_all(b"\n")?;
        }
        // Flush when idle: only once every frame already read has been answered.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

static SESSIONS: AtomicU64 = AtomicU64::new(0);

async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let empty = |status| {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = status;
        r
    };
    match *req.method() {
        Method::POST => {}
        Method::DELETE => return Ok(empty(StatusCode::OK)),
        _ => return Ok(empty(StatusCode::METHOD_NOT_ALLOWED)),
    }
    let stateless_era = req
        .headers()
        .get("mcp-protocol-version")
        .is_some_and(|v| v.as_bytes() == b"2026-07-28");
    let Ok(body) = req.into_body().collect().await else {
        return Ok(empty(StatusCode::BAD_REQUEST));
    };
    match answer(&body.to_bytes(), stateless_era) {
        Reply::None => Ok(empty(StatusCode::ACCEPTED)),
        Reply::Frame { bytes, initialize } => {
            let mut r = Response::new(Full::new(Bytes::from(bytes)));
            r.headers_mut().insert(
                "content-type",
                hyper::header::HeaderValue::from_static("application/json"),
            );
            if initialize {
                let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
                if let Ok(v) = hyper::header::HeaderValue::from_str(&format!("floor-{n}")) {
                    r.headers_mut().insert("mcp-session-id", v);
                }
            }
            Ok(r)
        }
    }
}

async fn http(addr: &str) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(tcp);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, hyper::service::service_fn(handle))
                .await;
        });
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["stdio"] => stdio(),
        ["http", addr] => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(http(addr)),
        _ => {
            eprintln!("usage: floor stdio | http ADDR");
            std::process::exit(2)
        }
    }
}
