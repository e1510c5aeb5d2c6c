//! The Streamable HTTP endpoint (spec: `basic/transports` "Streamable HTTP") as an axum
//! `Router`: Host/Origin checks first, then POST, GET or DELETE; an idle-session reaper beside it.

use std::sync::{Arc, Weak};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::Method;
use axum::response::Response;
use axum::Router;
use mcpkit_types::headers::SESSION_ID;

use super::admission::Client;
use super::get_delete::{delete, get};
use super::post::post;
use super::reply::{extensions_of, header_str, host_not_allowed, method_not_allowed, origin_not_allowed};
use super::security::{self, Refusal};
use super::state::{Endpoint, HttpState};

/// The endpoint serving `path`. Inside a tokio runtime it also starts the idle-session reaper,
/// which ends when the router is dropped.
pub(super) fn router(endpoint: Endpoint, path: &str) -> Router {
    let state = Arc::new(HttpState::new(endpoint));
    if tokio::runtime::Handle::try_current().is_ok() && !state.config.sessionless {
        tokio::spawn(reap(Arc::downgrade(&state)));
    }
    Router::new().route(path, axum::routing::any(handle)).with_state(state)
}

async fn reap(state: Weak<HttpState>) {
    loop {
        let Some(period) = state.upgrade().map(|s| s.sessions.table().reap_period()) else {
            return;
        };
        tokio::time::sleep(period).await;
        let Some(state) = state.upgrade() else { return };
        state.sessions.table().expire_idle();
    }
}

async fn handle(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let response = respond(&state, &parts, body).await;
    // `-vv` in mcpkit: one line per HTTP request (the messages are `HttpServer::inspect`'s).
    tracing::debug!(
        "{} {} -> {}{}",
        parts.method,
        parts.uri.path(),
        response.status(),
        header_str(&parts.headers, SESSION_ID).map_or(String::new(), |s| format!(" (session {s})"))
    );
    response
}

async fn respond(state: &HttpState, parts: &Parts, body: Body) -> Response {
    match security::check(
        &parts.headers,
        &state.config.allowed_hosts,
        &state.config.allowed_origins,
    ) {
        Ok(()) => {}
        Err(Refusal::Host) => return host_not_allowed(),
        Err(Refusal::Origin) => return origin_not_allowed(),
    }
    let client = Client::of(&parts.extensions, &parts.headers, &state.config);
    match parts.method {
        Method::POST => {
            let mut extensions = extensions_of(parts);
            if let Some(caller) = &client.caller {
                // Where the engine looks for it (`requestState` is sealed for it).
                extensions.insert(caller.clone());
            }
            post(state, &parts.headers, body, extensions, &client).await
        }
        Method::GET => get(state, &parts.headers, &client).await,
        Method::DELETE => delete(state, &parts.headers, &client).await,
        _ => method_not_allowed(state.allowed_methods()),
    }
}
