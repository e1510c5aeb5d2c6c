//! The serverless example, run as the function runtime runs it, without the cloud: the built
//! binary polls a local stand-in of the runtime API (`AWS_LAMBDA_RUNTIME_API`) for invocations,
//! each an HTTP API event (payload format 2.0) carrying one MCP POST, and posts back the
//! HTTP response the adapter made of the endpoint's. Nothing in between is mocked: the event
//! passes through `lambda_http`'s adapter and mcpkit's endpoint as it would in a deployment.
//!
//! Pinned: the stateless era (2026-07-28: `server/discover`, `tools/list`, `tools/call`, no
//! session) and the handshake era in sessionless mode (`initialize` without `Mcp-Session-Id`,
//! then `tools/call` alone), and the `Host` check.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, Mutex};

/// The host name the events say the function was reached at (in `MCP_ALLOWED_HOSTS`).
const HOST: &str = "abc123.lambda-url.us-east-1.on.aws";
/// How long one invocation may take, start-up of the binary included.
const WAIT: Duration = Duration::from_secs(60);

/// The runtime API stand-in: invocations queued by the test, answers routed back by id.
struct RuntimeApi {
    queue: Mutex<mpsc::UnboundedReceiver<(String, Value)>>,
    answers: Mutex<HashMap<String, oneshot::Sender<Result<Value, String>>>>,
}

async fn next(State(api): State<Arc<RuntimeApi>>) -> impl IntoResponse {
    let Some((id, event)) = api.queue.lock().await.recv().await else {
        return (StatusCode::GONE, HeaderMap::new(), String::new());
    };
    let deadline = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + WAIT;
    let mut headers = HeaderMap::new();
    headers.insert("lambda-runtime-aws-request-id", id.parse().unwrap());
    headers.insert(
        "lambda-runtime-deadline-ms",
        deadline.as_millis().to_string().parse().unwrap(),
    );
    headers.insert(
        "lambda-runtime-invoked-function-arn",
        "arn:aws:lambda:us-east-1:123456789012:function:mcp".parse().unwrap(),
    );
    headers.insert(
        "lambda-runtime-trace-id",
        "Root=1-00000000-000000000000000000000000".parse().unwrap(),
    );
    (StatusCode::OK, headers, event.to_string())
}

async fn answer(State(api): State<Arc<RuntimeApi>>, Path(id): Path<String>, body: String) -> StatusCode {
    settle(
        &api,
        &id,
        serde_json::from_str(&body).map_err(|e| format!("{e}: {body}")),
    )
    .await
}

async fn error(State(api): State<Arc<RuntimeApi>>, Path(id): Path<String>, body: String) -> StatusCode {
    settle(&api, &id, Err(body)).await
}

async fn settle(api: &RuntimeApi, id: &str, outcome: Result<Value, String>) -> StatusCode {
    match api.answers.lock().await.remove(id) {
        Some(tx) => {
            let _ = tx.send(outcome);
            StatusCode::ACCEPTED
        }
        None => StatusCode::NOT_FOUND,
    }
}

/// The example function running against the stand-in; killed when dropped.
struct Function {
    queue: mpsc::UnboundedSender<(String, Value)>,
    api: Arc<RuntimeApi>,
    child: tokio::process::Child,
    next_id: u64,
}

/// An HTTP response as the invocation's answer described it.
struct Reply {
    status: u16,
    headers: serde_json::Map<String, Value>,
    body: Value,
}

