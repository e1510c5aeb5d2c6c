//! The 2026-07-28 rules of the Streamable HTTP endpoint seen from the wire (spec: 2026-07-28
//! `basic/transports/streamable-http` "Request Metadata", "Server Validation", `basic/index`
//! "_meta", `basic/versioning`): `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` /
//! `MCP-Protocol-Version` checked against the body (400 + -32020), header names compared without
//! case and values trimmed, unknown versions (400 + -32022), removed and unknown methods
//! (404 + -32601), missing `_meta` (400 + -32602), resource not found (-32602 with the uri),
//! the members every stateless result carries, per-request logging, and both eras served on one
//! URL. Real sockets on 127.0.0.1 (reqwest, and raw HTTP/1.1 where header spelling matters).
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::time::Duration;

use common::http::Served;
use common::within;
use mcpkit::server::http::HttpServer;
use mcpkit::server::{RawArgs, RequestContext, ResourceDef, ToolDef};
use mcpkit::types::schema::{JsonObject, LoggingLevel};
use mcpkit::Server;
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const V: &str = "2026-07-28";
const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

fn object(v: Value) -> JsonObject {
    v.as_object().unwrap().clone()
}

fn server() -> Server {
    Server::builder()
        .name("headers-test", "2.0.0")
        .tool(ToolDef::new("echo", |RawArgs(a): RawArgs| async move {
            a.get("text").and_then(Value::as_str).unwrap_or("").to_owned()
        }))
        .tool(
            ToolDef::new("region", |RawArgs(a): RawArgs| async move {
                format!(
                    "region={} count={}",
                    a.get("region").and_then(Value::as_str).unwrap_or("-"),
                    a.get("count").map_or("-".to_owned(), Value::to_string)
                )
            })
            .input_schema(object(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "count": {"type": "integer", "x-mcp-header": "Count"},
                    "query": {"type": "string"}
                }
            }))),
        )
        .tool(ToolDef::new("logs", |cx: RequestContext| async move {
            cx.log(LoggingLevel::Debug, Some("t"), "debug line").unwrap();
            cx.log(LoggingLevel::Warning, Some("t"), "warning line").unwrap();
            // Give the notifications a head start on the reply.
            tokio::time::sleep(Duration::from_millis(10)).await;
            "logged"
        }))
        // Logs and answers in one poll: nothing gives the notification a head start.
        .tool(ToolDef::new("logs-at-once", |cx: RequestContext| async move {
            cx.log(LoggingLevel::Warning, Some("t"), "at once").unwrap();
            "logged"
        }))
        .resource(ResourceDef::text("test://doc", "doc", "text/plain", "the doc"))
        .build()
}

struct Running {
    url: String,
    /// One client per test: building one loads the trust roots, which is slow.
    http: reqwest::Client,
    addr: std::net::SocketAddr,
    _served: Served,
}

async fn start() -> Running {
    let served = Served::start(HttpServer::new(server()).sse_legacy(true)).await;
    Running {
        url: served.url.clone(),
        http: reqwest::Client::new(),
        addr: served.addr,
        _served: served,
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "headers-client", "version": "0"}
    })
}

fn body(method: &str, mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta();
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// The headers a conforming 2026-07-28 client sends for `frame`.
fn proper_headers(frame: &Value) -> Vec<(String, String)> {
    let method = frame["method"].as_str().unwrap();
    let mut h = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version".to_owned(), V.to_owned()),
        ("mcp-method".to_owned(), method.to_owned()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => frame["params"]["name"].as_str(),
        "resources/read" => frame["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(n) = name {
        h.push(("mcp-name".to_owned(), n.to_owned()));
    }
    h
}

/// POST `frame` with the proper headers, changed by `overrides` (`None` removes a header).
async fn post(s: &Running, frame: &Value, overrides: &[(&str, Option<&str>)]) -> reqwest::Response {
    let mut headers = proper_headers(frame);
    for (name, value) in overrides {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if let Some(v) = value {
            headers.push(((*name).to_owned(), (*v).to_owned()));
        }
    }
    let mut b = s.http.post(&s.url).body(frame.to_string());
    for (n, v) in headers {
        b = b.header(n, v);
    }
    within("an HTTP response", b.send()).await.unwrap()
}

/// The status and JSON body of a plain-JSON reply.
async fn call(s: &Running, frame: &Value, overrides: &[(&str, Option<&str>)]) -> (StatusCode, Value) {
    let r = post(s, frame, overrides).await;
    let status = r.status();
    assert!(r.headers().get("mcp-session-id").is_none(), "no sessions on this wire");
    let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
    let bytes = within("the body", r.bytes()).await.unwrap();
    assert!(ct.starts_with("application/json"), "content-type {ct}: {bytes:?}");
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// Assert a 400 HeaderMismatch whose message mentions `what`.
fn assert_mismatch((status, reply): &(StatusCode, Value), what: &str) {
    assert_eq!(*status, StatusCode::BAD_REQUEST, "{reply}");
    assert_eq!(reply["error"]["code"], HEADER_MISMATCH, "{reply}");
    assert_eq!(reply["id"], 1, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Header mismatch: "), "{message}");
    assert!(message.contains(what), "{message:?} should mention {what:?}");
}

fn server_info() -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": "headers-test", "version": "2.0.0"}})
}

fn echo(text: &str) -> Value {
    body("tools/call", json!({"name": "echo", "arguments": {"text": text}}))
}

#[tokio::test]
async fn a_proper_request_gets_an_exact_stateless_result() {
    let s = start().await;
    let (status, reply) = call(&s, &echo("hi"), &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}],
            "_meta": server_info()
        }})
    );
}

