//! `/healthz` (the process is up) and `/readyz` (its backends answer, and the application's
//! own check passes), for load balancers.
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

/// The application's own readiness check ([`HttpServer::readiness`](super::HttpServer::readiness)):
/// why it is not ready, or `None`.
pub(super) type ReadyCheck = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// The two probes; `/readyz` asks `check`, then the shared session directory (none: ready).
pub(super) fn router(shared: Option<Arc<dyn SharedDirectory>>, check: Option<ReadyCheck>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { text(StatusCode::OK, "ok") }))
        .route(
            "/readyz",
            get(move || {
                let (shared, check) = (shared.clone(), check.clone());
                async move {
                    if let Some(reason) = check.and_then(|c| c()) {
                        return text(StatusCode::SERVICE_UNAVAILABLE, &format!("not ready: {reason}"));
                    }
                    ready(shared.as_deref()).await
                }
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
