//! `HttpConfig::allowed_hosts` and `HttpConfig::allowed_origins` are separate policies:
//! accepting any `Host` still checks `Origin`, and an origin entry may be a full origin
//! (`https://app.example.com`, matched exactly) as well as a host name. Through the router
//! (`oneshot`), no socket.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::http::*;
use mcpkit::server::http::HttpConfig;
use reqwest::StatusCode;

async fn status(config: &HttpConfig, host: &str, origin: Option<&str>) -> StatusCode {
    let mcp = in_process(test_server(), config.clone());
    let mut req = mcp.post(None, initialize_body(1)).header("host", host);
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    send(req).await.status()
}

#[tokio::test]
async fn any_host_still_checks_origin() {
    let config = HttpConfig {
        allowed_hosts: vec!["*".into()],
        ..config()
    };
    assert_eq!(status(&config, "mcp.example.com", None).await, StatusCode::OK);
    assert_eq!(
        status(&config, "mcp.example.com", Some("http://localhost:5173")).await,
        StatusCode::OK
    );
    assert_eq!(
        status(&config, "mcp.example.com", Some("https://evil.example")).await,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn an_origin_entry_may_be_a_full_origin_matched_exactly() {
    let mut config = config();
    config.allowed_origins.push("https://app.example.com".into());
    for ok in [
        "https://app.example.com",
        "https://APP.example.com",
        "http://localhost:5173",
    ] {
        assert_eq!(status(&config, "localhost", Some(ok)).await, StatusCode::OK, "{ok}");
    }
    for refused in [
        "http://app.example.com",
        "https://app.example.com:8443",
        "https://evil.example",
    ] {
        assert_eq!(
            status(&config, "localhost", Some(refused)).await,
            StatusCode::FORBIDDEN,
            "{refused}"
        );
    }
    // An allowed origin is not an allowed Host.
    assert_eq!(
        status(&config, "app.example.com", None).await,
        StatusCode::MISDIRECTED_REQUEST
    );
}
