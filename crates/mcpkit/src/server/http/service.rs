//! [`HttpService`]: the endpoint as a plain `tower::Service` over `http` types, for hosts
//! other than axum (hyper itself, any tower server, a serverless function's adapter).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body as AxumBody;
use axum::http::{Request, Response};
use axum::Router;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// The error type of a body a host hands the service, and of [`ResponseBody`].
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The endpoint of an [`HttpServer`](super::HttpServer) as a `tower::Service<http::Request<B>>`
/// (see [`HttpServer::into_service`](super::HttpServer::into_service)). Cheap to clone: every
/// clone serves the same endpoint (its sessions, limits and shutdown token).
#[derive(Clone)]
pub struct HttpService {
    router: Router,
}

impl std::fmt::Debug for HttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpService").finish_non_exhaustive()
    }
}

impl HttpService {
    pub(super) fn new(router: Router) -> HttpService {
        HttpService { router }
    }
}

impl<B> tower_service::Service<Request<B>> for HttpService
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready; each call is served by its own clone.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let mut router = self.router.clone();
        let request = request.map(AxumBody::new);
        Box::pin(async move {
            use tower_service::Service;
            std::future::poll_fn(|cx| Service::<Request<AxumBody>>::poll_ready(&mut router, cx)).await?;
            let response = Service::<Request<AxumBody>>::call(&mut router, request).await?;
            Ok(response.map(|body| ResponseBody { inner: body }))
        })
    }
}

/// The body of an [`HttpService`] response: a JSON reply, or an SSE stream that ends when the
/// endpoint closes it. An `http_body::Body` of `Bytes`.
pub struct ResponseBody {
    inner: AxumBody,
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseBody").finish_non_exhaustive()
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.get_mut().inner)
            .poll_frame(cx)
            .map(|frame| frame.map(|f| f.map_err(BoxError::from)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
