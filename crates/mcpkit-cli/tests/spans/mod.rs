//! A `tracing` layer that keeps every span of mcpkit's telemetry target made on this thread,
//! with its fields as recorded (at creation and later), for tests of the spans' attributes.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;

/// One span: its name (`mcp.server`, `mcp.client`) and its fields.
#[derive(Debug, Clone)]
pub struct Captured {
    pub name: &'static str,
    pub fields: HashMap<String, String>,
}

impl Captured {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// The spans seen so far.
#[derive(Clone, Default)]
pub struct Spans(Arc<Mutex<Vec<(u64, Captured)>>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let span = Captured {
            name: attrs.metadata().name(),
            fields,
        };
        self.0.lock().unwrap().push((id.into_u64(), span));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut all = self.0.lock().unwrap();
        // Ids are reused once a span closes: the latest span with the id is the live one.
        if let Some((_, span)) = all.iter_mut().rev().find(|(i, _)| *i == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
}

impl Spans {
    /// Listen to mcpkit's spans on this thread until the guard is dropped.
    pub fn install() -> (Spans, tracing::subscriber::DefaultGuard) {
        let spans = Spans::default();
        let filter = Targets::new().with_target(mcpkit::telemetry::SPAN_TARGET, LevelFilter::INFO);
        let guard = tracing_subscriber::registry()
            .with(spans.clone().with_filter(filter))
            .set_default();
        (spans, guard)
    }

    /// Every span so far.
    pub fn all(&self) -> Vec<Captured> {
        self.0.lock().unwrap().iter().map(|(_, s)| s.clone()).collect()
    }

    /// The spans named `name` (`mcp.server`, `mcp.client`) of `method`.
    pub fn of(&self, name: &str, method: &str) -> Vec<Captured> {
        self.all()
            .into_iter()
            .filter(|s| s.name == name && s.field("mcp.method.name") == Some(method))
            .collect()
    }
}
