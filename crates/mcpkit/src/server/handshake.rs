//! The handshake era's own methods (spec: `basic/lifecycle`, `server/resources`
//! "Subscriptions", `server/utilities/logging`): `initialize` and what lives on its session.

use std::sync::atomic::Ordering;

use mcpkit_types::method::{Initialize, Method, NotificationMethod, Ping, RootsListChanged};
use mcpkit_types::schema::{
    EmptyResult, InitializeParams, InitializeResult, RootsListChangedParams, SetLevelParams, SubscribeParams,
    UnsubscribeParams,
};
use mcpkit_types::{Era, ErrorObject, ProtocolVersion};

use super::client_state::ClientState;
use super::methods::Call;
use crate::engine::HandlerResult;
use crate::server::backend::SessionUpdate;
use crate::sync::lock;
use crate::wire::to_raw;

/// A handshake-era session serves only `initialize` and `ping` until `initialize` completes
/// (a stateless-era session is negotiated from its request's `_meta`).
pub(crate) fn admit(session: &ClientState, method: &str) -> Result<(), ErrorObject> {
    if session.is_negotiated() || method == Initialize::NAME || method == Ping::NAME {
        return Ok(());
    }
    Err(ErrorObject::invalid_request(format!(
        "Received {method} before initialize: the session must be initialized first"
    )))
}

pub(crate) fn empty() -> HandlerResult {
    to_raw(&EmptyResult::default())
}

/// Spec: `basic/lifecycle` "Version Negotiation": answer with the client's version when we speak
/// it, otherwise with our latest; the client decides whether to go on.
pub(crate) fn initialize(call: Call, p: InitializeParams) -> HandlerResult {
    let version = match p.protocol_version.parse::<ProtocolVersion>() {
        Ok(v) if v.era() == Era::Handshake => v,
        _ => ProtocolVersion::LATEST_HANDSHAKE,
    };
    if !call.session.negotiate(version, p.capabilities, p.client_info) {
        return Err(ErrorObject::invalid_request(
            "initialize was already received on this session",
        ));
    }
    call.peer.telemetry_scope().set_version(version);
    let server = &call.server;
    let mut result = InitializeResult::new(version.as_str(), server.capabilities(), server.inner.info.clone());
    if let Some(i) = &server.inner.instructions {
        result = result.with_instructions(i.clone());
    }
    to_raw(&result)
}

pub(crate) async fn subscribe(call: Call, p: SubscribeParams) -> HandlerResult {
    lock(&call.session.subscriptions).insert(p.uri.clone());
    call.session.changed(SessionUpdate::Subscribe(p.uri));
    empty()
}

pub(crate) async fn unsubscribe(call: Call, p: UnsubscribeParams) -> HandlerResult {
    lock(&call.session.subscriptions).remove(&p.uri);
    call.session.changed(SessionUpdate::Unsubscribe(p.uri));
    empty()
}

pub(crate) async fn set_level(call: Call, p: SetLevelParams) -> HandlerResult {
    call.session.set_log_level(p.level);
    call.session.changed(SessionUpdate::LogLevel(p.level));
    empty()
}

/// `notifications/initialized`: the session may now receive broadcasts.
pub(crate) async fn initialized(call: Call, _: mcpkit_types::schema::InitializedParams) {
    call.session.initialized.store(true, Ordering::Relaxed);
    call.session.changed(SessionUpdate::Initialized);
}

/// `notifications/roots/list_changed`: tell the server's callback, if it has one.
pub(crate) async fn roots_changed(call: Call, _: RootsListChangedParams) {
    if let Some(f) = call.server.inner.on_roots_changed.clone() {
        f(call.into_context(RootsListChanged::NAME, None, None));
    }
}
