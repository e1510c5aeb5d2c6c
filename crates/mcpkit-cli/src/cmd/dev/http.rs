//! The page's own HTTP API, on loopback: `GET /` (the page, assets inlined), `GET /api/events`
//! (SSE: the wire, progress, the server's questions, reconnections, views' output, tasks), `GET
//! /api/state`, `POST /api/call`, `/api/cancel`, `/api/answer`, `/api/read`, `/api/prompt`,
//! `/api/complete`, `/api/roots`, `/api/log-level`, `/api/task/cancel`, `/api/skill`,
//! `/api/view` (open a view), `/api/view/post` (what a view posted), `/api/view/close`,
//! `/api/reconnect` (the era switch). Every request needs the
//! token (401 without it), a `Host` naming the address served (421 otherwise) and, when sent, an
//! `Origin` of that address (403 otherwise): another site open in the browser, or a DNS
//! rebinding, cannot drive the server.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures_util::stream::{self, Stream, StreamExt as _};
use serde_json::{json, Value};

use super::hub::Hub;
use super::{app, page, session};
use crate::target::{one_line, parse_mode, Target};

/// What every handler needs.
#[derive(Clone)]
pub(super) struct Dev {
    pub(super) hub: Arc<Hub>,
    /// The secret every request carries as `?token=`.
    pub(super) token: Arc<str>,
    /// The `Host` values that name this server (`127.0.0.1:PORT`, `localhost:PORT`).
    pub(super) hosts: Arc<[String]>,
    /// The page's script and style nonce (CSP).
    pub(super) nonce: Arc<str>,
    /// The target, named in the page.
    pub(super) label: Arc<str>,
    /// The target, to reconnect to.
    pub(super) target: Arc<Target>,
    /// Cancelled when mcpkit dev stops: the event streams end.
    pub(super) stop: tokio_util::sync::CancellationToken,
    /// The views' origin (`http://127.0.0.1:PORT`, another listener): where the App region's
    /// iframe loads a view from.
    pub(super) views_base: Arc<str>,
}

/// The router of the page and its API.
pub(super) fn router(dev: Dev) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/api/events", get(events))
        .route("/api/state", get(state))
        .route("/api/call", post(call))
        .route("/api/cancel", post(cancel))
        .route("/api/answer", post(answer))
        .route("/api/read", post(read))
        .route("/api/prompt", post(prompt))
        .route("/api/reconnect", post(reconnect))
        .route("/api/complete", post(complete))
        .route("/api/roots", post(roots))
        .route("/api/log-level", post(log_level))
        .route("/api/task/cancel", post(cancel_task))
        .route("/api/skill", post(skill))
        .route("/api/view", post(open_view))
        .route("/api/view/post", post(view_post))
        .route("/api/view/close", post(close_view))
        .layer(axum::middleware::from_fn_with_state(dev.clone(), guard))
        .with_state(dev)
}

/// Host, Origin and token, before anything else.
async fn guard(State(dev): State<Dev>, request: Request, next: Next) -> Response {
    if let Err(refusal) = check(&dev, request.headers(), request.uri().query()) {
        return refusal.into_response();
    }
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// `Ok` when the request may go on; otherwise the status and why.
pub(super) fn check(dev: &Dev, headers: &HeaderMap, query: Option<&str>) -> Result<(), (StatusCode, &'static str)> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| dev.hosts.iter().any(|a| a.eq_ignore_ascii_case(h))) {
        return Err((StatusCode::MISDIRECTED_REQUEST, "this Host is not served here\n"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|o| dev.hosts.iter().any(|a| a.eq_ignore_ascii_case(o)));
        if !ok {
            return Err((StatusCode::FORBIDDEN, "requests from another origin are refused\n"));
        }
    }
    let given = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("token="));
    match given {
        Some(t) if same(t.as_bytes(), dev.token.as_bytes()) => Ok(()),
        Some(_) => Err((StatusCode::FORBIDDEN, "wrong token: open the URL mcpkit dev printed\n")),
        None => Err((StatusCode::UNAUTHORIZED, "no token: open the URL mcpkit dev printed\n")),
    }
}

/// Equal, in a time that does not depend on where they differ.
pub(super) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn index(State(dev): State<Dev>) -> Response {
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{n}'; style-src 'nonce-{n}'; img-src data:; media-src data:; \
         connect-src 'self'; frame-src {v}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        n = dev.nonce,
        v = dev.views_base
    );
    let mut r = page::html(&dev.nonce, &dev.label).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

/// The events so far, then the live ones.
async fn events(State(dev): State<Dev>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (history, rx) = dev.hub.subscribe();
    let live = stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(e) => return Some((e, rx)),
                // A page too slow to keep up misses some events rather than stalling the rest.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let all = stream::iter(history)
        .chain(live)
        .take_until(dev.stop.clone().cancelled_owned())
        .map(|e| Ok(Event::default().data(&*e)));
    Sse::new(all).keep_alive(KeepAlive::default())
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    let mut r = (status, v.to_string()).into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn bad_request(why: impl Into<String>) -> Response {
    json_response(StatusCode::BAD_REQUEST, &json!({"error": why.into()}))
}

/// The request body as a JSON object, or the 400 that says why not.
fn body_json(body: &Bytes) -> Result<Value, Box<Response>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(Box::new(bad_request("the body must be a JSON object"))),
        Err(e) => Err(Box::new(bad_request(format!("the body is not JSON: {e}")))),
    }
}

