//! The reference server's MCP Apps fixture (`io.modelcontextprotocol/ui`, SEP-1865): a counter
//! the model reads through `test_app_counter` (text for any host, a view for hosts with Apps)
//! and the view increments through the app-only `test_app_counter_increment`, by way of its
//! host.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mcpkit::apps::{UiResource, Visibility};
use mcpkit::server::{ServerBuilder, ToolDef};
use mcpkit::types::schema::CallToolResult;
use serde_json::json;

/// The view's URI.
pub const COUNTER_VIEW: &str = "ui://mcpkit-reference/counter";

/// The view: a self-contained page (no outside scripts) with the count and an "Increment"
/// button that calls the app-only tool through the host.
pub const COUNTER_HTML: &str = include_str!("counter.html");

/// The server with the counter, its tools and its view.
pub(super) fn with_apps(builder: ServerBuilder) -> ServerBuilder {
    let count = Arc::new(AtomicU64::new(0));
    builder
        .tool(test_app_counter(count.clone()))
        .tool(test_app_counter_increment(count))
        .resource(
            UiResource::html(COUNTER_VIEW, COUNTER_HTML)
                .name("counter")
                .description("The counter of test_app_counter, with an Increment button")
                .prefers_border(true),
        )
}

/// The count as text (what the model and hosts without Apps read) and as structured content
/// (what the view reads).
fn counted(n: u64) -> CallToolResult {
    let mut result = CallToolResult::text(format!("Count: {n}"));
    result.structured_content = Some(json!({ "count": n }));
    result
}

/// `test_app_counter` → the count; linked to the counter view.
fn test_app_counter(count: Arc<AtomicU64>) -> ToolDef {
    ToolDef::new("test_app_counter", move || {
        let n = count.load(Ordering::SeqCst);
        async move { counted(n) }
    })
    .description("Shows the counter (an MCP App view where the host renders one, text elsewhere)")
    .ui(COUNTER_VIEW)
}

/// `test_app_counter_increment` → adds one and answers the new count; only views call it.
fn test_app_counter_increment(count: Arc<AtomicU64>) -> ToolDef {
    ToolDef::new("test_app_counter_increment", move || {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        async move { counted(n) }
    })
    .description("Adds one to the counter (called by the counter view, not by the model)")
    .ui(COUNTER_VIEW)
    .visibility([Visibility::App])
}
