//! The request context a handler receives: progress, logging, server→client requests
//! (sampling, elicitation, roots), the cancellation token, and the session's negotiated state.

use std::sync::Arc;

use mcpkit_types::method::{CreateMessage, Elicit, ListRoots};
use mcpkit_types::schema::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation,
    ListRootsResult, LoggingLevel, LoggingMessageParams, ProgressParams, ProgressToken, RequestMeta,
};
use mcpkit_types::{ProtocolVersion, RequestId};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::Server;
use crate::error::{Error, Result};
use crate::peer::{Peer, RequestOptions};

/// Everything a handler may need about the request it is serving.
#[derive(Clone, Debug)]
pub struct RequestContext {
    pub(crate) peer: Peer,
    pub(crate) session: Arc<Session>,
    pub(crate) server: Server,
    pub(crate) id: RequestId,
    pub(crate) meta: Option<RequestMeta>,
    pub(crate) cancel: CancellationToken,
}

impl RequestContext {
    /// The id of the request being served.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.meta.as_ref()
    }

    /// The progress token the caller asked progress to be reported under.
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta.as_ref().and_then(|m| m.progress_token.as_ref())
    }

    /// Fires when the client cancels this request or the connection ends.
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

    /// The connection to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The server serving this request (to add tools, notify resource updates, …).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Shared state registered with [`ServerBuilder::state`](super::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.server.state::<T>()
    }

    /// End this request's response stream now; the client reconnects and gets the rest
    /// (spec: `basic/transports` "Resumability and Redelivery"). Only HTTP acts on it.
    pub fn close_response_stream(&self) {
        self.peer.close_request_stream(&self.id);
    }

    /// Report progress (spec: `basic/utilities/progress`). Does nothing when the caller gave no
    /// progress token.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<()> {
        let Some(token) = self.progress_token() else {
            return Ok(());
        };
        let mut p = ProgressParams::new(token.clone(), progress);
        p.total = total;
        if self.protocol_version() >= ProtocolVersion::V2025_03_26 {
            p.message = message.map(str::to_owned);
        }
        self.peer.notify_related("notifications/progress", Some(&p), &self.id)
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
        self.peer
            .notify_related("notifications/message", Some(&params), &self.id)
    }

    /// Ask the client's LLM for a completion (spec: `client/sampling`).
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult> {
        if self.client_capabilities().sampling.is_none() {
            return Err(Error::MissingCapability("sampling"));
        }
        let params = params.for_version(self.protocol_version());
        self.peer.request_with::<CreateMessage>(&params, self.related()).await
    }

    /// Ask the user for input through the client (spec: `client/elicitation`), in form or URL mode.
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult> {
        let caps = self.client_capabilities();
        let Some(e) = caps.elicitation.as_ref() else {
            return Err(Error::MissingCapability("elicitation"));
        };
        let url_mode = matches!(params, ElicitParams::Url(_));
        if url_mode && !e.supports_url() {
            return Err(Error::MissingCapability("elicitation.url"));
        }
        if self.protocol_version() < ProtocolVersion::V2025_06_18 {
            return Err(Error::MissingCapability("elicitation"));
        }
        let Some(params) = params.for_version(self.protocol_version()) else {
            return Err(Error::Protocol(format!(
                "this elicitation cannot be expressed in protocol version {}",
                self.protocol_version()
            )));
        };
        self.peer.request_with::<Elicit>(&params, self.related()).await
    }

    /// Ask the client for its roots (spec: `client/roots`).
    pub async fn list_roots(&self) -> Result<ListRootsResult> {
        if self.client_capabilities().roots.is_none() {
            return Err(Error::MissingCapability("roots"));
        }
        self.peer
            .request_with::<ListRoots>(&Default::default(), self.related())
            .await
    }

    fn related(&self) -> RequestOptions {
        RequestOptions {
            related: Some(self.id.clone()),
            ..Default::default()
        }
    }
}
