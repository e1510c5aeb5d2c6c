//! Two HTTP servers of one process sharing one set of in-memory backends act as one server:
//! a session opened on A is served on B; a stream of A resumed on B replays the missed events
//! once and goes on live; an elicitation answered through B completes A's request; a
//! cancellation sent to B stops the request running on A; a list_changed made on A reaches
//! the session's GET stream on B; a `requestState` sealed by A opens on B; what a session was
//! shown on A it sees on B; and the probes answer. Real sockets, the shared HTTP harness.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::http::*;
use mcpkit::server::backend::Backends;
use mcpkit::server::http::HttpServer;
use mcpkit::server::{Args, RequestContext, ToolDef};
use mcpkit::types::schema::{ElicitParams, ElicitationSchema};
use mcpkit::Server;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    greeting: String,
}

fn name_form() -> ElicitParams {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    ElicitParams::form(
        "What is your name?",
        ElicitationSchema(schema.as_object().unwrap().clone()),
    )
}

/// What the `hang` tool saw: it started, and its request's cancellation token.
#[derive(Default)]
struct Hang {
    started: AtomicBool,
    token: std::sync::Mutex<Option<CancellationToken>>,
}

impl Hang {
    fn cancelled(&self) -> bool {
        self.token
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }
}

/// The test server plus `greet` (asks the client for a name) and `hang` (waits to be
/// cancelled). Each instance builds its own, as separate processes would.
fn instance_server(hang: Arc<Hang>) -> Server {
    Server::builder()
        .name("cluster-test", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            |Args(a): Args<GreetArgs>| async move { a.greeting },
        ))
        .tool(ToolDef::new("ten", |cx: RequestContext| async move {
            for i in 1..=10 {
                cx.progress(f64::from(i), Some(10.0), None);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
            "ten done"
        }))
        .tool(ToolDef::new(
            "greet",
            |cx: RequestContext, Args(a): Args<GreetArgs>| async move {
                let answer = cx.input(Some("user_name"), name_form()).await?;
                let content = answer.content.unwrap_or_default();
                let name = content.get("name").and_then(Value::as_str).unwrap_or("?").to_owned();
                Ok::<_, mcpkit::Error>(format!("{}, {name}!", a.greeting))
            },
        ))
        .tool(ToolDef::new("admin", || async { "admin work" }).hidden())
        .tool(ToolDef::new("unlock", |cx: RequestContext| async move {
            cx.show(mcpkit::server::Select::name("admin"));
            "unlocked"
        }))
        .tool(ToolDef::new("hang", move |cx: RequestContext| {
            let hang = hang.clone();
            async move {
                *hang.token.lock().unwrap() = Some(cx.cancellation().clone());
                hang.started.store(true, Ordering::SeqCst);
                cx.cancellation().cancelled().await;
                "cancelled"
            }
        }))
        .build()
}

/// Instances `a` and `b` on their own sockets, sharing `backends`; their servers (for run-time
/// changes) and what `hang` saw on `a`.
struct Pair {
    a: Served,
    b: Served,
    server_a: Server,
    hang_a: Arc<Hang>,
}

async fn pair(backends: &Backends) -> Pair {
    let hang_a = Arc::new(Hang::default());
    let server_a = instance_server(hang_a.clone());
    let server_b = instance_server(Arc::default());
    let serve = |server: Server, name: &str| {
        let http = HttpServer::new(server)
            .config(config())
            .scale_out(backends.clone().with_instance_id(name));
        Served::start(http)
    };
    let a = serve(server_a.clone(), "a").await;
    let b = serve(server_b, "b").await;
    Pair { a, b, server_a, hang_a }
}

/// initialize (declaring elicitation) + notifications/initialized on `mcp`: the session id.
async fn open(mcp: &Mcp) -> String {
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": VERSION, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    let r = send(mcp.post(None, init)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let session = header(&r, "mcp-session-id").expect("an Mcp-Session-Id");
    let r = send(mcp.post(Some(&session), INITIALIZED)).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    session
}

fn tool_call(id: i64, tool: &str, arguments: Value) -> String {
    request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
}

