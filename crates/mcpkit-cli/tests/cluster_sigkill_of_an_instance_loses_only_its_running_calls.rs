//! Three `mcpkit serve --http --redis` instances behind HAProxy; while clients of both eras call
//! `slow_compute` in a loop through the balancer, the instance that holds a handshake-era
//! session's GET stream is SIGKILLed. Only the calls running on it fail (at most one per
//! caller); HAProxy stops routing to it within two seconds; every later call of both eras
//! succeeds, the handshake-era sessions included; and the GET stream, resumed through
//! the balancer with `Last-Event-ID`, replays each notification published while it was down
//! exactly once, then goes on live.
//!
//! The figures (failed calls, time to eject) are printed for the deployment guide.

use crate::cluster_wire;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cluster_wire::{open_session, redis_cluster, stateless_client, EventStream, Next, SseEvent};
use serde_json::json;

/// Callers per era; each has one `slow_compute` call in flight at a time.
const CALLERS: usize = 3;
/// How long each call runs on its instance.
const CALL_SECONDS: f64 = 0.3;
/// Notifications published while the stream is down.
const DURING_OUTAGE: usize = 4;

#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    failed: AtomicUsize,
    ok_after_eject: AtomicUsize,
    /// Told after every call.
    counted: tokio::sync::Notify,
}

impl Tally {
    /// Wait until `enough` holds of this tally (checked after each call; at most the step
    /// timeout).
    async fn until(&self, what: &str, enough: impl Fn(&Tally) -> bool) {
        mcpkit_test_support::within(what, async {
            loop {
                let counted = self.counted.notified();
                tokio::pin!(counted);
                counted.as_mut().enable();
                if enough(self) {
                    return;
                }
                counted.await;
            }
        })
        .await;
    }
}

