//! The request context a handler receives: progress, logging, server→client requests
//! (sampling, elicitation, roots), the cancellation token, and the session's negotiated state.

use std::sync::Arc;

use mcpkit_types::method::{CreateMessage, Elicit, ListRoots, LoggingMessage, NotificationMethod, Progress};
use mcpkit_types::schema::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation,
    InputRequest, InputResponse, ListRootsResult, LoggingLevel, LoggingMessageParams, ProgressParams, ProgressToken,
    RequestMeta,
};
use mcpkit_types::{ErrorObject, ProtocolVersion, RequestId};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::client_state::ClientState;
use super::stateless::InputState;
use super::Server;
use crate::engine::{Peer, RequestOptions};
use crate::error::{Error, Result};
use crate::transport::Extensions;

mod elicit;
pub use elicit::{elicitation_schema, Elicited};

/// Everything a handler may need about the request it is serving.
#[derive(Clone, Debug)]
pub struct RequestContext {
    pub(crate) peer: Peer,
    pub(crate) session: Arc<ClientState>,
    pub(crate) server: Server,
    pub(crate) id: RequestId,
    pub(crate) meta: Option<RequestMeta>,
    pub(crate) cancel: CancellationToken,
    pub(crate) method: &'static str,
    /// Stateless era: the inputs of this request (on methods that may ask for input).
    pub(crate) input: Option<Arc<InputState>>,
    /// What the transport attached to the request (HTTP: the caller's verified identity).
    pub(crate) extensions: Extensions,
}

/// Where a request's progress goes besides the caller, put into its extensions by what runs
/// it: the Tasks extension keeps a task's progress for `tasks/get`. A trait object, so the core
/// knows no extension.
pub(crate) trait ProgressSink: Send + Sync + 'static {
    /// Record progress, as [`RequestContext::progress`] reports it.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>);
}

/// The [`ProgressSink`] of a request, as its extensions hold it.
#[derive(Clone)]
pub(crate) struct ProgressObserver(pub(crate) Arc<dyn ProgressSink>);

