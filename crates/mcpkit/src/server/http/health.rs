//! `/healthz` (the process is up) and `/readyz` (its backends answer), for load balancers.
//! Neither checks `Host` or credentials, and neither says more than ready or why not.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::directory::SharedDirectory;

/// How long `/readyz` waits for the backends before it calls them unreachable.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// The two probes; `/readyz` asks the shared session directory (none: always ready).
pub(super) fn router(shared: Option<Arc<dyn SharedDirectory>>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { text(StatusCode::OK, "ok") }))
        .route(
            "/readyz",
            get(move || {
                let shared = shared.clone();
                async move { ready(shared.as_deref()).await }
            }),
        )
}

async fn ready(shared: Option<&dyn SharedDirectory>) -> Response {
    let Some(b) = shared else {
        return text(StatusCode::OK, "ready");
    };
    match tokio::time::timeout(READY_TIMEOUT, b.ready()).await {
        Ok(Ok(())) => text(StatusCode::OK, "ready"),
        Ok(Err(e)) => text(StatusCode::SERVICE_UNAVAILABLE, &format!("not ready: {e}")),
        Err(_) => text(
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the backends did not answer in time",
        ),
    }
}

fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{body}\n"),
    )
        .into_response()
}
