//! The built-in tool limits, through the method tables in both eras: `ToolTimeout` cancels
//! the handler (its cancellation token fires) and answers -32001 naming the tool;
//! `ToolConcurrency` refuses a call beyond the limit with -32029 (or queues it for a while when
//! asked) and frees the place when a call ends; `ResponseLimit` turns an oversized tool result
//! into a tool error and an oversized prompt into an internal error, and leaves the server's
//! own results (lists) alone.
#![cfg(feature = "server")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpkit::server::middleware::{ResponseLimit, ToolConcurrency, ToolTimeout};
use mcpkit::server::{CancellationToken, PromptDef, ToolDef};
use mcpkit::types::method::{CallTool, GetPrompt, ListTools};
use mcpkit::types::schema::{CallToolParams, GetPromptParams, PaginatedParams};
use mcpkit::types::{ErrorCode, ProtocolVersion};
use mcpkit::Server;
use serde_json::json;

const ERAS: [ProtocolVersion; 2] = [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28];

fn call(name: &str) -> CallToolParams {
    serde_json::from_value(json!({ "name": name, "arguments": {} })).unwrap()
}

/// `sleepy`: sleeps `ms`; a task it spawned sets `cancelled` when the call's cancellation
/// fires (what a handler's spawned work sees; the handler's own future is dropped).
fn sleepy(ms: u64, cancelled: Arc<AtomicBool>) -> ToolDef {
    ToolDef::new("sleepy", move |cancel: CancellationToken| {
        let cancelled = cancelled.clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            cancelled.store(true, Ordering::SeqCst);
        });
        async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            "slept"
        }
    })
}

#[tokio::test]
async fn a_tool_over_its_timeout_is_cancelled_and_the_caller_told() {
    for version in ERAS {
        let cancelled = Arc::new(AtomicBool::new(false));
        let server = Server::builder()
            .tool(sleepy(5_000, cancelled.clone()))
            .tool(ToolDef::new("quick", || async { "quick" }))
            .middleware(ToolTimeout::named().tool("sleepy", Duration::from_millis(50)))
            .build();
        let e = server.call_as::<CallTool>(version, call("sleepy")).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::REQUEST_TIMEOUT, "{version:?}");
        assert_eq!(e.message, "Tool sleepy timed out after 50ms; it was cancelled");
        assert_eq!(e.data, Some(json!({ "tool": "sleepy", "timeoutMs": 50 })));
        // The handler's cancellation fired.
        mcpkit_test_support::within("the handler's cancellation", async {
            while !cancelled.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        // A tool without a timeout is untouched.
        let r = server.call_as::<CallTool>(version, call("quick")).await.unwrap();
        assert_ne!(r.is_error, Some(true));
    }
}

#[tokio::test]
async fn a_call_beyond_the_concurrency_limit_is_refused_and_the_place_comes_back() {
    for version in ERAS {
        let server = Server::builder()
            .tool(sleepy(300, Arc::default()))
            .middleware(ToolConcurrency::new(1))
            .build();
        let first = tokio::spawn({
            let server = server.clone();
            async move { server.call_as::<CallTool>(version, call("sleepy")).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let e = server.call_as::<CallTool>(version, call("sleepy")).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RATE_LIMITED, "{version:?}");
        assert_eq!(
            e.data,
            Some(json!({ "retryAfterMs": 1000, "limit": "concurrency", "tool": "sleepy" }))
        );
        assert!(first.await.unwrap().is_ok());
        // The first call ended: its place is free again.
        assert!(server.call_as::<CallTool>(version, call("sleepy")).await.is_ok());
    }
}

#[tokio::test]
async fn a_queued_call_waits_for_a_place() {
    let server = Server::builder()
        .tool(sleepy(100, Arc::default()))
        .middleware(ToolConcurrency::new(1).queue(Duration::from_secs(5)))
        .build();
    let calls = (0..3).map(|_| {
        let server = server.clone();
        tokio::spawn(async move { server.call::<CallTool>(call("sleepy")).await })
    });
    for c in calls.collect::<Vec<_>>() {
        let r = c.await.unwrap().unwrap();
        assert_ne!(r.is_error, Some(true));
    }
}

#[tokio::test]
async fn an_oversized_result_is_a_tool_error_or_an_internal_error() {
    for version in ERAS {
        let server = Server::builder()
            .tool(ToolDef::new("big", || async { "x".repeat(2_000) }))
            .tool(ToolDef::new("small", || async { "ok" }))
            .middleware(ResponseLimit::new(1_000))
            .build();
        let r = server.call_as::<CallTool>(version, call("big")).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{version:?}");
        let text = serde_json::to_value(&r.content).unwrap()[0]["text"].clone();
        let text = text.as_str().unwrap();
        assert!(
            text.starts_with("The result was ") && text.ends_with("bytes, over this server's limit of 1000 bytes"),
            "{text}"
        );
        assert_ne!(
            server
                .call_as::<CallTool>(version, call("small"))
                .await
                .unwrap()
                .is_error,
            Some(true)
        );
        // A prompt over the limit is an internal error; the server's own results are not limited.
        let tight = Server::builder()
            .prompt(PromptDef::new("long", || async { "y".repeat(2_000) }))
            .tool(ToolDef::new("small", || async { "ok" }))
            .middleware(ResponseLimit::new(1_000))
            .build();
        let get: GetPromptParams = serde_json::from_value(json!({ "name": "long" })).unwrap();
        let e = tight.call_as::<GetPrompt>(version, get).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
        let tiny = Server::builder()
            .tool(ToolDef::new("small", || async { "ok" }))
            .middleware(ResponseLimit::new(10))
            .build();
        let page = tiny
            .call_as::<ListTools>(version, PaginatedParams::default())
            .await
            .unwrap();
        assert_eq!(page.tools.len(), 1);
    }
}
