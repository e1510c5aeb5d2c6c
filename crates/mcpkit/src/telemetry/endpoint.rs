//! `/metrics` over HTTP: a router to serve on its own address, and a tower layer that answers
//! `GET /metrics` in front of any service (the MCP endpoint's router, an application's).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::Prometheus;

/// The content type of the Prometheus text format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

fn scrape(prometheus: &Prometheus) -> Response {
    ([(header::CONTENT_TYPE, TEXT_FORMAT)], prometheus.render()).into_response()
}

/// A router that serves `GET /metrics` (Prometheus text) and nothing else: for a metrics
/// address apart from the MCP endpoint (`mcpkit serve --metrics ADDR`).
pub fn metrics_router(prometheus: Prometheus) -> Router {
    Router::new().route("/metrics", get(move || std::future::ready(scrape(&prometheus))))
}

/// A tower layer answering `GET /metrics` with Prometheus text and passing every other request
/// to the service it wraps (`HttpServer::layer(MetricsLayer::new(p))`, or any axum app).
#[derive(Debug, Clone)]
pub struct MetricsLayer {
    prometheus: Prometheus,
}

impl MetricsLayer {
    /// Serve `prometheus` at `/metrics`.
    pub fn new(prometheus: Prometheus) -> MetricsLayer {
        MetricsLayer { prometheus }
    }
}

impl<S> tower_layer::Layer<S> for MetricsLayer {
    type Service = MetricsService<S>;
    fn layer(&self, inner: S) -> MetricsService<S> {
        MetricsService {
            inner,
            prometheus: self.prometheus.clone(),
        }
    }
}

/// The service [`MetricsLayer`] makes.
#[derive(Debug, Clone)]
pub struct MetricsService<S> {
    inner: S,
    prometheus: Prometheus,
}

impl<S> tower_service::Service<Request> for MetricsService<S>
where
    S: tower_service::Service<Request, Error = Infallible> + Send,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if request.uri().path() == "/metrics" {
            let response = if request.method() == Method::GET {
                scrape(&self.prometheus)
            } else {
                (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "GET")], Body::empty()).into_response()
            };
            return Box::pin(std::future::ready(Ok(response)));
        }
        let fut = self.inner.call(request);
        Box::pin(async move {
            let Ok(r) = fut.await;
            Ok(r.into_response())
        })
    }
}
