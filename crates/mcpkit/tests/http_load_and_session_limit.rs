//! Many concurrent sessions with concurrent calls, and the session limit's 503.
#![cfg(all(feature = "http-server", feature = "http-client", feature = "server"))]

use crate::common;

use common::http::*;
use common::{assert_error, within};
use mcpkit::server::http::HttpConfig;
use reqwest::StatusCode;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Load and limits.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_sessions_of_five_concurrent_calls() {
    let running = start(test_server(), config()).await;
    let mcp = std::sync::Arc::new(Mcp::new(&running.url));
    let sessions = (0..100).map(|n| {
        let mcp = mcp.clone();
        tokio::spawn(async move {
            let s = mcp.open_session().await;
            let calls = (0..5).map(|c| {
                let (mcp, s) = (mcp.clone(), s.clone());
                async move {
                    let text = format!("session {n} call {c}");
                    let (status, body) = mcp.call(Some(&s), echo_body(c, &text)).await;
                    assert_eq!(status, StatusCode::OK, "{body}");
                    assert_eq!(body["id"], c);
                    assert_eq!(result_text(&body), text);
                }
            });
            futures_util::future::join_all(calls).await.len()
        })
    });
    let answered: usize = within("500 calls", futures_util::future::join_all(sessions))
        .await
        .into_iter()
        .map(|r| r.expect("a session task"))
        .sum();
    assert_eq!(answered, 500);
}

#[tokio::test]
async fn max_sessions_refuses_the_next_initialize_with_503() {
    let running = start(
        test_server(),
        HttpConfig {
            max_sessions: 3,
            ..config()
        },
    )
    .await;
    let mcp = Mcp::new(&running.url);
    let mut open = Vec::new();
    for _ in 0..3 {
        open.push(mcp.open_session().await);
    }
    let r = send(mcp.post(None, initialize_body(4))).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(header(&r, "mcp-session-id").is_none());
    assert_error(&json_body(r).await, -32603, &json!(4));
    for s in &open {
        mcp.assert_serves(s, "a refused initialize").await;
    }
    // Ending one makes room.
    assert_eq!(send(mcp.delete(&open[0])).await.status(), StatusCode::OK);
    let fourth = mcp.open_session().await;
    mcp.assert_serves(&fourth, "initialize after DELETE").await;
}
