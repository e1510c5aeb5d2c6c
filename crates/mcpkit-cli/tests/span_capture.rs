//! The tests that capture mcpkit's spans with a subscriber of their own thread, in a binary of
//! their own: in one process with tests that make the same spans and have no subscriber,
//! tracing's per-callsite interest, cached process-wide at a callsite's first use, can race with
//! a capture's subscriber being installed, and the capture then misses a span.
// Test code: a panic is a failing test, and test modules need no docs; said once here for
// every module of this binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;
mod spans;

mod a_call_through_a_proxy_is_one_trace;
mod client_http_spans_name_the_session;
mod inbound_cancellation_gets_a_server_span;
mod malformed_traceparent_starts_a_new_root_span;
