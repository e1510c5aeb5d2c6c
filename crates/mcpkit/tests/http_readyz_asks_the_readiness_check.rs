//! `GET /readyz` also asks the endpoint's readiness check (a gateway's upstreams): its line
//! follows "ready: ", its refusal is 503 "not ready: …", and it changes with the check's
//! answer without a restart. `/healthz` stays 200 throughout. Through the router (`oneshot`).
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::http::*;
use mcpkit::server::http::HttpServer;
use reqwest::{Method, StatusCode};

async fn probe(mcp: &Mcp, path: &str) -> (StatusCode, String) {
    let r = send(mcp.raw(Method::GET, path)).await;
    let status = r.status();
    (status, String::from_utf8(r.bytes().await.unwrap().to_vec()).unwrap())
}

#[tokio::test]
async fn readyz_follows_the_check() {
    let up = Arc::new(AtomicBool::new(true));
    let check = up.clone();
    let http = HttpServer::new(test_server()).config(config()).readiness(move || {
        let up = check.load(Ordering::SeqCst);
        async move {
            match up {
                true => Ok("2 of 2 upstreams connected".to_owned()),
                false => Err("no upstream connected (files: connection refused)".to_owned()),
            }
        }
    });
    let mcp = Mcp::router(http.router());
    assert_eq!(
        probe(&mcp, "/readyz").await,
        (StatusCode::OK, "ready: 2 of 2 upstreams connected\n".to_owned())
    );
    up.store(false, Ordering::SeqCst);
    assert_eq!(
        probe(&mcp, "/readyz").await,
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: no upstream connected (files: connection refused)\n".to_owned()
        )
    );
    assert_eq!(probe(&mcp, "/healthz").await, (StatusCode::OK, "ok\n".to_owned()));
    up.store(true, Ordering::SeqCst);
    assert_eq!(probe(&mcp, "/readyz").await.0, StatusCode::OK);
}
