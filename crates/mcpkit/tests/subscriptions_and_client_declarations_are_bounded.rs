//! What a client keeps on its session is bounded (`ClientLimits`, set on the server builder):
//! `resources/subscribe` takes only URIs that name a resource or match a template (else -32002
//! "Resource not found", as `resources/read`), no longer than `max_subscription_uri_bytes`
//! (-32602), and at most `max_subscriptions` of them per session (-32600; subscribing again to
//! one already held is fine, unsubscribing makes room); an `initialize` whose `clientInfo` and
//! `capabilities` serialize past `max_client_declaration_bytes` is refused (-32602) and opens no
//! session. Each refusal names its limit. Over HTTP, through the router.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::assert_error;
use common::http::*;
use mcpkit::server::{ClientLimits, RawArgs, ResourceDef, ResourceTemplateDef, Uri};
use mcpkit::types::schema::{ReadResourceResult, ResourceContents};
use mcpkit::types::ErrorObject;
use mcpkit::Server;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn server(limits: Option<ClientLimits>) -> Server {
    let template = ResourceTemplateDef::new(
        "test://items/{id}",
        "item",
        |Uri(uri): Uri, RawArgs(_): RawArgs| async move {
            Ok::<_, ErrorObject>(ReadResourceResult::new(vec![ResourceContents::text(
                uri,
                Some("text/plain"),
                "item",
            )]))
        },
    )
    .unwrap();
    let builder = Server::builder()
        .resource(ResourceDef::text("test://known", "known", "text/plain", "here"))
        .resource_template(template);
    match limits {
        Some(l) => builder.client_limits(l),
        None => builder,
    }
    .build()
}

fn limits() -> ClientLimits {
    let mut l = ClientLimits::default();
    l.max_subscriptions = 3;
    l.max_subscription_uri_bytes = 64;
    l.max_client_declaration_bytes = 1024;
    l
}

async fn subscribe(mcp: &Mcp, session: &str, id: i64, uri: &str) -> Value {
    let (status, body) = mcp
        .call(Some(session), request(id, "resources/subscribe", json!({ "uri": uri })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn assert_ok(body: &Value, id: i64) {
    assert_eq!(body, &json!({"jsonrpc": "2.0", "id": id, "result": {}}));
}

fn assert_names(body: &Value, limit: &str) {
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(limit), "the error does not name {limit}: {body}");
    assert_eq!(body["error"]["data"]["limit"], limit, "{body}");
}

#[tokio::test]
async fn a_uri_that_names_no_resource_is_resource_not_found() {
    let mcp = in_process(server(Some(limits())), config());
    let s = mcp.open_session().await;
    assert_ok(&subscribe(&mcp, &s, 1, "test://known").await, 1);
    assert_ok(&subscribe(&mcp, &s, 2, "test://items/7").await, 2);
    let body = subscribe(&mcp, &s, 3, "test://nowhere").await;
    assert_error(&body, -32002, &json!(3));
    assert_eq!(body["error"]["message"], "Resource not found: test://nowhere", "{body}");
    assert_eq!(body["error"]["data"]["uri"], "test://nowhere", "{body}");
}

#[tokio::test]
async fn a_session_holds_at_most_max_subscriptions() {
    let mcp = in_process(server(Some(limits())), config());
    let s = mcp.open_session().await;
    for (id, n) in (1..=3).zip(1..) {
        assert_ok(&subscribe(&mcp, &s, id, &format!("test://items/{n}")).await, id);
    }
    let body = subscribe(&mcp, &s, 4, "test://items/4").await;
    assert_error(&body, -32600, &json!(4));
    assert_names(&body, "max_subscriptions");
    assert_eq!(body["error"]["data"]["max"], 3, "{body}");
    // One already held is no new subscription.
    assert_ok(&subscribe(&mcp, &s, 5, "test://items/2").await, 5);
    // Unsubscribing makes room.
    let (_, body) = mcp
        .call(
            Some(&s),
            request(6, "resources/unsubscribe", json!({"uri": "test://items/1"})),
        )
        .await;
    assert_ok(&body, 6);
    assert_ok(&subscribe(&mcp, &s, 7, "test://items/4").await, 7);
    // The cap is per session.
    let other = mcp.open_session().await;
    assert_ok(&subscribe(&mcp, &other, 8, "test://items/9").await, 8);
}

#[tokio::test]
async fn a_uri_longer_than_the_limit_is_refused() {
    let mcp = in_process(server(Some(limits())), config());
    let s = mcp.open_session().await;
    let long = format!("test://items/{}", "x".repeat(64));
    let body = subscribe(&mcp, &s, 1, &long).await;
    assert_error(&body, -32602, &json!(1));
    assert_names(&body, "max_subscription_uri_bytes");
    // By default too: a 2 MiB URI is refused, not kept.
    let mcp = in_process(server(None), config());
    let s = mcp.open_session().await;
    let huge = format!("test://items/{}", "x".repeat(2 * 1024 * 1024));
    let body = subscribe(&mcp, &s, 2, &huge).await;
    assert_error(&body, -32602, &json!(2));
    assert_names(&body, "max_subscription_uri_bytes");
    assert_eq!(body["error"]["data"]["max"], 4096, "{body}");
}

#[tokio::test]
async fn an_initialize_declaring_too_much_is_refused_and_opens_no_session() {
    let mcp = in_process(server(Some(limits())), config());
    let body = request(
        1,
        "initialize",
        json!({
            "protocolVersion": VERSION,
            "capabilities": {"experimental": {"padding": {"text": "x".repeat(2048)}}},
            "clientInfo": {"name": "big", "version": "0"}
        }),
    );
    let r = send(mcp.post(None, body)).await;
    assert_eq!(
        header(&r, "mcp-session-id"),
        None,
        "no session for a refused initialize"
    );
    let reply = json_body(r).await;
    assert_error(&reply, -32602, &json!(1));
    assert_names(&reply, "max_client_declaration_bytes");
    // A client info of ordinary size is fine.
    mcp.open_session().await;
}