/// The current client, or the 503 that says there is none.
fn client_of(dev: &Dev) -> Result<mcpkit::Client, Box<Response>> {
    dev.hub.client().ok_or_else(|| {
        let (_, why) = dev.hub.status();
        Box::new(json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"error": why.unwrap_or_else(|| "not connected yet".to_owned())}),
        ))
    })
}

async fn state(State(dev): State<Dev>) -> Response {
    let (generation, down) = dev.hub.status();
    let mut v = match dev.hub.client() {
        Some(client) => session::describe(&client, &dev.hub.roots()).await,
        None => json!({"connected": false, "error": down, "roots": dev.hub.roots()}),
    };
    v["generation"] = json!(generation);
    v["target"] = json!(&*dev.label);
    v["mode"] = json!(session::mode_name(dev.hub.options().mode));
    json_response(StatusCode::OK, &v)
}

/// `{call, tool, arguments, task?, view?}`: runs the tool (as a task when `task`; with the
/// view `view` sent its input and result); answers when it ends (or is cancelled).
async fn call(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let (Some(id), Some(tool)) = (v["call"].as_u64(), v["tool"].as_str()) else {
        return bad_request("expected {\"call\": number, \"tool\": name, \"arguments\": {…}}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let arguments = match &v["arguments"] {
        Value::Null => json!({}),
        a => a.clone(),
    };
    let view = v["view"].as_u64().and_then(|view| dev.hub.view(view)).map(|v| v.bridge);
    let plan = session::CallPlan {
        id,
        tool: tool.to_owned(),
        arguments,
        as_task: v["task"].as_bool().unwrap_or(false),
        view: view.clone(),
    };
    let task = tokio::spawn(session::call_tool(dev.hub.clone(), client, plan));
    dev.hub.start_call(id, task.abort_handle());
    let outcome = task.await;
    dev.hub.end_call(id);
    dev.hub.end_task(id);
    match outcome {
        Ok(v) => json_response(StatusCode::OK, &v),
        Err(e) if e.is_cancelled() => {
            if let Some(view) = view {
                view.send_tool_cancelled(Some("cancelled by the user".to_owned()));
            }
            json_response(StatusCode::OK, &json!({"cancelled": true}))
        }
        Err(_) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": "the call's task failed"}),
        ),
    }
}

/// `{call}`: cancel a running call.
async fn cancel(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(id) = v["call"].as_u64() else {
        return bad_request("expected {\"call\": number}");
    };
    // A call that became a task: the task is cancelled on the server (`tasks/cancel`), and the
    // call ends when the server says the task ended.
    if let (Some(task), Some(client)) = (dev.hub.task_of(id), dev.hub.client()) {
        return match client.cancel_task(&task).await {
            Ok(()) => json_response(StatusCode::OK, &json!({"cancelled": true, "task": task})),
            Err(e) => json_response(
                StatusCode::OK,
                &json!({"cancelled": false, "error": one_line(&e.to_string())}),
            ),
        };
    }
    json_response(StatusCode::OK, &json!({"cancelled": dev.hub.cancel(id)}))
}

/// `{id, answer}`: the page's answer to a server question.
async fn answer(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(id) = v["id"].as_u64() else {
        return bad_request("expected {\"id\": number, \"answer\": {…}}");
    };
    let taken = dev.hub.answer(id, v["answer"].clone());
    json_response(StatusCode::OK, &json!({"taken": taken}))
}