fn text_of(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_session_opened_on_one_instance_is_served_on_another() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let s = open(&a).await;
    b.assert_serves(&s, "initialize on A").await;
    let (status, reply) = b.call(Some(&s), tool_call(3, "echo", json!({"greeting": "hi"}))).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(text_of(&reply), "hi");
    // Ended on B, it is gone on A as well.
    assert_eq!(send(b.delete(&s)).await.status(), StatusCode::OK);
    let mut status = StatusCode::OK;
    for _ in 0..50 {
        status = a.call(Some(&s), request(4, "ping", json!({}))).await.0;
        if status == StatusCode::NOT_FOUND {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, StatusCode::NOT_FOUND, "a session deleted on B is unknown on A");
    assert_eq!(backends.sessions.count().await.unwrap(), 0);
}

#[tokio::test]
async fn what_a_session_was_shown_on_one_instance_it_sees_on_another() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let s = open(&a).await;
    let (_, hidden) = b.call(Some(&s), tool_call(1, "admin", json!({}))).await;
    assert_eq!(hidden["error"]["message"], "Unknown tool: admin", "{hidden}");
    let (_, unlocked) = a.call(Some(&s), tool_call(2, "unlock", json!({}))).await;
    assert_eq!(text_of(&unlocked), "unlocked", "{unlocked}");
    // The change travels with the session record: B serves the session as A left it.
    let mut reply = Value::Null;
    for id in 3..50 {
        reply = b.call(Some(&s), tool_call(id, "admin", json!({}))).await.1;
        if text_of(&reply) == "admin work" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(text_of(&reply), "admin work", "{reply}");
    let (_, other) = b.call(Some(&open(&b).await), tool_call(60, "admin", json!({}))).await;
    assert_eq!(
        other["error"]["message"], "Unknown tool: admin",
        "another session still does not see it"
    );
}

#[tokio::test]
async fn a_stream_of_one_instance_resumed_on_another_replays_the_missed_events_once() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let s = open(&a).await;
    let r = send(a.post(Some(&s), progress_body(10, "ten", "t"))).await;
    let mut sse = SseReader::new(r);
    let prime = sse.next().await.expect("priming event");
    let mut last = prime.id.clone().expect("a priming id");
    let mut seen = Vec::new();
    for _ in 0..3 {
        let e = sse.next().await.expect("a progress event");
        seen.push(e.json()["params"]["progress"].as_f64().unwrap());
        last = e.id.clone().expect("an event id");
    }
    drop(sse);

    let r = send(b.get(&s).header("last-event-id", &last)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut resumed = SseReader::new(r);
    let rest = resumed.rest().await;
    assert!(resumed.error.is_none(), "{:?}", resumed.error);
    let (result, progress) = rest.split_last().expect("at least the result");
    for e in progress {
        seen.push(e.json()["params"]["progress"].as_f64().unwrap());
    }
    let want: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(seen, want, "resumed on B after {last}: {rest:?}");
    assert_eq!(result.json()["id"], 10);
    assert_eq!(text_of(&result.json()), "ten done");
}

#[tokio::test]
async fn an_elicitation_answered_through_another_instance_completes_the_request() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let s = open(&a).await;
    let r = send(a.post(Some(&s), tool_call(5, "greet", json!({"greeting": "Hello"})))).await;
    let mut sse = SseReader::new(r);
    let asked = loop {
        let e = sse.next().await.expect("the elicitation request");
        if e.data.as_deref().is_some_and(|d| !d.is_empty()) {
            break e.json();
        }
    };
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let answer =
        json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    let r = send(b.post(Some(&s), answer.to_string())).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let result = sse.next().await.expect("the result").json();
    assert_eq!(result["id"], 5);
    assert_eq!(text_of(&result), "Hello, Ada!", "{result}");
}

#[tokio::test]
async fn a_cancellation_sent_to_another_instance_stops_the_request() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let s = open(&a).await;
    let call = tokio::spawn(send(a.post(Some(&s), tool_call(7, "hang", json!({})))));
    for _ in 0..100 {
        if p.hang_a.started.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(p.hang_a.started.load(Ordering::SeqCst), "hang runs on A");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}});
    assert_eq!(
        send(b.post(Some(&s), cancel.to_string())).await.status(),
        StatusCode::ACCEPTED
    );
    for _ in 0..100 {
        if p.hang_a.cancelled() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(p.hang_a.cancelled(), "the cancellation reached A");
    call.abort();
}

#[tokio::test]
async fn a_list_change_made_on_one_instance_reaches_the_get_stream_on_another() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let s = open(&a).await;
    let r = send(b.get(&s)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut get = SseReader::new(r);
    let _prime = get.next().await.expect("priming event");
    // A learns that B holds the GET stream now.
    tokio::time::sleep(Duration::from_millis(100)).await;
    p.server_a.add_tool(ToolDef::new("added", || async { "new" }));
    let e = get.next().await.expect("the list_changed notification");
    assert_eq!(e.json()["method"], "notifications/tools/list_changed", "{:?}", e.data);
    let again = tokio::time::timeout(Duration::from_millis(300), get.next_untimed()).await;
    assert!(again.is_err(), "delivered once: {again:?}");
}

fn stateless_call(id: i64, arguments: Value, extra: Value) -> String {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
    });
    let mut params = json!({"name": "greet", "arguments": arguments, "_meta": meta});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

async fn post_stateless(mcp: &Mcp, body: String) -> Value {
    let req = mcp
        .raw(Method::POST, "/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "greet")
        .body(body);
    let r = send(req).await;
    assert_eq!(r.status(), StatusCode::OK);
    json_body(r).await
}

#[tokio::test]
async fn a_request_state_sealed_by_one_instance_opens_on_another() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    let (a, b) = (Mcp::new(&p.a.url), Mcp::new(&p.b.url));
    let first = post_stateless(&a, stateless_call(1, json!({"greeting": "Hello"}), json!({}))).await;
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    let extra = json!({"inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}}, "requestState": state});
    let second = post_stateless(&b, stateless_call(2, json!({"greeting": "Hello"}), extra)).await;
    assert_eq!(second["result"]["resultType"], "complete", "{second}");
    assert_eq!(text_of(&second), "Hello, Ada!");
}

#[tokio::test]
async fn the_probes_say_up_and_ready() {
    let backends = Backends::memory();
    let p = pair(&backends).await;
    for served in [&p.a, &p.b] {
        let mcp = Mcp::new(&served.url);
        for (path, body) in [("/healthz", "ok\n"), ("/readyz", "ready\n")] {
            let r = send(mcp.raw(Method::GET, path)).await;
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            assert_eq!(r.bytes().await.unwrap(), body.as_bytes(), "{path}");
        }
    }
    // A lone instance has the probes too.
    let lone = start(test_server(), config()).await;
    let r = send(Mcp::new(&lone.url).raw(Method::GET, "/readyz")).await;
    assert_eq!(r.status(), StatusCode::OK);
}
