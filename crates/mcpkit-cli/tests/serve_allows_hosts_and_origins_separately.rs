//! `mcpkit serve`'s Host and Origin policies are separate: `--allow-any-host` accepts any
//! `Host` but still refuses a foreign `Origin`; `--allow-host HOST` and `--allow-origin ORIGIN`
//! (repeatable) each widen only their own list, beside the loopback defaults. The flags are
//! parsed as the command line does, and requests go into the configured router with
//! `tower::ServiceExt::oneshot` (no socket).

use axum::body::Body;
use axum::http::{Request, StatusCode};
use clap::Parser;
use mcpkit::server::http::HttpServer;
use mcpkit_cli::cmd::serve;
use tower::ServiceExt;

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: serve::Args,
}

/// The status of an `initialize` POST with these `Host` and `Origin` headers, to the endpoint
/// `mcpkit serve FLAGS` would run.
async fn initialize_status(flags: &[&str], host: &str, origin: Option<&str>) -> StatusCode {
    let cli = Serve::try_parse_from(["serve", "--http", "127.0.0.1:0"].iter().chain(flags)).unwrap();
    let router = HttpServer::new(mcpkit_cli::reference::server())
        .config(cli.args.http_config())
        .router();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut req = Request::post("/mcp")
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    let reply = router.oneshot(req.body(Body::from(body)).unwrap()).await.unwrap();
    reply.status()
}

const OK: StatusCode = StatusCode::OK;
const BAD_HOST: StatusCode = StatusCode::MISDIRECTED_REQUEST;
const BAD_ORIGIN: StatusCode = StatusCode::FORBIDDEN;

#[tokio::test]
async fn the_default_is_loopback_names_for_both() {
    assert_eq!(initialize_status(&[], "127.0.0.1:3000", None).await, OK);
    assert_eq!(
        initialize_status(&[], "localhost:3000", Some("http://localhost:5173")).await,
        OK
    );
    assert_eq!(initialize_status(&[], "mcp.example.com", None).await, BAD_HOST);
    assert_eq!(
        initialize_status(&[], "localhost", Some("https://evil.example")).await,
        BAD_ORIGIN
    );
}

#[tokio::test]
async fn allow_any_host_accepts_any_host_but_still_checks_origin() {
    let any = ["--allow-any-host"];
    assert_eq!(initialize_status(&any, "mcp.example.com:443", None).await, OK);
    assert_eq!(
        initialize_status(&any, "mcp.example.com", Some("http://localhost:5173")).await,
        OK
    );
    assert_eq!(
        initialize_status(&any, "mcp.example.com", Some("https://evil.example")).await,
        BAD_ORIGIN
    );
}

#[tokio::test]
async fn allow_host_widens_only_the_host_list() {
    let flags = ["--allow-host", "mcp.example.com", "--allow-host", "mcp.internal"];
    assert_eq!(initialize_status(&flags, "mcp.example.com:8080", None).await, OK);
    assert_eq!(initialize_status(&flags, "mcp.internal", None).await, OK);
    assert_eq!(initialize_status(&flags, "localhost", None).await, OK, "loopback stays");
    assert_eq!(initialize_status(&flags, "other.example.com", None).await, BAD_HOST);
    // Allowing a Host does not allow it as an Origin.
    assert_eq!(
        initialize_status(&flags, "mcp.example.com", Some("https://mcp.example.com")).await,
        BAD_ORIGIN
    );
}

#[tokio::test]
async fn allow_origin_widens_only_the_origin_list() {
    let flags = [
        "--allow-origin",
        "https://app.example.com",
        "--allow-origin",
        "tools.example.org",
    ];
    assert_eq!(
        initialize_status(&flags, "localhost", Some("https://app.example.com")).await,
        OK
    );
    assert_eq!(
        initialize_status(&flags, "localhost", Some("http://app.example.com")).await,
        BAD_ORIGIN,
        "a full origin is matched exactly"
    );
    assert_eq!(
        initialize_status(&flags, "localhost", Some("http://tools.example.org:9000")).await,
        OK
    );
    assert_eq!(
        initialize_status(&flags, "localhost", Some("http://localhost:5173")).await,
        OK
    );
    // Allowing an Origin does not allow it as a Host.
    assert_eq!(initialize_status(&flags, "app.example.com", None).await, BAD_HOST);
    let any = ["--allow-origin", "*"];
    assert_eq!(
        initialize_status(&any, "localhost", Some("https://anything.example")).await,
        OK
    );
    assert_eq!(initialize_status(&any, "anything.example", None).await, BAD_HOST);
}