/// `{uri}`: read a resource.
async fn read(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(uri) = v["uri"].as_str() else {
        return bad_request("expected {\"uri\": string}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let v = match client.read_resource(uri).await {
        Ok(r) => json!({"result": r}),
        Err(e) => json!({"error": one_line(&e.to_string())}),
    };
    json_response(StatusCode::OK, &v)
}

/// `{name, arguments: {k: string}}`: get a prompt.
async fn prompt(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(name) = v["name"].as_str() else {
        return bad_request("expected {\"name\": string, \"arguments\": {…}}");
    };
    let arguments: Vec<(String, String)> = v["arguments"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let v = match client.get_prompt(name, arguments).await {
        Ok(r) => json!({"result": r}),
        Err(e) => json!({"error": one_line(&e.to_string())}),
    };
    json_response(StatusCode::OK, &v)
}

/// `{protocol}` (`handshake`, `auto` or a stateless revision, as `--protocol`): reconnect in
/// that era.
async fn reconnect(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let mode = match v["protocol"].as_str().map(parse_mode) {
        Some(Ok(mode)) => mode,
        Some(Err(e)) => return bad_request(e),
        None => return bad_request("expected {\"protocol\": \"handshake\" | \"auto\" | revision}"),
    };
    dev.hub.set_mode(mode);
    let connected = session::restart(&dev.target, &dev.hub).await;
    let (_, why) = dev.hub.status();
    json_response(StatusCode::OK, &json!({"connected": connected, "error": why}))
}

/// `{ref: {type: "ref/prompt", name} | {type: "ref/resource", uri}, argument, value}`:
/// `completion/complete`.
async fn complete(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let reference = serde_json::from_value::<mcpkit::types::schema::CompletionReference>(v["ref"].clone());
    let (Ok(reference), Some(argument), Some(value)) = (reference, v["argument"].as_str(), v["value"].as_str()) else {
        return bad_request("expected {\"ref\": {\"type\": \"ref/prompt\", \"name\"} | {\"type\": \"ref/resource\", \"uri\"}, \"argument\": string, \"value\": string}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let v = match client.complete(reference, argument, value).await {
        Ok(r) => json!({"result": r}),
        Err(e) => json!({"error": one_line(&e.to_string())}),
    };
    json_response(StatusCode::OK, &v)
}

/// Roots the page may offer at most.
const ROOTS: usize = 64;

/// `{roots: [{uri, name?}]}`: offer these roots from now on; the server is told
/// (`notifications/roots/list_changed`).
async fn roots(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let roots = match serde_json::from_value::<Vec<mcpkit::types::schema::Root>>(v["roots"].clone()) {
        Ok(r) if r.len() <= ROOTS && r.iter().all(|r| !r.uri.trim().is_empty()) => r,
        Ok(_) => return bad_request(format!("at most {ROOTS} roots, each with a URI")),
        Err(e) => return bad_request(format!("expected {{\"roots\": [{{\"uri\", \"name\"}}]}}: {e}")),
    };
    dev.hub.set_roots(roots.clone());
    match dev.hub.client() {
        Some(client) => done(client.set_roots(roots)),
        None => done(Ok(())),
    }
}

/// `{level}`: `logging/setLevel`, and again on every new connection.
async fn log_level(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Ok(level) = serde_json::from_value::<mcpkit::types::schema::LoggingLevel>(v["level"].clone()) else {
        return bad_request("expected {\"level\": \"debug\" | \"info\" | … | \"emergency\"}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    dev.hub.set_log_level(level);
    done(client.set_log_level(level).await)
}

/// The answer of a request that returns nothing: `{"ok": true}`, or `{"error": …}` (200 both:
/// the page shows the server's error).
fn done(outcome: mcpkit::Result<()>) -> Response {
    let v = match outcome {
        Ok(()) => json!({"ok": true}),
        Err(e) => json!({"error": one_line(&e.to_string())}),
    };
    json_response(StatusCode::OK, &v)
}

/// `{task}`: `tasks/cancel`.
async fn cancel_task(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(task) = v["task"].as_str() else {
        return bad_request("expected {\"task\": string}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    done(client.cancel_task(task).await)
}

/// `{uri}`: load the skill whose `SKILL.md` is `uri` (checked against its entry).
async fn skill(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(uri) = v["uri"].as_str() else {
        return bad_request("expected {\"uri\": string}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let loaded = async {
        let entry = client.get_skill(uri).await?;
        client.load_skill(&entry).await
    };
    let v = match loaded.await {
        Ok(s) => json!({"result": {"name": s.name(), "entry": s.entry, "text": s.text}}),
        Err(e) => json!({"error": one_line(&e.to_string())}),
    };
    json_response(StatusCode::OK, &v)
}

/// `{uri, tool?, theme?, locale?}`: open the view at `uri` in the App region (for the tool
/// `tool`, its definition, when a call opens it).
async fn open_view(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(uri) = v["uri"].as_str() else {
        return bad_request("expected {\"uri\": \"ui://…\", \"tool\": {…}}");
    };
    let client = match client_of(&dev) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let tool = serde_json::from_value(v["tool"].clone()).ok();
    let text = |k: &str| v[k].as_str().map(str::to_owned);
    let opened = app::open(
        &dev.hub,
        client,
        &dev.views_base,
        uri,
        tool,
        text("theme"),
        text("locale"),
    )
    .await;
    json_response(StatusCode::OK, &opened)
}

/// `{view, message}`: a JSON-RPC message view `view` posted; answers `{reply}`, the message to
/// post back (`null` for none).
async fn view_post(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let (Some(id), Some(message)) = (v["view"].as_u64(), v["message"].as_str()) else {
        return bad_request("expected {\"view\": number, \"message\": string}");
    };
    let Some(view) = dev.hub.view(id) else {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": "no such view (closed, or the server reconnected)"}),
        );
    };
    let reply = app::post(&dev.hub, &view.bridge, message).await;
    json_response(StatusCode::OK, &json!({"reply": reply}))
}

/// `{view}`: close a view.
async fn close_view(State(dev): State<Dev>, body: Bytes) -> Response {
    let v = match body_json(&body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(id) = v["view"].as_u64() else {
        return bad_request("expected {\"view\": number}");
    };
    json_response(StatusCode::OK, &json!({"closed": dev.hub.close_view(id)}))
}
