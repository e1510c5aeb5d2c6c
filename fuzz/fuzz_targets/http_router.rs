//! HTTP request handling through the router (`HttpServer::new(server).router()`, driven with
//! `tower::ServiceExt::oneshot`, no socket). Input: `METHOD PATH` on the first line, header
//! lines, a blank line, the body (a default `Host` is added when none is given). Properties: no
//! panic, never a 500, and a JSON reply is valid JSON.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use mcpkit::server::http::HttpConfig;
use mcpkit::server::{ResourceTemplateDef, Uri};
use mcpkit::types::schema::ResourceContents;
use mcpkit::{Args, HttpServer, Server, ToolDef};
use tower::ServiceExt;

#[derive(serde::Deserialize, mcpkit::schemars::JsonSchema)]
#[schemars(crate = "mcpkit::schemars")]
struct EchoArgs {
    text: String,
}

struct Endpoint {
    runtime: tokio::runtime::Runtime,
    router: Router,
}

fn endpoint() -> &'static Endpoint {
    static ENDPOINT: OnceLock<Endpoint> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let server = Server::builder()
            .name("fuzz", "1.0.0")
            .tool(ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.text }))
            .resource_template(
                ResourceTemplateDef::new("file:///{dir}/{name}", "file", |Uri(uri): Uri| async move {
                    ResourceContents::text(uri.clone(), Some("text/plain"), uri)
                })
                .unwrap(),
            )
            .build();
        let config = HttpConfig {
            // Sessions made by fuzz inputs must not fill the cap for the rest of the run.
            session_idle_timeout: Duration::from_secs(2),
            json_wait: Duration::from_millis(50),
            ..HttpConfig::default()
        };
        let router = runtime.block_on(async { HttpServer::new(server).config(config).sse_legacy(true).router() });
        Endpoint { runtime, router }
    })
}

fn request(data: &[u8]) -> Option<http::Request<Body>> {
    let split = data.windows(2).position(|w| w == b"\n\n");
    let (head, body) = match split {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let (method, path) = lines.next()?.split_once(' ')?;
    let mut b = http::Request::builder().method(method).uri(path);
    let mut has_host = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.trim().as_bytes()),
            http::HeaderValue::from_str(value.trim()),
        ) else {
            continue;
        };
        has_host |= name == http::header::HOST;
        b = b.header(name, value);
    }
    if !has_host {
        b = b.header(http::header::HOST, "127.0.0.1:8080");
    }
    b.body(Body::from(body.to_vec())).ok()
}

fuzz_target!(|data: &[u8]| {
    let Some(req) = request(data) else { return };
    let e = endpoint();
    e.runtime.block_on(async {
        let response = e.router.clone().oneshot(req).await.unwrap();
        assert_ne!(response.status(), http::StatusCode::INTERNAL_SERVER_ERROR);
        let json = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
        // Streams may stay open (a GET stream never ends): read only what arrives at once.
        let body = tokio::time::timeout(Duration::from_millis(100), response.into_body().collect()).await;
        if let (true, Ok(Ok(body))) = (json, body) {
            let bytes = body.to_bytes();
            if let Err(err) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                panic!("a JSON reply is not JSON ({err}): {}", String::from_utf8_lossy(&bytes));
            }
        }
    });
});
