//! The load through mcpkit's own client: every call is a `Peer::request_raw` of the connected
//! [`Client`], with its transport. Used with `--driver client`, and for connections the bench
//! cannot drive itself (https, the legacy HTTP+SSE transport). Measures the client as much as
//! the server.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use mcpkit::types::method::CallTool;
use mcpkit::types::Method as _;
use mcpkit::{Client, RequestOptions};
use serde_json::value::RawValue;

use super::reply::classify_result;
use super::{new_histogram, Phase, PhaseResult};
use crate::target::{one_line, Failure};

/// Run `concurrency` callers until the phase says stop; merge their histograms.
pub(super) async fn run(
    client: &Client,
    params: &Arc<RawValue>,
    concurrency: usize,
    phase: &Arc<Phase>,
) -> Result<PhaseResult, Failure> {
    let mut tasks = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let client = client.clone();
        let params = params.clone();
        let phase = phase.clone();
        let mut hist = new_histogram()?;
        tasks.push(tokio::spawn(async move {
            let mut first_error = None;
            let peer = client.peer();
            while phase.take(Instant::now()) {
                let t0 = Instant::now();
                let outcome = peer
                    .request_raw(CallTool::NAME, Some(&*params), RequestOptions::default())
                    .await;
                hist.saturating_record(t0.elapsed().as_micros().max(1) as u64);
                phase.done.fetch_add(1, Ordering::Relaxed);
                let error = match outcome {
                    Ok(raw) => match classify_result(&raw) {
                        Ok(o) if o.is_error() => Some(o.describe()),
                        Ok(_) => None,
                        Err(e) => Some(e),
                    },
                    Err(e) => {
                        if peer.is_closed() {
                            phase.stop.store(true, Ordering::Relaxed);
                        }
                        Some(one_line(&e.to_string()))
                    }
                };
                if let Some(e) = error {
                    phase.errors.fetch_add(1, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
            }
            (hist, first_error)
        }));
    }
    super::merge(tasks).await
}