impl RequestContext {
    /// The id of the request being served.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The request's `_meta`, if it had one. On a 2026-07-28 request it holds the members
    /// other than the protocol ones (`io.modelcontextprotocol/protocolVersion`,
    /// `clientCapabilities`, `clientInfo`, `logLevel`): those are the request's session, read
    /// through [`RequestContext::client_info`] and the like.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.meta.as_ref()
    }

    /// The progress token the caller asked progress to be reported under.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta.as_ref().and_then(|m| m.progress_token.as_ref())
    }

    /// Fires when the client cancels this request or the connection ends.
    ///
    /// When it fires, the engine stops the handler by dropping its future (and sends no
    /// reply). So code written after `cx.cancellation().cancelled().await` in the handler is
    /// not run: the future is dropped instead of being polled to its end (at most, if the
    /// engine happens to poll it once more, it runs up to its next `.await`; nothing
    /// guarantees even that). Do not put clean-up there. Instead:
    /// - clean up in a drop guard, a value whose `Drop` does the clean-up. It runs whether the
    ///   handler finishes, fails, panics or is dropped on cancellation;
    /// - or do the clean-up work outside the handler's future (e.g. a `tokio::spawn`ed task
    ///   that awaits a clone of this token);
    /// - inside the handler, use `tokio::select!` on `cancelled()` and the work only to stop
    ///   the work early. Code after the `select!` is not guaranteed to run either.
    ///
    /// ```
    /// use mcpkit::server::{RequestContext, ToolDef};
    ///
    /// struct Cleanup;
    /// impl Drop for Cleanup {
    ///     // Runs on success and on cancellation alike.
    ///     fn drop(&mut self) { /* remove the temporary files, release the lock, … */ }
    /// }
    ///
    /// let tool = ToolDef::new("long_job", |cx: RequestContext| async move {
    ///     let _cleanup = Cleanup;
    ///     tokio::select! {
    ///         () = cx.cancellation().cancelled() => "cancelled", // may never be returned
    ///         () = tokio::time::sleep(std::time::Duration::from_secs(5)) => "done",
    ///     }
    /// });
    /// # let _ = tool;
    /// ```
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.session.version()
    }

    /// What the client declared it can do.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.session.client_capabilities()
    }

    /// Who the client said it is.
    pub fn client_info(&self) -> Option<Implementation> {
        self.session.client_info()
    }

    /// What the transport attached to this request (see [`Extensions`]).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// Who called, as the authorization layer verified it (spec: `basic/authorization`): the
    /// token's subject, client, scopes, audience, expiry and claims. `None` when the request
    /// did not come through a protected HTTP endpoint. The bearer token itself is never kept.
    pub fn auth(&self) -> Option<&crate::transport::AuthInfo> {
        self.extensions.get()
    }

    /// The connection to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The server serving this request (to add tools, notify resource updates, …).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Shared state registered with [`ServerBuilder::state`](super::ServerBuilder::state) (the
    /// [`State`](super::State) extractor takes a clone of it instead).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.server.state::<T>()
    }

    /// End this request's response stream now; the client reconnects and gets the rest
    /// (spec: `basic/transports` "Resumability and Redelivery"). Only HTTP acts on it.
    pub fn close_response_stream(&self) {
        self.peer.close_request_stream(&self.id);
    }

    /// Report progress (spec: `basic/utilities/progress`). Does nothing when the caller gave no
    /// progress token. Progress is advisory: a notification that cannot be sent (the connection
    /// is gone) is logged at debug level, and the handler carries on.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        // A task keeps its progress for `tasks/get`, token or not.
        if let Some(observer) = self.extensions.get::<ProgressObserver>() {
            observer.0.progress(progress, total, message);
        }
        let Some(token) = self.progress_token() else {
            return;
        };
        let mut p = ProgressParams::new(token.clone(), progress);
        p.total = total;
        if self.protocol_version() >= ProtocolVersion::V2025_03_26 {
            p.message = message.map(str::to_owned);
        }
        if let Err(e) = self.peer.notify_related(Progress::NAME, Some(&p), &self.id) {
            tracing::debug!(request = %self.id, "progress notification not sent: {e}");
        }
    }

    /// Send a log message (spec: `server/utilities/logging`) if the session's level lets it through.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Serialize) -> Result<()> {
        if !self.session.log_enabled(level) {
            return Ok(());
        }
        let data = serde_json::to_value(data).map_err(|e| Error::Serialize(e.to_string()))?;
        let params = LoggingMessageParams {
            level,
            logger: logger.map(str::to_owned),
            data,
            meta: None,
        };
        self.peer.notify_related(LoggingMessage::NAME, Some(&params), &self.id)
    }

    /// Ask the client's LLM for a completion (spec: `client/sampling`).
    ///
    /// On a handshake-era session this is a server→client request. On the stateless wire
    /// (2026-07-28) the answer comes from the retry's `inputResponses`; until it does, this
    /// returns [`Error::InputRequired`] and the request ends with `input_required`, so a
    /// handler must be repeatable up to its input calls (see [`RequestContext::input`]).
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult> {
        self.input(None, params).await
    }

    /// Ask the user for input through the client (spec: `client/elicitation`), in form or URL
    /// mode. Works on both eras like [`RequestContext::sample`].
    ///
    /// This takes the wire params and gives back the raw answer. For a form derived from a
    /// Rust type, with a typed answer, use [`RequestContext::elicit_as`]; for a yes-or-no
    /// question, [`RequestContext::confirm`]. (A plain message, `cx.elicit("Sure?")`, does not
    /// compile: "expected `ElicitParams`, found `&str`" means one of those two.)
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult> {
        self.input(None, params).await
    }

    /// Ask the client for its roots (spec: `client/roots`). Works on both eras like
    /// [`RequestContext::sample`].
    pub async fn list_roots(&self) -> Result<ListRootsResult> {
        self.input(None, ListRoots).await
    }

    /// Ask for several inputs at once. On the stateless wire every missing answer goes out in
    /// one `input_required` result (one round trip instead of one per input); on a
    /// handshake-era session they are asked one after another. Answers come back in order.
    pub async fn inputs(&self, requests: Vec<(String, InputRequest)>) -> Result<Vec<InputResponse>> {
        if self.input.is_none() {
            let mut out = Vec::with_capacity(requests.len());
            for (key, request) in requests {
                out.push(self.ask(Some(&key), request).await?);
            }
            return Ok(out);
        }
        // Stateless: collect every answer or every missing request before failing.
        let mut out = Vec::with_capacity(requests.len());
        let mut first_error = None;
        for (key, request) in requests {
            match self.ask(Some(&key), request).await {
                Ok(r) => out.push(r),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Ask the client for one input: a server→client request on a handshake-era session, an
    /// entry of `inputRequests` on the stateless wire (spec: 2026-07-28
    /// `basic/patterns/mrtr`). `key` names it there; `None` numbers the calls in order, which
    /// is stable as long as the handler makes the same calls in the same order on every run.
    ///
    /// `request` is an [`ElicitParams`] (answered by an [`ElicitResult`]), a
    /// [`CreateMessageParams`] (answered by a [`CreateMessageResult`]) or any [`InputRequest`]
    /// (answered by an [`InputResponse`]); the roots are asked for with the method descriptor
    /// [`ListRoots`] (answered by a [`ListRootsResult`]).
    pub async fn input<I: IntoInputRequest>(&self, key: Option<&str>, request: I) -> Result<I::Answer> {
        let answer = self.ask(key, request.into_input_request()).await?;
        I::answer(answer)
    }

    async fn ask(&self, key: Option<&str>, request: InputRequest) -> Result<InputResponse> {
        let caps = self.client_capabilities();
        let missing = match &request {
            InputRequest::Sample(_) => caps.sampling.is_none().then_some("sampling"),
            InputRequest::ListRoots => caps.roots.is_none().then_some("roots"),
            InputRequest::Elicit(p) => match caps.elicitation.as_ref() {
                None => Some("elicitation"),
                Some(e) if matches!(p, ElicitParams::Url(_)) && !e.supports_url() => Some("elicitation.url"),
                Some(_) => None,
            },
        };
        let version = self.protocol_version();
        // A task asks through its `inputRequests` in either era; other requests only on the
        // stateless wire.
        if self.input.is_some() || version.era() == mcpkit_types::Era::Stateless {
            let Some(state) = &self.input else {
                return Err(Error::Protocol(format!(
                    "input requests are only allowed on tools/call, prompts/get and resources/read (not on {})",
                    self.method
                )));
            };
            if let Some(cap) = missing {
                state.fail(crate::error::missing_capability(cap));
                return Err(Error::MissingCapability(cap));
            }
            let key = key.map_or_else(|| state.next_key(&request), str::to_owned);
            let Some(answer) = state.answer(&key).cloned() else {
                let request = match request {
                    InputRequest::Elicit(p) => match p.for_version(version) {
                        Some(p) => InputRequest::Elicit(p),
                        None => return Err(Error::Protocol("this elicitation cannot be expressed".into())),
                    },
                    InputRequest::Sample(p) => InputRequest::Sample(p.for_version(version)),
                    other => other,
                };
                state.ask(key, request);
                return Err(Error::InputRequired);
            };
            return match request.parse_response(&answer) {
                Ok(r) => {
                    state.mark_used(&key, answer);
                    Ok(r)
                }
                Err(e) => {
                    let error = ErrorObject::invalid_params(format!(
                        "inputResponses[{key:?}] is not a valid {} result: {e}",
                        request.method()
                    ))
                    .with_data(serde_json::json!({ "path": format!("inputResponses.{key}") }));
                    state.fail(error.clone());
                    Err(Error::Rpc(error))
                }
            };
        }
        if let Some(cap) = missing {
            return Err(Error::MissingCapability(cap));
        }
        match request {
            InputRequest::Sample(params) => {
                let params = params.for_version(version);
                let r = self.peer.request_with::<CreateMessage>(&params, self.related()).await?;
                Ok(InputResponse::Sample(r))
            }
            InputRequest::Elicit(params) => {
                if version < ProtocolVersion::V2025_06_18 {
                    return Err(Error::MissingCapability("elicitation"));
                }
                let Some(params) = params.for_version(version) else {
                    return Err(Error::Protocol(format!(
                        "this elicitation cannot be expressed in protocol version {version}"
                    )));
                };
                let r = self.peer.request_with::<Elicit>(&params, self.related()).await?;
                Ok(InputResponse::Elicit(r))
            }
            InputRequest::ListRoots => {
                let r = self
                    .peer
                    .request_with::<ListRoots>(&Default::default(), self.related())
                    .await?;
                Ok(InputResponse::ListRoots(r))
            }
        }
    }

    /// Stateless era: the state this handler saved with [`RequestContext::set_request_state`]
    /// in the previous round of this request, verified (it travels sealed in `requestState`).
    pub fn request_state(&self) -> Option<serde_json::Value> {
        self.input.as_ref().and_then(|s| s.handler_state())
    }

    /// Stateless era: state to find again in the next round of this request (sealed into the
    /// `requestState` of the `input_required` result). Ignored when the request completes.
    pub fn set_request_state(&self, value: serde_json::Value) {
        if let Some(s) = &self.input {
            s.set_handler_state(value);
        }
    }

    fn related(&self) -> RequestOptions {
        RequestOptions {
            related: Some(self.id.clone()),
            ..Default::default()
        }
    }
}

/// What [`RequestContext::input`] can ask the client for, and the answer it expects.
/// Implemented for [`ElicitParams`], [`CreateMessageParams`], [`ListRoots`] and [`InputRequest`]
/// (sealed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an input request",
    label = "pass `ElicitParams`, `CreateMessageParams`, `ListRoots` or an `InputRequest`",
    note = "to ask the user a question, use `cx.confirm(message)` (yes or no) or \
            `cx.elicit_as::<T>(message)` (a form derived from `T`)"
)]
pub trait IntoInputRequest: sealed::Sealed + Send {
    /// The answer to this request.
    type Answer;
    /// The request as an entry of `inputRequests`.
    fn into_input_request(self) -> InputRequest;
    /// The answer, from the client's response.
    fn answer(response: InputResponse) -> Result<Self::Answer>;
}