impl Function {
    async fn start() -> Function {
        let (queue, rx) = mpsc::unbounded_channel();
        let api = Arc::new(RuntimeApi {
            queue: Mutex::new(rx),
            answers: Mutex::new(HashMap::new()),
        });
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/response", post(answer))
            .route("/2018-06-01/runtime/invocation/{id}/error", post(error))
            .with_state(api.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpkit-serverless-example"))
            .env("AWS_LAMBDA_RUNTIME_API", addr.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", "mcp")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("MCP_ALLOWED_HOSTS", HOST)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start the example function");
        Function {
            queue,
            api,
            child,
            next_id: 0,
        }
    }

    /// One invocation: a POST to `/mcp` with `headers` (plus `host`) and `body`.
    async fn post(&mut self, host: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
        self.next_id += 1;
        let id = format!("request-{}", self.next_id);
        let mut event_headers = serde_json::Map::new();
        event_headers.insert("host".into(), json!(host));
        event_headers.insert("content-type".into(), json!("application/json"));
        event_headers.insert("accept".into(), json!("application/json, text/event-stream"));
        for (name, value) in headers {
            event_headers.insert((*name).into(), json!(value));
        }
        let event = json!({
            "version": "2.0",
            "routeKey": "$default",
            "rawPath": "/mcp",
            "rawQueryString": "",
            "headers": event_headers,
            "requestContext": {
                "accountId": "123456789012",
                "apiId": "abc123",
                "domainName": host,
                "domainPrefix": "abc123",
                "http": {
                    "method": "POST",
                    "path": "/mcp",
                    "protocol": "HTTP/1.1",
                    "sourceIp": "203.0.113.7",
                    "userAgent": "mcp-test"
                },
                "requestId": id,
                "routeKey": "$default",
                "stage": "$default",
                "time": "03/Dec/2026:20:00:00 +0000",
                "timeEpoch": 1_796_328_000_000_u64
            },
            "body": body.to_string(),
            "isBase64Encoded": false
        });
        let (tx, rx) = oneshot::channel();
        self.api.answers.lock().await.insert(id.clone(), tx);
        self.queue.send((id, event)).unwrap();
        let answer = tokio::select! {
            answer = tokio::time::timeout(WAIT, rx) => answer
                .expect("the function answered in time")
                .expect("the runtime API stand-in is running"),
            exit = self.child.wait() => panic!("the function exited: {exit:?}"),
        };
        let answer = answer.unwrap_or_else(|e| panic!("the function reported an error: {e}"));
        assert_eq!(answer["isBase64Encoded"], false, "{answer}");
        let text = answer["body"].as_str().unwrap_or_default();
        Reply {
            status: u16::try_from(answer["statusCode"].as_u64().unwrap()).unwrap(),
            headers: answer["headers"].as_object().cloned().unwrap_or_default(),
            body: if text.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
            },
        }
    }
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn text_of(reply: &Reply) -> &str {
    reply.body["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn the_stateless_era_needs_no_session() {
    const V: &str = "2026-07-28";
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "serverless-test", "version": "0"}
    });
    let mut f = Function::start().await;

    let discover = request(1, "server/discover", json!({"_meta": meta}));
    let headers = [("mcp-protocol-version", V), ("mcp-method", "server/discover")];
    let r = f.post(HOST, &headers, &discover).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "serverless-example",
        "{}",
        r.body
    );
    assert!(
        r.body["result"]["supportedVersions"].to_string().contains(V),
        "{}",
        r.body
    );

    let list = request(2, "tools/list", json!({"_meta": meta}));
    let r = f
        .post(
            HOST,
            &[("mcp-protocol-version", V), ("mcp-method", "tools/list")],
            &list,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let names: Vec<&str> = r.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "add"]);

    let call = request(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 40}, "_meta": meta}),
    );
    let headers = [
        ("mcp-protocol-version", V),
        ("mcp-method", "tools/call"),
        ("mcp-name", "add"),
    ];
    let r = f.post(HOST, &headers, &call).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.headers.contains_key("mcp-session-id"));
    assert_eq!(r.body["id"], 3);
    assert_eq!(r.body["result"]["resultType"], "complete", "{}", r.body);
    assert_eq!(text_of(&r), "42");
}

#[tokio::test]
async fn the_handshake_era_is_served_sessionless() {
    const V: &str = "2025-11-25";
    let mut f = Function::start().await;

    let init = request(
        1,
        "initialize",
        json!({"protocolVersion": V, "capabilities": {}, "clientInfo": {"name": "serverless-test", "version": "0"}}),
    );
    let r = f.post(HOST, &[], &init).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.headers.contains_key("mcp-session-id"), "{:?}", r.headers);
    assert_eq!(r.body["result"]["protocolVersion"], V);
    assert_eq!(r.body["result"]["serverInfo"]["name"], "serverless-example");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = f.post(HOST, &[("mcp-protocol-version", V)], &initialized).await;
    assert_eq!(r.status, 202);

    // Another invocation, with no session: served alone.
    let call = request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "from a function"}}),
    );
    let r = f.post(HOST, &[("mcp-protocol-version", V)], &call).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r), "from a function");

    // The Host check stays on: a name not in MCP_ALLOWED_HOSTS is refused.
    let r = f.post("evil.example.com", &[("mcp-protocol-version", V)], &call).await;
    assert_eq!(r.status, 421, "{}", r.body);
    assert_eq!(r.body["error"]["code"], -32600);
}
