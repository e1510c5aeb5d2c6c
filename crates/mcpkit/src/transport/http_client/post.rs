//! Sending: one POST per outgoing message (`initialize` and `notifications/initialized` in order,
//! everything else concurrently), and reading its reply: `202`, one JSON message, or an SSE
//! stream (see [`super::sse`]); an HTTP error becomes the request's JSON-RPC error.

use std::io;
use std::sync::Arc;

use bytes::Bytes;
use mcpkit_types::headers::{PROTOCOL_VERSION, SESSION_ID};
use mcpkit_types::{ErrorObject, RequestId};
use reqwest::header::{self, HeaderName, HeaderValue};
use reqwest::StatusCode;
use serde::Deserialize;

use super::classify::Kind;
use super::{Inner, Mode, ACCEPT_POST, STANDALONE_OPEN_WAIT};
use crate::sync::lock;

/// How much of an error body is read.
pub(super) const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// Whether a reply's messages go to the reader, or (a replayed `initialize`) the response is
/// kept back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    Forward,
    SuppressResponse,
}

/// The awaited response's outcome, or why it never came.
pub(super) type Answer = Result<Result<(), ErrorObject>, String>;

/// An error body's JSON-RPC error, whatever its id.
#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}

pub(super) fn media_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Read a response body of at most `limit` bytes (the HTTP client's replies, and the `auth`
/// module's documents and token responses).
pub(crate) async fn read_response(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let too_large = || format!("the body exceeds the {limit}-byte limit");
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut out = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if out.len() + chunk.len() > limit {
                    return Err(too_large());
                }
                out.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(out),
            Err(e) => return Err(format!("reading the body failed: {e}")),
        }
    }
}

/// The error for an HTTP failure status, from a JSON-RPC error body when there is one.
fn error_from_body(status: StatusCode, body: &[u8]) -> ErrorObject {
    if let Ok(b) = serde_json::from_slice::<ErrorBody>(body) {
        return b.error;
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        ErrorObject::internal(format!("the MCP server answered HTTP {status}"))
    } else {
        let snippet: String = text.chars().take(200).collect();
        ErrorObject::internal(format!("the MCP server answered HTTP {status}: {snippet}"))
    }
}

impl Inner {
    /// Route one outgoing message.
    pub(super) async fn send(self: Arc<Self>, frame: Bytes, kind: Kind) {
        let mode = lock(&self.state).mode.clone();
        let endpoint = match mode {
            Mode::Streamable => None,
            Mode::Legacy(endpoint) => Some(endpoint),
            Mode::LegacyPending => match self.connect_legacy().await {
                Ok(endpoint) => {
                    lock(&self.state).mode = Mode::Legacy(endpoint.clone());
                    Some(endpoint)
                }
                Err(e) => {
                    // Fail the request first so its caller learns why, then end the connection.
                    if let Kind::Request { id, .. } = &kind {
                        self.fail_request(Some(id), &e.to_string());
                    }
                    self.fatal(e);
                    return;
                }
            },
        };
        if let Some(endpoint) = endpoint {
            return self.send_legacy(endpoint, frame, kind).await;
        }
        match kind {
            Kind::Request { id, initialize: true } => self.initialize(id, frame).await,
            Kind::Initialized => {
                lock(&self.state).initialized = Some(frame.clone());
                self.post(frame, None).await;
                if self.standalone_stream {
                    // Hold the next message until the standalone stream is open (or refused), so
                    // a server request sent right after initialization has a stream to use.
                    let opened = self.start_standalone();
                    let _ = tokio::time::timeout(STANDALONE_OPEN_WAIT, opened).await;
                }
            }
            Kind::Stateless {
                id,
                tools_list,
                headers,
            } => {
                let token = self.shutdown.child_token();
                {
                    let mut s = lock(&self.state);
                    s.requests.insert(id.clone(), token.clone());
                    if tools_list {
                        s.tool_lists.insert(id.clone());
                    }
                }
                let this = self.clone();
                self.spawn(token, async move {
                    this.post_stateless(frame, id.clone(), headers).await;
                    let mut s = lock(&this.state);
                    s.requests.remove(&id);
                    s.tool_lists.remove(&id);
                });
            }
            Kind::Request { id, initialize: false } => {
                let token = self.shutdown.child_token();
                lock(&self.state).requests.insert(id.clone(), token.clone());
                let this = self.clone();
                self.spawn(token, async move {
                    this.post(frame, Some(id.clone())).await;
                    lock(&this.state).requests.remove(&id);
                });
            }
            Kind::Cancelled(id) => {
                // The caller gave up: stop reading that request's stream too.
                if let Some(token) = id.and_then(|id| lock(&self.state).requests.remove(&id)) {
                    token.cancel();
                }
                self.spawn_note(frame);
            }
            Kind::Other => self.spawn_note(frame),
        }
    }