#[tokio::test]
async fn list_and_read_results_carry_caching_hints() {
    let s = start().await;
    let (status, reply) = call(&s, &body("resources/list", json!({})), &[]).await;
    assert_eq!(status, StatusCode::OK);
    let r = &reply["result"];
    assert_eq!(r["resultType"], "complete", "{reply}");
    assert_eq!(r["ttlMs"], 0, "{reply}");
    assert_eq!(r["cacheScope"], "public", "{reply}");
    assert_eq!(r["_meta"], server_info());
    let (_, reply) = call(&s, &body("resources/read", json!({"uri": "test://doc"})), &[]).await;
    assert_eq!(
        reply["result"],
        json!({
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "contents": [{"uri": "test://doc", "mimeType": "text/plain", "text": "the doc"}],
            "_meta": server_info()
        })
    );
}

#[tokio::test]
async fn server_discover_answers_with_versions_capabilities_and_identity() {
    let s = start().await;
    let (status, reply) = call(&s, &body("server/discover", json!({})), &[]).await;
    assert_eq!(status, StatusCode::OK);
    let r = &reply["result"];
    assert_eq!(
        r["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]),
        "{reply}"
    );
    assert!(r["capabilities"]["tools"].is_object(), "{reply}");
    assert!(r["capabilities"]["resources"].is_object(), "{reply}");
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].is_u64() && r["cacheScope"].is_string(), "{reply}");
    assert_eq!(r["_meta"], server_info());
}

#[tokio::test]
async fn mcp_method_missing_or_different_is_header_mismatch() {
    let s = start().await;
    let frame = echo("x");
    assert_mismatch(
        &call(&s, &frame, &[("mcp-method", None)]).await,
        "Mcp-Method header is required",
    );
    assert_mismatch(
        &call(&s, &frame, &[("mcp-method", Some("tools/list"))]).await,
        r#"Mcp-Method header value "tools/list" does not match body method "tools/call""#,
    );
    // Values are case-sensitive.
    assert_mismatch(
        &call(&s, &frame, &[("mcp-method", Some("Tools/Call"))]).await,
        "does not match body method",
    );
}

#[tokio::test]
async fn mcp_name_missing_or_different_is_header_mismatch() {
    let s = start().await;
    let frame = echo("x");
    assert_mismatch(
        &call(&s, &frame, &[("mcp-name", None)]).await,
        "Mcp-Name header is required for tools/call",
    );
    assert_mismatch(
        &call(&s, &frame, &[("mcp-name", Some("region"))]).await,
        r#"Mcp-Name header value "region" does not match body value "echo""#,
    );
    let read = body("resources/read", json!({"uri": "test://doc"}));
    assert_mismatch(
        &call(&s, &read, &[("mcp-name", Some("test://other"))]).await,
        "does not match body value",
    );
    // The Base64 form of the right value is accepted.
    let (status, reply) = call(&s, &read, &[("mcp-name", Some("=?base64?dGVzdDovL2RvYw==?="))]).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
}

#[tokio::test]
async fn protocol_version_header_must_match_meta() {
    let s = start().await;
    let mut frame = echo("x");
    frame["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    assert_mismatch(
        &call(&s, &frame, &[]).await,
        r#"MCP-Protocol-Version header "2026-07-28" does not match _meta protocolVersion "2025-11-25""#,
    );
}

