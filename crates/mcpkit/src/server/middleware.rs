//! Middleware over the method tables: layers that see each request as the server's table
//! receives it ([`Call`]: the method, the caller, the params they ask for, `_meta`), in both eras
//! and on every transport, and pass it on, answer it themselves, or change the result.
//!
//! ```
//! use mcpkit::server::middleware::{self, Next};
//! use mcpkit::server::Call;
//! use mcpkit::types::method::CallTool;
//!
//! // Refuse one tool to callers without a verified identity; pass everything else on.
//! let guard = middleware::from_fn(|call: Call, next: Next| async move {
//!     if call.is::<CallTool>() && call.target().as_deref() == Some("delete") && call.caller().is_none() {
//!         return call.tool_error("delete needs a signed-in caller");
//!     }
//!     next.run(call).await
//! });
//! let server = mcpkit::Server::builder().enable_tools().middleware(guard).build();
//! # let _ = server;
//! ```
//!
//! **Order**: layers run in the order they were added, the first outermost: it sees the request
//! first and the result last. **Which methods**: every request method the table serves (core,
//! extensions' own), except `initialize`, which the core answers in arrival order before any
//! layer; a method the table does not hold is answered "method not found" without them.
//! Notifications do not pass through layers. **Cost**: a server without layers runs its table
//! entries as they are; each layer costs one boxed future per request plus its own work.
//!
//! The shape is tower's (a layer holds the rest of the stack and calls it) without tower's
//! `poll_ready`: a table entry is a function from a [`Call`] to a boxed future already, so a
//! `Service` would add a second boxing per layer and readiness that no entry has.

mod cache;
mod rate_limit;
mod tool_limits;

pub use super::layer::{from_fn, serialize, FromFn, Middleware, Next};

pub use cache::ResponseCache;
pub use rate_limit::RateLimit;
pub use tool_limits::{ResponseLimit, ToolConcurrency, ToolTimeout};