/// Call `slow_compute` on `client` until `stop`, counting outcomes (a call that does not answer
/// within 10 s counts as failed).
async fn call_in_a_loop(client: mcpkit::Client, tally: Arc<Tally>, stop: Arc<AtomicBool>, ejected: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let call = client.call_tool("slow_compute", json!({"seconds": CALL_SECONDS}));
        match tokio::time::timeout(Duration::from_secs(10), call).await {
            Ok(Ok(r)) if !r.is_error() => {
                tally.ok.fetch_add(1, Ordering::Relaxed);
                if ejected.load(Ordering::Relaxed) {
                    tally.ok_after_eject.fetch_add(1, Ordering::Relaxed);
                }
            }
            other => {
                eprintln!("failed call: {other:?}");
                tally.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
        tally.counted.notify_waiters();
    }
}

fn list_changed(events: &[SseEvent]) -> usize {
    let n = events
        .iter()
        .filter(|e| e.method().as_deref() == Some("notifications/tools/list_changed"));
    n.count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_of_one_instance_loses_only_the_calls_running_on_it() {
    let (_redis, mut cluster) = redis_cluster();
    let url = cluster.balancer.url();
    let http = reqwest::Client::new();

    // A handshake-era session with its GET stream open through the balancer: that stream's
    // instance is the one to kill.
    let session = open_session(&http, &url).await;
    let mut stream = EventStream::open(&http, &url, &session, None).await;
    let streams = cluster.balancer.open_streams().unwrap();
    assert_eq!(streams.len(), 1, "only the GET stream is open: {streams:?}");
    let victim = streams[0].clone();
    let survivors: Vec<String> = cluster
        .instances
        .iter()
        .map(|i| i.id().to_owned())
        .filter(|id| *id != victim)
        .collect();
    let direct = |id: &str| cluster.instances.iter().find(|i| i.id() == id).unwrap().url();
    let triggers = [
        stateless_client(&direct(&survivors[0])).await,
        stateless_client(&direct(&survivors[1])).await,
    ];

    // A notification from another instance before the outage: the point to resume from.
    triggers[0].call_tool("test_trigger_tool_change", ()).await.unwrap();
    let Next::Event(first) = stream.next(Duration::from_secs(10)).await else {
        panic!(
            "list_changed from {} did not reach the stream on {victim}",
            survivors[0]
        );
    };
    assert_eq!(first.method().as_deref(), Some("notifications/tools/list_changed"));
    let resume_from = first.id.clone().expect("GET stream events carry ids");

    // Callers of both eras through the balancer.
    let stop = Arc::new(AtomicBool::new(false));
    let ejected = Arc::new(AtomicBool::new(false));
    let stateless = Arc::new(Tally::default());
    let handshake = Arc::new(Tally::default());
    let mut loops = Vec::new();
    for _ in 0..CALLERS {
        let c = stateless_client(&url).await;
        loops.push(tokio::spawn(call_in_a_loop(
            c,
            stateless.clone(),
            stop.clone(),
            ejected.clone(),
        )));
        let c = cluster_wire::handshake_client(&url).await;
        loops.push(tokio::spawn(call_in_a_loop(
            c,
            handshake.clone(),
            stop.clone(),
            ejected.clone(),
        )));
    }
    // Calls have gone through every caller's client (two each on average) before the kill.
    for tally in [&stateless, &handshake] {
        tally
            .until("calls before the kill", |t| t.ok.load(Ordering::Relaxed) >= 2 * CALLERS)
            .await;
    }

    let killed_at = Instant::now();
    cluster.instance(&victim).kill();
    let balancer_wait = {
        let lb = &cluster.balancer;
        // Poll the runtime API off the runtime's threads' critical path.
        tokio::task::block_in_place(|| lb.wait_until_down(&victim, Duration::from_secs(10)))
    };
    let eject = balancer_wait.map(|_| killed_at.elapsed());
    ejected.store(true, Ordering::Relaxed);

    // The stream broke with its instance.
    let mut broke = false;
    for _ in 0..50 {
        match stream.next(Duration::from_millis(200)).await {
            Next::Ended => {
                broke = true;
                break;
            }
            Next::Event(e) => panic!("an event after the kill: {e:?}"),
            Next::Quiet => {}
        }
    }
    assert!(broke, "the GET stream on {victim} did not end when it was killed");

    // Published on the survivors while the stream is down.
    for n in 0..DURING_OUTAGE {
        triggers[n % 2].call_tool("test_trigger_tool_change", ()).await.unwrap();
    }
    // Resumed through the balancer (on a survivor): each missed notification once, nothing more.
    let mut resumed = EventStream::open(&http, &url, &session, Some(&resume_from)).await;
    let replayed = resumed.drain(Duration::from_secs(2)).await;
    // Then live.
    triggers[0].call_tool("test_trigger_tool_change", ()).await.unwrap();
    let live = resumed.drain(Duration::from_secs(2)).await;

    // Calls go on after the eject (one per caller on average), then stop.
    for tally in [&stateless, &handshake] {
        tally
            .until("calls after the eject", |t| {
                t.ok_after_eject.load(Ordering::Relaxed) >= CALLERS
            })
            .await;
    }
    stop.store(true, Ordering::Relaxed);
    for l in loops {
        l.await.unwrap();
    }
    // The tools/call POSTs HAProxy saw cut on the killed instance: the calls running there.
    let cut = cluster.balancer.wait_for_requests(0, Duration::ZERO, |r| {
        r.server == victim && r.termination != "--" && r.body_has("\"name\":\"slow_compute\"")
    });
    let failed = stateless.failed.load(Ordering::Relaxed) + handshake.failed.load(Ordering::Relaxed);
    eprintln!(
        "kill test: ejected after {eject:?}; failed calls: {} of {} (2026-07-28 {}, handshake era {}); \
         calls cut on {victim}: {}; calls after the eject: 2026-07-28 {}, handshake era {}",
        failed,
        failed + stateless.ok.load(Ordering::Relaxed) + handshake.ok.load(Ordering::Relaxed),
        stateless.failed.load(Ordering::Relaxed),
        handshake.failed.load(Ordering::Relaxed),
        cut.len(),
        stateless.ok_after_eject.load(Ordering::Relaxed),
        handshake.ok_after_eject.load(Ordering::Relaxed),
    );
    eprintln!("kill test: resumed from {resume_from:?}; replayed: {replayed:?}; live: {live:?}");
    for line in cluster.balancer.log_lines() {
        if !line.contains("term=--") {
            eprintln!("kill test: {line}");
        }
    }
    assert_eq!(
        list_changed(&replayed),
        DURING_OUTAGE,
        "the notifications published during the outage, exactly once: {replayed:#?}"
    );
    assert_eq!(replayed.len(), DURING_OUTAGE, "nothing else replayed: {replayed:#?}");
    assert_eq!(list_changed(&live), 1, "{live:#?}");
    let eject = eject.unwrap_or_else(|| {
        panic!(
            "HAProxy still routes to {victim}: {:?}",
            cluster.balancer.server_states()
        )
    });
    assert!(eject < Duration::from_secs(2), "ejected after {eject:?}");
    // Each caller has at most one call in flight: at most the callers' calls were running on
    // the killed instance, and nothing started after the kill fails.
    assert!(failed <= 2 * CALLERS, "{failed} failed calls");
    assert!(stateless.ok_after_eject.load(Ordering::Relaxed) > 0);
    assert!(
        handshake.ok_after_eject.load(Ordering::Relaxed) > 0,
        "the sessions go on elsewhere"
    );
    drop(triggers);
}
