//! `/healthz` (the process is up) and `/readyz` (its backends answer), for load balancers.
//! Neither checks `Host` or credentials, and neither says more than ready or why not.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::directory::SharedDirectory;
use crate::engine::BoxFuture;

/// What else `/readyz` asks (see [`super::HttpServer::readiness`]): `Ok` with a line to add
/// after "ready", or `Err` with why not.
pub(super) type Readiness = Arc<dyn Fn() -> BoxFuture<Result<String, String>> + Send + Sync>;

/// How long `/readyz` waits for the backends before it calls them unreachable.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// The two probes; `/readyz` asks the shared session directory and `also` (neither: always
/// ready).
pub(super) fn router(shared: Option<Arc<dyn SharedDirectory>>, also: Option<Readiness>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { text(StatusCode::OK, "ok") }))
        .route(
            "/readyz",
            get(move || {
                let (shared, also) = (shared.clone(), also.clone());
                async move {
                    let backends = ready(shared.as_deref()).await;
                    match (backends.status(), also) {
                        (StatusCode::OK, Some(also)) => match tokio::time::timeout(READY_TIMEOUT, also()).await {
                            Ok(Ok(line)) if line.is_empty() => backends,
                            Ok(Ok(line)) => text(StatusCode::OK, &format!("ready: {line}")),
                            Ok(Err(why)) => text(StatusCode::SERVICE_UNAVAILABLE, &format!("not ready: {why}")),
                            Err(_) => text(StatusCode::SERVICE_UNAVAILABLE, "not ready: no answer in time"),
                        },
                        _ => backends,
                    }
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
