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

use std::future::Future;
use std::sync::Arc;

use mcpkit_types::method::{Initialize, Method};

use super::methods::{Methods, RequestEntry};
use super::Call;
use crate::engine::{BoxFuture, HandlerResult};

pub use cache::ResponseCache;
pub use rate_limit::RateLimit;
pub use tool_limits::{ResponseLimit, ToolConcurrency, ToolTimeout};

/// One layer of middleware. Implement it for a type of your own, or build one from an async
/// function with [`from_fn`].
pub trait Middleware: Send + Sync + 'static {
    /// Handle one request: pass it on with `next.run(call)`, answer it without passing it on,
    /// or change what comes back. The future owns what it needs (`'static`): clone the layer's
    /// shared parts into it.
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult>;

    /// Whether this layer counts per client ([`Call::client`]): the HTTP front end then names
    /// the client (its address through the trusted proxies) on every request, which costs a
    /// little per request and is done only for servers with such a layer.
    fn counts_clients(&self) -> bool {
        false
    }
}

/// A shared layer (one value in several servers, or chosen at run time).
impl<M: Middleware + ?Sized> Middleware for Arc<M> {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        (**self).handle(call, next)
    }

    fn counts_clients(&self) -> bool {
        (**self).counts_clients()
    }
}

/// The rest of the stack, inside the layer holding it.
pub struct Next {
    layers: Arc<[Arc<dyn Middleware>]>,
    index: usize,
    entry: Arc<RequestEntry>,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("layers_left", &self.layers.len().saturating_sub(self.index))
            .finish_non_exhaustive()
    }
}

impl Next {
    /// Run the layers inside this one, then the method's handler.
    pub fn run(self, call: Call) -> BoxFuture<HandlerResult> {
        match self.layers.get(self.index).cloned() {
            Some(layer) => {
                let next = Next {
                    layers: self.layers,
                    index: self.index + 1,
                    entry: self.entry,
                };
                layer.handle(call, next)
            }
            None => (self.entry)(call),
        }
    }
}

/// A result a layer changed, as the stack returns it. What `next.run` returns is complete for
/// its era already (on the stateless wire it has `resultType`), so this only serializes; a
/// layer answering by itself uses [`Call::reply`] instead, which completes it.
pub fn serialize<T: serde::Serialize>(result: &T) -> HandlerResult {
    crate::wire::to_raw(result)
}

/// A layer from an async function of the call and the rest of the stack.
pub fn from_fn<F, Fut>(f: F) -> FromFn<F>
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    FromFn(f)
}

/// The layer [`from_fn`] makes.
#[derive(Clone)]
pub struct FromFn<F>(F);

impl<F> std::fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn")
    }
}

impl<F, Fut> Middleware for FromFn<F>
where
    F: Fn(Call, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        Box::pin((self.0)(call, next))
    }
}

/// `entry` with `layer` around it (what [`super::extensions::MethodTable::wrap`] puts in a
/// table).
pub(crate) fn around(entry: RequestEntry, layer: impl Middleware) -> RequestEntry {
    stacked(entry, Arc::new([Arc::new(layer) as Arc<dyn Middleware>]))
}

/// `entry` with `layers` around it, the first outermost. The first layer is called straight
/// from the entry: a `Call` is moved once less per request than through [`Next::run`].
fn stacked(entry: RequestEntry, layers: Arc<[Arc<dyn Middleware>]>) -> RequestEntry {
    let entry = Arc::new(entry);
    Box::new(move |call: Call| match layers.first() {
        Some(first) => first.handle(
            call,
            Next {
                layers: layers.clone(),
                index: 1,
                entry: entry.clone(),
            },
        ),
        None => entry(call),
    })
}

/// The layers of one server, in the order they were added.
#[derive(Clone, Default)]
pub(crate) struct Stack {
    layers: Vec<Arc<dyn Middleware>>,
}

impl Stack {
    pub(crate) fn push(&mut self, layer: Arc<dyn Middleware>) {
        self.layers.push(layer);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Whether a layer counts per client (see [`Middleware::counts_clients`]).
    pub(crate) fn counts_clients(&self) -> bool {
        self.layers.iter().any(|l| l.counts_clients())
    }

    /// Put the layers around every request entry of `table` but `initialize`. Without layers
    /// the table is left as it is: no cost at all.
    pub(crate) fn wrap(&self, table: &mut Methods) {
        if self.layers.is_empty() {
            return;
        }
        let layers: Arc<[Arc<dyn Middleware>]> = self.layers.clone().into();
        table.wrap(|name, entry| {
            if name == Initialize::NAME {
                return entry;
            }
            stacked(entry, layers.clone())
        });
    }
}
