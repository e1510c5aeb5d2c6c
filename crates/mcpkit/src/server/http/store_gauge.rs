//! The `mcpkit.server.event_store.events` gauge: the event store's count, sampled every few
//! seconds while the endpoint lives (a metrics scrape cannot wait for a backend). A failed
//! sample counts in `mcpkit.server.backend.errors{backend="event_store"}`.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::server::backend::EventStore;
use crate::telemetry::Telemetry;

/// How often the store is asked.
pub(super) const EVERY: Duration = Duration::from_secs(5);

/// Sample `store` into `telemetry` until `stop` fires or the store is dropped. Nothing when
/// no metrics are recorded, or outside a Tokio runtime (a router built for tests).
pub(super) fn start(telemetry: Telemetry, store: &Arc<dyn EventStore>, stop: CancellationToken) {
    if !telemetry.records_metrics() || tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    let store = Arc::downgrade(store);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let Some(store) = store.upgrade() else { return };
            match store.events_kept().await {
                Ok(Some(events)) => telemetry.event_store_size(events),
                // A store that does not count: no gauge.
                Ok(None) => return,
                Err(e) => {
                    telemetry.backend_error("event_store");
                    tracing::debug!("event store size: {e}");
                }
            }
        }
    });
}
