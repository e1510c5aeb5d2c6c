//! The Streamable HTTP endpoint (spec: `basic/transports` "Streamable HTTP") as an axum
//! `Router`: Host/Origin checks first, then POST, GET or DELETE; an idle-session reaper beside it.

use std::sync::{Arc, Weak};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::response::Response;
use axum::Router;
use mcpkit_types::headers::SESSION_ID;
use mcpkit_types::ErrorCode;
use tokio_util::sync::CancellationToken;

use super::admission::{Admission, Client};
use super::cluster::Cluster;
use super::config::HttpConfig;
use super::get_delete::{delete, get};
use super::post::post;
use super::reply::{extensions_of, header_str, method_not_allowed, rpc_error};
use super::security::{self, Refusal};
use super::session::Backend;
use super::state::HttpState;
use super::tap::WireTap;

/// The endpoint serving `path`. Inside a tokio runtime it also starts the idle-session reaper,
/// which ends when the router is dropped.
pub(super) fn router(
    backend: Backend,
    config: HttpConfig,
    admission: Arc<Admission>,
    path: &str,
    shutdown: CancellationToken,
    tap: WireTap,
    cluster: Option<Arc<Cluster>>,
) -> Router {
    let state = Arc::new(HttpState::new(backend, config, admission, shutdown, tap, cluster));
    let _ = state.me.set(Arc::downgrade(&state));
    if tokio::runtime::Handle::try_current().is_ok() && !state.config.sessionless {
        tokio::spawn(reap(Arc::downgrade(&state)));
    }
    Router::new().route(path, axum::routing::any(handle)).with_state(state)
}

async fn reap(state: Weak<HttpState>) {
    loop {
        let Some(period) = state.upgrade().map(|s| s.sessions.reap_period()) else {
            return;
        };
        tokio::time::sleep(period).await;
        let Some(state) = state.upgrade() else { return };
        state.sessions.expire_idle();
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
        Err(Refusal::Host) => {
            return rpc_error(
                StatusCode::MISDIRECTED_REQUEST,
                ErrorCode::INVALID_REQUEST,
                "Host not allowed",
                None,
            )
        }
        Err(Refusal::Origin) => {
            return rpc_error(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Origin not allowed",
                None,
            )
        }
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