#[tokio::test]
async fn unknown_version_is_unsupported_with_the_supported_list() {
    let s = start().await;
    let mut frame = echo("x");
    frame["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let (status, reply) = call(&s, &frame, &[("mcp-protocol-version", Some("2099-01-01"))]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert_eq!(reply["error"]["code"], UNSUPPORTED_VERSION, "{reply}");
    assert_eq!(
        reply["error"]["data"],
        json!({
            "requested": "2099-01-01",
            "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
        })
    );
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404_method_not_found() {
    let s = start().await;
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "no/such/method",
    ] {
        let params = match method {
            "resources/subscribe" | "resources/unsubscribe" => json!({"uri": "test://doc"}),
            "logging/setLevel" => json!({"level": "info"}),
            _ => json!({}),
        };
        let (status, reply) = call(&s, &body(method, params), &[]).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}: {reply}");
        assert_eq!(reply["error"]["code"], METHOD_NOT_FOUND, "{method}: {reply}");
        assert_eq!(reply["id"], 1);
    }
}

#[tokio::test]
async fn missing_meta_fields_are_400_invalid_params() {
    let s = start().await;
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let (status, reply) = call(&s, &frame, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert_eq!(reply["error"]["code"], INVALID_PARAMS, "{reply}");
    assert_eq!(
        reply["error"]["data"],
        json!({"path": "_meta.io.modelcontextprotocol/protocolVersion"})
    );
    // Version but no capabilities.
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                       "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": V}}});
    let (status, reply) = call(&s, &frame, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert_eq!(
        reply["error"]["data"],
        json!({"path": "_meta.io.modelcontextprotocol/clientCapabilities"})
    );
    // clientInfo is optional.
    let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": {}}}});
    let (status, reply) = call(&s, &frame, &[]).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
}

#[tokio::test]
async fn resource_not_found_is_invalid_params_with_the_uri() {
    let s = start().await;
    let frame = body("resources/read", json!({"uri": "test://missing"}));
    let (status, reply) = call(&s, &frame, &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{reply}");
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 1, "error": {
            "code": INVALID_PARAMS,
            "message": "Resource not found: test://missing",
            "data": {"uri": "test://missing"}
        }})
    );
}

fn region_call(args: Value) -> Value {
    body("tools/call", json!({"name": "region", "arguments": args}))
}

