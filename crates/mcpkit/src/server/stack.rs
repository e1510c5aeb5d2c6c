//! Putting layers around table entries: the [`Stack`] of a server (every request entry) and
//! [`around`] (one entry, for an extension). The entry a stack makes calls the first layer
//! itself; the rest of the way is [`Next::run`]'s (`layer.rs`).

use std::sync::Arc;

use mcpkit_types::method::{Initialize, Method};

use super::layer::{Middleware, Next};
use super::methods::{Methods, RequestEntry};
use super::Call;

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
        // `&dyn Middleware`, not the `Arc` impl: one dynamic call, straight to the layer.
        Some(first) => (**first).handle(
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
