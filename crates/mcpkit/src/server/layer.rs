//! The middleware core: the [`Middleware`] trait, [`Next`] (the rest of the stack), [`from_fn`]
//! and [`serialize`]. Public at `server::middleware` (with the built-in layers); here, beside
//! the method tables that run it, so that the server's own files need nothing from that module.

use std::future::Future;
use std::sync::Arc;

use super::methods::RequestEntry;
use super::Call;
use crate::engine::{BoxFuture, HandlerResult};

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
    pub(crate) layers: Arc<[Arc<dyn Middleware>]>,
    pub(crate) index: usize,
    pub(crate) entry: Arc<RequestEntry>,
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
                (*layer).handle(call, next)
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
