//! With authorization on, a session belongs to the verified caller that opened it (spec:
//! security best practices, "Session Hijacking": bind session ids to the user): another user,
//! or the same user through another client, naming its `Mcp-Session-Id` gets 404 as if the
//! session did not exist — on POST, on GET (a `Last-Event-ID` replay of its events included)
//! and on DELETE — and the session goes on serving its owner. A legacy `/sse` session is bound
//! the same way. Through the router with `oneshot`, behind the real OAuth resource layer.
#![cfg(all(feature = "auth", feature = "server"))]

use crate::common;

use common::callers::{bearer, protected};
use common::http::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

/// initialize + notifications/initialized as `user`: the session id.
async fn open_session_as(mcp: &Mcp, user: &str) -> String {
    let r = send(mcp.post(None, initialize_body(0)).header("authorization", bearer(user))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let session = header(&r, "mcp-session-id").expect("an Mcp-Session-Id");
    let r = send(
        mcp.post(Some(&session), INITIALIZED)
            .header("authorization", bearer(user)),
    )
    .await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    session
}

async fn ping_as(mcp: &Mcp, session: &str, user: &str) -> StatusCode {
    let r = send(
        mcp.post(Some(session), request(9, "ping", json!({})))
            .header("authorization", bearer(user)),
    )
    .await;
    r.status()
}

#[tokio::test]
async fn another_callers_post_get_and_delete_get_404() {
    let mcp = protected(test_server(), config());
    let session = open_session_as(&mcp, "alice").await;

    // Alice's request streams, so its events are kept for replay.
    let r = send(
        mcp.post(Some(&session), progress_body(1, "progress", "p"))
            .header("authorization", bearer("alice")),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    let events = SseReader::new(r).rest().await;
    let first = events[0].id.clone().expect("a priming event id");

    for intruder in ["bob", "alice@another-client"] {
        assert_eq!(
            ping_as(&mcp, &session, intruder).await,
            StatusCode::NOT_FOUND,
            "{intruder}: POST"
        );
        let r = send(
            mcp.post(Some(&session), INITIALIZED)
                .header("authorization", bearer(intruder)),
        )
        .await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{intruder}: POST of a notification");
        let r = send(mcp.get(&session).header("authorization", bearer(intruder))).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{intruder}: GET");
        let r = send(
            mcp.get(&session)
                .header("last-event-id", &first)
                .header("authorization", bearer(intruder)),
        )
        .await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{intruder}: GET with Last-Event-ID");
        let r = send(mcp.delete(&session).header("authorization", bearer(intruder))).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{intruder}: DELETE");
    }

    // The owner is unaffected: its session serves, its events replay, its DELETE ends it.
    assert_eq!(ping_as(&mcp, &session, "alice").await, StatusCode::OK);
    let r = send(
        mcp.get(&session)
            .header("last-event-id", &first)
            .header("authorization", bearer("alice")),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    let replayed = SseReader::new(r).rest().await;
    assert_eq!(replayed.len(), events.len() - 1, "everything after the priming event");
    let r = send(mcp.delete(&session).header("authorization", bearer("alice"))).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(ping_as(&mcp, &session, "alice").await, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_legacy_sse_session_takes_messages_from_its_caller_only() {
    let mcp = protected(test_server(), config());
    let r = send(
        mcp.raw(Method::GET, "/sse")
            .header("accept", "text/event-stream")
            .header("authorization", bearer("alice")),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    let mut stream = SseReader::new(r);
    let endpoint = stream.next().await.expect("the endpoint event");
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"));
    let messages = endpoint.data.expect("the messages URL");
    let post_as = |user: &str| {
        mcp.raw(Method::POST, &messages)
            .header("content-type", "application/json")
            .header("authorization", bearer(user))
            .body(initialize_body(1))
    };
    assert_eq!(send(post_as("bob")).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(send(post_as("alice")).await.status(), StatusCode::ACCEPTED);
    let reply = stream.next().await.expect("the initialize result");
    assert_eq!(reply.json()["id"], 1);
}
