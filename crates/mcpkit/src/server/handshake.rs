//! The handshake era's own methods (spec: `basic/lifecycle`, `server/resources`
//! "Subscriptions", `server/utilities/logging`): `initialize` and what lives on its session.

use std::sync::atomic::Ordering;

use mcpkit_types::method::{Initialize, Method, NotificationMethod, Ping, RootsListChanged};
use mcpkit_types::schema::{
    EmptyResult, InitializeParams, InitializeResult, RootsListChangedParams, SetLevelParams, SubscribeParams,
    UnsubscribeParams,
};
use mcpkit_types::{Era, ErrorObject, ProtocolVersion};
use serde_json::json;

use super::call::Call;
use super::client_state::ClientState;
use super::core_methods::{names_resource, resource_not_found};
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
    let max = call.server.inner.client_limits.max_client_declaration_bytes;
    if !fits(&(&p.client_info, &p.capabilities), max) {
        return Err(ErrorObject::invalid_params(format!(
            "clientInfo and capabilities take more than {max} bytes of JSON, this server's limit \
             (max_client_declaration_bytes)"
        ))
        .with_data(json!({ "limit": "max_client_declaration_bytes", "max": max })));
    }
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

/// Whether `value` serializes to at most `max` bytes of JSON (found without keeping them, and
/// without writing past `max`).
fn fits(value: &impl serde::Serialize, max: usize) -> bool {
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(buf.len())
                .ok_or_else(|| std::io::Error::other("over the limit"))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Budget(max), value).is_ok()
}

/// Spec: `server/resources` "Subscriptions", within the session's [`ClientLimits`]: the URI no
/// longer than `max_subscription_uri_bytes`, naming a resource or matching a template
/// (otherwise resource not found, -32002), and at most `max_subscriptions` of them.
///
/// [`ClientLimits`]: crate::server::ClientLimits
pub(crate) async fn subscribe(call: Call, p: SubscribeParams) -> HandlerResult {
    let limits = call.server.inner.client_limits;
    let max = limits.max_subscription_uri_bytes;
    if p.uri.len() > max {
        return Err(ErrorObject::invalid_params(format!(
            "The resource URI is {} bytes long, over this server's limit of {max} \
             (max_subscription_uri_bytes)",
            p.uri.len()
        ))
        .with_data(json!({ "limit": "max_subscription_uri_bytes", "max": max })));
    }
    if !names_resource(call.snapshot(), &p.uri) {
        return Err(resource_not_found(&p.uri, call.session.version()));
    }
    {
        let mut subscriptions = lock(&call.session.subscriptions);
        if subscriptions.contains(&p.uri) {
            return empty();
        }
        let max = limits.max_subscriptions;
        if subscriptions.len() >= max {
            return Err(ErrorObject::invalid_request(format!(
                "This session is subscribed to {max} resources, this server's limit \
                 (max_subscriptions): unsubscribe from one first"
            ))
            .with_data(json!({ "limit": "max_subscriptions", "max": max })));
        }
        subscriptions.insert(p.uri.clone());
    }
    if let Some(tell) = subscription_hook(call.snapshot(), &p.uri) {
        tell(&p.uri);
    }
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

/// What is told of a subscription to `uri`: the hook of the resource it names, else of the
/// first template it matches.
fn subscription_hook(snap: &super::Snapshot, uri: &str) -> Option<super::resource::OnSubscribe> {
    match snap.resource_index.get(uri) {
        Some(&i) => snap.catalog.resources[i].on_subscribe.clone(),
        None => snap
            .catalog
            .templates
            .iter()
            .find(|t| t.matcher.matches(uri).is_some())?
            .on_subscribe
            .clone(),
    }
}
