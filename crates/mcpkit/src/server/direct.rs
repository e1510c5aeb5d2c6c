//! Running the method tables without a transport: [`Server::call`] and its notification
//! counterpart, for tests of the handlers themselves (no connection, no framing, no client).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use mcpkit_types::method::{Method, NotificationMethod};
use mcpkit_types::schema::{ClientCapabilities, Implementation, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use mcpkit_types::{Era, ErrorObject, ProtocolVersion, RequestId};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client_state::ClientState;
use super::methods::ServerService;
use super::Server;
use crate::engine::{HandlerResult, IncomingRequest, Peer, Role};
use crate::transport::Extensions;

impl Server {
    /// Run request `M` through this server's handshake-era table, on a fresh session that has
    /// completed the handshake at the latest handshake revision, and decode its result.
    ///
    /// No transport is involved: this is for testing handlers. The error is what the client
    /// would get as the JSON-RPC error. Server→client requests (`cx.elicit`, `cx.sample`) fail
    /// at once; notifications the handler sends go nowhere.
    ///
    /// ```
    /// # async fn t() {
    /// use mcpkit::types::method::ListTools;
    /// let server = mcpkit::Server::builder().enable_tools().build();
    /// let page = server.call::<ListTools>(Default::default()).await.unwrap();
    /// assert!(page.tools.is_empty());
    /// # }
    /// ```
    pub async fn call<M: Method>(&self, params: M::Params) -> Result<M::Result, ErrorObject> {
        self.call_as::<M>(ProtocolVersion::LATEST_HANDSHAKE, params).await
    }

    /// [`Server::call`] at `version`, through that revision's era table. A handshake revision
    /// runs on a session negotiated at it. A stateless revision (2026-07-28) runs as one
    /// stateless request: its `_meta` gets the protocol version and empty client capabilities
    /// unless the params already carry them, and the result is completed for the stateless
    /// wire (`resultType`, server identity, caching hints).
    pub async fn call_as<M: Method>(
        &self,
        version: ProtocolVersion,
        params: M::Params,
    ) -> Result<M::Result, ErrorObject> {
        let raw = self.call_raw(version, M::NAME, &params).await?;
        serde_json::from_str(raw.get())
            .map_err(|e| ErrorObject::internal(format!("the {} result does not decode: {e}", M::NAME)))
    }

    /// Deliver notification `N` to this server's handshake-era table, as a client on a fresh
    /// initialized session would send it, and wait until its handler is done.
    pub async fn call_notification<N: NotificationMethod>(&self, params: N::Params) {
        self.call_notification_as::<N>(ProtocolVersion::LATEST_HANDSHAKE, params)
            .await;
    }

    /// [`Server::call_notification`] at `version`, through that revision's era table.
    pub async fn call_notification_as<N: NotificationMethod>(&self, version: ProtocolVersion, params: N::Params) {
        let params = serde_json::value::to_raw_value(&params).ok();
        let (peer, _sent) = Peer::detached(self.inner.peer_options.clone());
        let service = self.service_for(version);
        let handled = service.handle_notification(peer, N::NAME.to_owned(), params);
        if AssertUnwindSafe(handled).catch_unwind().await.is_err() {
            tracing::error!("a notification handler panicked");
        }
    }

    /// Run one request by name through the table of `version`'s era, with the engine's rules
    /// for a handler that panics (-32603).
    async fn call_raw<P: Serialize>(&self, version: ProtocolVersion, method: &str, params: &P) -> HandlerResult {
        let mut params = serde_json::to_value(params).map_err(|e| ErrorObject::internal(e.to_string()))?;
        if version.era() == Era::Stateless {
            with_protocol_meta(&mut params, version);
        }
        let params = serde_json::value::to_raw_value(&params).map_err(|e| ErrorObject::internal(e.to_string()))?;
        let request = IncomingRequest {
            id: RequestId::Number(1),
            method: method.to_owned(),
            params: Some(params),
            cancel: CancellationToken::new(),
            extensions: Extensions::default(),
        };
        // Kept until the handler is done, so what it sends is not an error.
        let (peer, _sent) = Peer::detached(self.inner.peer_options.clone());
        let service = self.service_for(version);
        match AssertUnwindSafe(service.handle_request(peer, request))
            .catch_unwind()
            .await
        {
            Ok(result) => result,
            Err(_panic) => Err(ErrorObject::internal("internal error: the request handler panicked")),
        }
    }

    /// The role serving one call at `version`: a negotiated handshake session of its own, or
    /// a connection that takes only stateless requests. Neither is registered for broadcasts.
    fn service_for(&self, version: ProtocolVersion) -> ServerService {
        let session = match version.era() {
            Era::Handshake => {
                let session = ClientState::default();
                let client = Implementation::new("mcpkit-call", env!("CARGO_PKG_VERSION"));
                session.negotiate(version, ClientCapabilities::default(), client);
                session.initialized.store(true, std::sync::atomic::Ordering::Relaxed);
                session
            }
            Era::Stateless => ClientState::stateless_only(),
        };
        ServerService {
            server: self.clone(),
            session: Arc::new(session),
        }
    }
}

/// Give stateless-era params the `_meta` fields every such request carries, unless they have
/// them (spec: 2026-07-28 `basic/index` "_meta").
fn with_protocol_meta(params: &mut Value, version: ProtocolVersion) {
    let Value::Object(members) = params else {
        return;
    };
    let meta = members
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(meta) = meta {
        meta.entry(META_PROTOCOL_VERSION)
            .or_insert_with(|| Value::String(version.as_str().to_owned()));
        meta.entry(META_CLIENT_CAPABILITIES)
            .or_insert_with(|| Value::Object(Default::default()));
    }
}