mod sealed {
    #![allow(unreachable_pub)]
    pub trait Sealed {}
    impl Sealed for mcpkit_types::schema::ElicitParams {}
    impl Sealed for mcpkit_types::schema::CreateMessageParams {}
    impl Sealed for mcpkit_types::schema::InputRequest {}
    impl Sealed for mcpkit_types::method::ListRoots {}
}

impl IntoInputRequest for ListRoots {
    type Answer = ListRootsResult;
    fn into_input_request(self) -> InputRequest {
        InputRequest::ListRoots
    }
    fn answer(response: InputResponse) -> Result<ListRootsResult> {
        match response {
            InputResponse::ListRoots(r) => Ok(r),
            _ => Err(Error::InvalidResponse("expected a roots result".into())),
        }
    }
}

impl IntoInputRequest for ElicitParams {
    type Answer = ElicitResult;
    fn into_input_request(self) -> InputRequest {
        InputRequest::Elicit(self)
    }
    fn answer(response: InputResponse) -> Result<ElicitResult> {
        match response {
            InputResponse::Elicit(r) => Ok(r),
            _ => Err(Error::InvalidResponse("expected an elicitation result".into())),
        }
    }
}

impl IntoInputRequest for CreateMessageParams {
    type Answer = CreateMessageResult;
    fn into_input_request(self) -> InputRequest {
        InputRequest::Sample(self)
    }
    fn answer(response: InputResponse) -> Result<CreateMessageResult> {
        match response {
            InputResponse::Sample(r) => Ok(r),
            _ => Err(Error::InvalidResponse("expected a sampling result".into())),
        }
    }
}

impl IntoInputRequest for InputRequest {
    type Answer = InputResponse;
    fn into_input_request(self) -> InputRequest {
        self
    }
    fn answer(response: InputResponse) -> Result<InputResponse> {
        Ok(response)
    }
}