    pub(super) fn post_request(
        &self,
        frame: &Bytes,
        session: Option<&str>,
        with_version: bool,
    ) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .post(self.url.clone())
            .headers(self.headers.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, ACCEPT_POST)
            .body(frame.clone());
        for (name, value) in super::headers::trace_context(frame) {
            req = req.header(name, value);
        }
        if let Some(s) = session {
            req = req.header(SESSION_ID, s);
        }
        if with_version {
            if let Some(v) = lock(&self.state).protocol_version.clone() {
                req = req.header(PROTOCOL_VERSION, &*v);
            }
        }
        req
    }

    /// Send the request `build` makes, with the auth provider's header and its re-authorization
    /// on 401/403 (when there is a provider).
    pub(super) async fn send_authorized(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, String> {
        super::auth::send(self.auth.as_ref(), &self.url, build).await
    }

    /// POST `initialize`: learn the session id, fall back to HTTP+SSE on 400/404/405, and read
    /// the reply in the background (the negotiated version is taken from it on the way).
    async fn initialize(self: Arc<Self>, id: RequestId, frame: Bytes) {
        {
            let mut s = lock(&self.state);
            s.initialize = Some((id.clone(), frame.clone()));
            s.awaiting_init = Some(id.clone());
            s.session_id = None;
        }
        let response = match self.send_authorized(|| self.post_request(&frame, None, false)).await {
            Ok(r) => r,
            Err(e) => {
                let message = format!("could not reach the MCP server at {}: {e}", self.url);
                self.fail_request(Some(&id), &message);
                self.fatal(io::Error::new(io::ErrorKind::ConnectionRefused, message));
                return;
            }
        };
        let status = response.status();
        if matches!(status.as_u16(), 400 | 404 | 405) {
            let body = read_response(response, ERROR_BODY_LIMIT).await.unwrap_or_default();
            match self.connect_legacy().await {
                Ok(endpoint) => {
                    tracing::debug!("{} speaks the HTTP+SSE transport; POSTing to {endpoint}", self.url);
                    lock(&self.state).mode = Mode::Legacy(endpoint.clone());
                    self.legacy_post(&endpoint, frame, Some(&id)).await;
                }
                Err(e) => {
                    tracing::debug!("no HTTP+SSE fallback at {}: {e}", self.url);
                    self.reply_error(&id, &error_from_body(status, &body));
                }
            }
            return;
        }
        if !status.is_success() {
            return self.http_error(response, Some(&id)).await;
        }
        self.remember_session(&response);
        let this = self.clone();
        self.spawn(self.shutdown.clone(), async move {
            if let Err(reason) = this.read_reply(response, &id, Delivery::Forward).await {
                this.fail_request(Some(&id), &reason);
            }
        });
    }

    /// POST one message and deliver its reply; a 404 on a session starts a new session and
    /// retries once.
    pub(super) async fn post(self: &Arc<Self>, frame: Bytes, id: Option<RequestId>) {
        let mut retried = false;
        loop {
            let session = self.session_for_request().await;
            let response = match self
                .send_authorized(|| self.post_request(&frame, session.as_deref(), true))
                .await
            {
                Ok(r) => r,
                Err(e) => return self.fail_request(id.as_ref(), &e),
            };
            let status = response.status();
            if status == StatusCode::NOT_FOUND && !retried {
                if let Some(stale) = session {
                    retried = true;
                    match self.reinitialize(&stale).await {
                        Ok(()) => continue,
                        Err(e) => {
                            self.fail_request(id.as_ref(), &e.to_string());
                            return self.fatal(e);
                        }
                    }
                }
            }
            if !status.is_success() {
                return self.http_error(response, id.as_ref()).await;
            }
            if let Some(id) = id {
                if let Err(reason) = self.read_reply(response, &id, Delivery::Forward).await {
                    self.fail_request(Some(&id), &reason);
                }
            }
            return;
        }
    }

    /// POST one 2026-07-28 request: no session; its reply (or its JSON-RPC error, whatever the
    /// HTTP status) goes to the reader. Dropping the stream is the cancellation.
    async fn post_stateless(self: &Arc<Self>, frame: Bytes, id: RequestId, headers: Vec<(HeaderName, HeaderValue)>) {
        // Through the auth provider like every other request: a stateless-era server asks for
        // authorization (401/403) the same way.
        let build = || {
            let mut req = self.post_request(&frame, None, false);
            for (name, value) in &headers {
                req = req.header(name.clone(), value.clone());
            }
            req
        };
        let response = match self.send_authorized(build).await {
            Ok(r) => r,
            Err(e) => {
                return self.fail_request(
                    Some(&id),
                    &format!("could not reach the MCP server at {}: {e}", self.url),
                )
            }
        };
        if !response.status().is_success() {
            return self.http_error(response, Some(&id)).await;
        }
        if let Err(reason) = self.read_reply(response, &id, Delivery::Forward).await {
            self.fail_request(Some(&id), &reason);
        }
    }

    /// An HTTP failure status: a request gets its JSON-RPC error.
    pub(super) async fn http_error(&self, response: reqwest::Response, id: Option<&RequestId>) {
        let status = response.status();
        let body = read_response(response, ERROR_BODY_LIMIT).await.unwrap_or_default();
        let error = error_from_body(status, &body);
        match id {
            Some(id) => self.reply_error(id, &error),
            None => tracing::debug!("the MCP server refused a message: HTTP {status}: {error}"),
        }
    }

    /// Read the successful reply to request `id`: nothing (202), one JSON message, or an SSE
    /// stream followed (and resumed) until the response.
    pub(super) async fn read_reply(
        self: &Arc<Self>,
        response: reqwest::Response,
        id: &RequestId,
        delivery: Delivery,
    ) -> Result<(), String> {
        match self.read_answer(response, id, delivery).await? {
            Err(e) if delivery == Delivery::SuppressResponse => Err(e.to_string()),
            _ => Ok(()),
        }
    }

    async fn read_answer(self: &Arc<Self>, response: reqwest::Response, id: &RequestId, delivery: Delivery) -> Answer {
        if response.status() == StatusCode::ACCEPTED {
            // No body: the response will come some other way (the standalone stream).
            return Ok(Ok(()));
        }
        match media_type(&response).as_str() {
            "text/event-stream" => self.follow(response, id, delivery).await,
            "application/json" => {
                let body = read_response(response, self.max_frame).await?;
                if let Some(answer) = self.inspect(&body, Some(id)) {
                    if delivery == Delivery::Forward {
                        self.forward(body, Some(id));
                    }
                    return Ok(answer);
                }
                if let Ok(b) = serde_json::from_slice::<ErrorBody>(&body) {
                    // An error without a usable id: it can only be this request's.
                    if delivery == Delivery::Forward {
                        self.reply_error(id, &b.error);
                    }
                    return Ok(Err(b.error));
                }
                if !body.is_empty() {
                    self.forward(body, None);
                }
                Err(format!("the server's JSON reply did not answer request {id}"))
            }
            other => Err(format!("the server replied with an unexpected Content-Type {other:?}")),
        }
    }
}
