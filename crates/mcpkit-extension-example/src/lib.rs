//! `com.example/counter`: an MCP extension written outside mcpkit, on its public API alone —
//! the proof that the API is enough for what the official extensions do:
//!
//! - its settings are declared under `capabilities.extensions["com.example/counter"]`;
//! - `counter/next`, a method of its own (a [`Method`] descriptor defined here), served in both
//!   eras' tables;
//! - `tools/list` results decorated with `_meta["com.example/counter"]` (a layer around that
//!   one method, [`MethodTable::wrap`]);
//! - a layer of middleware around every method that counts the requests it sees
//!   ([`ServerBuilder::middleware`], added in [`Extension::extend`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mcpkit::engine::{BoxFuture, HandlerResult};
use mcpkit::server::extensions::{Extension, MethodTable};
use mcpkit::server::middleware::{self, Middleware, Next};
use mcpkit::server::{Call, ServerBuilder};
use mcpkit::types::method::{ListTools, Method};
use mcpkit::types::schema::{JsonObject, RequestParams};
use mcpkit::types::ErrorObject;
use serde_json::{json, Value};

/// The extension's identifier.
pub const ID: &str = "com.example/counter";

/// `counter/next`: the next number of the server's counter, and the era that served it.
#[derive(Debug)]
pub struct NextNumber;

impl Method for NextNumber {
    const NAME: &'static str = "counter/next";
    type Params = RequestParams;
    type Result = Value;
}

/// The extension: a counter shared by every request, and the number of requests its layer saw.
#[derive(Debug, Clone, Default)]
pub struct Counter {
    next: Arc<AtomicU64>,
    seen: Arc<AtomicU64>,
}

impl Counter {
    /// How many requests the extension's layer saw.
    pub fn seen(&self) -> u64 {
        self.seen.load(Ordering::Relaxed)
    }
}

/// The layer that counts every request.
struct Seen(Arc<AtomicU64>);

impl Middleware for Seen {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        self.0.fetch_add(1, Ordering::Relaxed);
        next.run(call)
    }
}

impl Extension for Counter {
    fn id(&self) -> &str {
        ID
    }

    fn settings(&self) -> JsonObject {
        let mut settings = JsonObject::new();
        settings.insert("start".into(), json!(0));
        settings
    }

    fn extend(&self, builder: ServerBuilder) -> ServerBuilder {
        builder.middleware(Seen(self.seen.clone()))
    }

    fn register(&self, table: &mut MethodTable<'_>) {
        let next = self.next.clone();
        table.request::<NextNumber, _, _>(move |call: Call, _| {
            let n = next.fetch_add(1, Ordering::Relaxed);
            async move { call.reply(&json!({ "n": n, "era": format!("{:?}", call.era()) })) }
        });
        table.wrap::<ListTools>(middleware::from_fn(|call: Call, next: Next| async move {
            let mut page: Value =
                serde_json::from_str(next.run(call).await?.get()).map_err(|e| ErrorObject::internal(e.to_string()))?;
            page["_meta"][ID] = json!(true);
            middleware::serialize(&page)
        }));
    }
}
