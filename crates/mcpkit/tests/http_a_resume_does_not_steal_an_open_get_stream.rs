//! A `GET` with `Last-Event-ID` naming the standalone stream does not take it over while the
//! first GET still holds it: it gets 409 Conflict, exactly as a second plain GET does, and the
//! open stream keeps its events. Once the holder is gone the resume replays what it missed.
//! Through the router (`oneshot`): dropping a reply drops its stream at once.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::assert_error;
use common::http::*;
use mcpkit::server::ToolDef;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn list_changed() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
}

#[tokio::test]
async fn a_resume_of_an_open_get_stream_is_409_like_a_second_get() {
    let server = test_server();
    let mcp = in_process(server.clone(), config());
    let s = mcp.open_session().await;
    mcp.assert_serves(&s, "initialized").await;

    let r = send(mcp.get(&s)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut held = SseReader::new(r);
    let prime = held.next().await.expect("priming event");
    assert_priming(&prime, Some(50));
    server.add_tool(ToolDef::new("first", || async { "1" }));
    let first = held.next().await.expect("the first list_changed");
    assert_eq!(first.json(), list_changed());
    let first_id = first.id.clone().expect("an event id");

    // A resume naming the open stream, and a plain GET: both 409, the same error.
    for last in [prime.id.as_deref().unwrap(), first_id.as_str()] {
        let r = send(mcp.get(&s).header("last-event-id", last)).await;
        assert_eq!(r.status(), StatusCode::CONFLICT, "resume after {last}");
        assert_error(&json_body(r).await, -32600, &Value::Null);
    }
    let r = send(mcp.get(&s)).await;
    assert_eq!(r.status(), StatusCode::CONFLICT);
    assert_error(&json_body(r).await, -32600, &Value::Null);

    // The holder still gets the session's events.
    server.add_tool(ToolDef::new("second", || async { "2" }));
    let second = held.next().await.expect("the holder keeps its stream");
    assert_eq!(second.json(), list_changed());

    // Once it is gone, the resume is served and replays what came after its id.
    drop(held);
    let r = send(mcp.get(&s).header("last-event-id", &first_id)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut resumed = SseReader::new(r);
    let replayed = resumed.next().await.expect("the missed event");
    assert_eq!(replayed.id, second.id);
    assert_eq!(replayed.json(), list_changed());
    server.add_tool(ToolDef::new("third", || async { "3" }));
    assert_eq!(resumed.next().await.expect("live again").json(), list_changed());
}