async fn region_text(s: &Running, frame: &Value, headers: &[(&str, Option<&str>)]) -> String {
    let (status, reply) = call(s, frame, headers).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    reply["result"]["content"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn mcp_param_headers_are_decoded_and_checked() {
    let s = start().await;
    let plain = region_call(json!({"region": "us-west1", "query": "q"}));
    assert_eq!(
        region_text(&s, &plain, &[("mcp-param-region", Some("us-west1"))]).await,
        "region=us-west1 count=-"
    );
    // Base64 form for a value that is not plain header text ("Zürich").
    let unicode = region_call(json!({"region": "Zürich"}));
    assert_eq!(
        region_text(&s, &unicode, &[("mcp-param-region", Some("=?base64?WsO8cmljaA==?="))]).await,
        "region=Zürich count=-"
    );
    // Integers compare numerically.
    let counted = region_call(json!({"count": 42}));
    assert_eq!(
        region_text(&s, &counted, &[("mcp-param-count", Some("42.0"))]).await,
        "region=- count=42"
    );
    // Neither in the body nor in the headers (or null in the body): nothing to check.
    assert_eq!(
        region_text(&s, &region_call(json!({"query": "q"})), &[]).await,
        "region=- count=-"
    );
    assert_eq!(
        region_text(&s, &region_call(json!({"region": null})), &[]).await,
        "region=- count=-"
    );

    // Value in the body, header missing.
    assert_mismatch(
        &call(&s, &plain, &[]).await,
        "the Mcp-Param-Region header is required when arguments.region is present",
    );
    // Different value.
    assert_mismatch(
        &call(&s, &plain, &[("mcp-param-region", Some("eu-west1"))]).await,
        r#"Mcp-Param-Region header value "eu-west1" does not match body value "us-west1""#,
    );
    // Invalid Base64: missing padding, bad alphabet.
    assert_mismatch(
        &call(&s, &unicode, &[("mcp-param-region", Some("=?base64?WsO8cmljaA?="))]).await,
        "Mcp-Param-Region: invalid Base64",
    );
    assert_mismatch(
        &call(&s, &unicode, &[("mcp-param-region", Some("=?base64?WsO8c$ljaA==?="))]).await,
        "Mcp-Param-Region: invalid Base64",
    );
    // Base64 of the wrong value.
    assert_mismatch(
        &call(&s, &unicode, &[("mcp-param-region", Some("=?base64?WnVyaWNo?="))]).await,
        "does not match body value",
    );
    assert_mismatch(
        &call(&s, &counted, &[("mcp-param-count", Some("43"))]).await,
        "Mcp-Param-Count header value",
    );
}

/// One raw HTTP/1.1 POST (headers spelt exactly as given); status line and body.
async fn raw_post(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}:{v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    within("a raw HTTP response", stream.read_to_end(&mut out))
        .await
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    let status: u16 = text.split(' ').nth(1).unwrap().parse().unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    (
        status,
        serde_json::from_str(body.trim()).unwrap_or_else(|_| panic!("{text}")),
    )
}

#[tokio::test]
async fn header_names_are_case_insensitive_and_values_trimmed() {
    let s = start().await;
    let frame = region_call(json!({"region": "us-west1"})).to_string();
    let headers = [
        ("CONTENT-TYPE", " application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Protocol-Version", "\t2026-07-28 "),
        ("MCP-METHOD", "  tools/call\t"),
        ("mcp-NAME", " region "),
        ("Mcp-Param-REGION", "  us-west1  "),
    ];
    let (status, reply) = raw_post(s.addr, &headers, &frame).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"], "region=us-west1 count=-",
        "{reply}"
    );
    // The same spelling with a wrong value is still checked.
    let mut wrong = headers;
    wrong[4] = ("mcp-NAME", " echo ");
    let (status, reply) = raw_post(s.addr, &wrong, &frame).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(reply["error"]["code"], HEADER_MISMATCH, "{reply}");
}

/// Every JSON message of an SSE body (or the one JSON body).
async fn messages(r: reqwest::Response) -> Vec<Value> {
    let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
    let text = within("the body", r.text()).await.unwrap();
    if ct.starts_with("application/json") {
        return vec![serde_json::from_str(&text).unwrap()];
    }
    assert_eq!(ct, "text/event-stream");
    mcpkit_test_support::sse::events(&text)
        .iter()
        .filter(|e| e.has_message())
        .map(|e| e.json())
        .collect()
}

#[tokio::test]
async fn log_messages_only_for_requests_that_ask_for_a_level() {
    let s = start().await;
    let frame = body("tools/call", json!({"name": "logs", "arguments": {}}));
    let got = messages(post(&s, &frame, &[]).await).await;
    assert_eq!(got.len(), 1, "no log messages without a logLevel: {got:?}");
    assert_eq!(got[0]["result"]["content"][0]["text"], "logged");

    let mut frame = frame;
    frame["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let got = messages(post(&s, &frame, &[]).await).await;
    // Only the warning passes an `info` threshold; then the result.
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        got[0],
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "warning", "logger": "t", "data": "warning line"}})
    );
    assert_eq!(got[1]["id"], 1);
    assert_eq!(got[1]["result"]["content"][0]["text"], "logged");
}

#[tokio::test]
async fn a_log_sent_just_before_the_reply_comes_ahead_of_it() {
    let s = start().await;
    let mut frame = body("tools/call", json!({"name": "logs-at-once", "arguments": {}}));
    frame["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let r = post(&s, &frame, &[]).await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let got = messages(r).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0]["params"]["data"], "at once", "{got:?}");
    assert_eq!(got[1]["result"]["content"][0]["text"], "logged", "{got:?}");
    // Without a level nothing is sent before the reply: plain JSON.
    let frame = body("tools/call", json!({"name": "logs-at-once", "arguments": {}}));
    let r = post(&s, &frame, &[]).await;
    assert_eq!(r.headers()["content-type"], "application/json");
}

async fn json_of(r: reqwest::Response) -> Value {
    let bytes = within("the body", r.bytes()).await.unwrap();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {bytes:?}"))
}

#[tokio::test]
async fn both_eras_on_one_url() {
    let s = start().await;
    let http = &s.http;
    // A 2025-11-25 client: initialize opens a session.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old-client", "version": "0"}}});
    let r = http
        .post(&s.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let v: Value = json_of(r).await;
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25", "{v}");
    assert_eq!(v["result"]["serverInfo"]["name"], "headers-test");
    let old = |frame: Value| {
        http.post(&s.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(frame.to_string())
            .send()
    };
    let r = old(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);

    // A 2026-07-28 request in between, on the same URL, without a session.
    let (status, reply) = call(&s, &echo("stateless"), &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(reply["result"]["resultType"], "complete");

    // The old session goes on, with handshake-era results (no resultType, no _meta).
    let r = old(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": "legacy"}}}))
    .await
    .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = json_of(r).await;
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "legacy"}]}})
    );
    let r = old(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await.unwrap();
    assert_eq!(json_of(r).await, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
}
