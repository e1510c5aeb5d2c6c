//! Three `mcpkit serve --http --redis` instances on one Redis. A handshake-era `tools/call`
//! (`slow_compute`, progress every tenth of a second) answers on an SSE stream of instance A;
//! A is SIGKILLed mid-call, so the call is lost with it. The client resumes the stream with
//! `Last-Event-ID` on instance B: it gets what the stream recorded after that id, each event
//! once, and then the stream ENDS (within a few seconds: no instance runs the request any
//! more), instead of staying open for a result that will never come. Control: a stream
//! resumed on B while A lives goes on live to the result and ends with it.

use crate::cluster_wire;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use cluster_wire::{open_session, redis_cluster, EventStream, Next, SseEvent};
use mcpkit_test_support::redis::{RedisProcess, RespValue};
use serde_json::{json, Value};

fn slow_call(seconds: f64) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "slow_compute", "arguments": {"seconds": seconds},
        "_meta": {"progressToken": "p"}}})
}

/// Read `stream` until it ends (at most `limit`): its events and how long it stayed open.
async fn until_end(stream: &mut EventStream, limit: Duration) -> (Vec<SseEvent>, Option<Duration>) {
    let start = Instant::now();
    let mut events = Vec::new();
    while start.elapsed() < limit {
        match stream.next(Duration::from_millis(200)).await {
            Next::Event(e) => events.push(e),
            Next::Ended => return (events, Some(start.elapsed())),
            Next::Quiet => {}
        }
    }
    (events, None)
}

/// Wait until the deployment's event store (the Redis streams under `*:ev:*`) holds an SSE
/// stream with `events` events: an event goes to the client while its append is still queued
/// (the store is written behind the stream), and the kill must come after it is recorded.
async fn until_recorded(redis: &RedisProcess, events: u64) {
    mcpkit_test_support::within("the events recorded in Redis", async {
        loop {
            let Ok(RespValue::Array(keys)) = redis.command(&["KEYS", "*:ev:*"]) else {
                panic!("KEYS failed")
            };
            let recorded = keys
                .iter()
                .filter_map(|k| match k {
                    RespValue::Bulk(Some(key)) => match redis.command(&["XLEN", key]) {
                        Ok(RespValue::Integer(n)) => u64::try_from(n).ok(),
                        _ => None,
                    },
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            if recorded >= events {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

fn position(id: &str) -> u64 {
    id.rsplit_once('-').unwrap().1.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_resumed_after_its_instance_died_ends() {
    let (redis, mut cluster) = redis_cluster();
    let http = reqwest::Client::new();
    let (a, b) = (cluster.instances[0].url(), cluster.instances[1].url());
    let a_id = cluster.instances[0].id().to_owned();

    // Control: A alive; the stream resumed on B goes on to the result, then ends.
    let session = open_session(&http, &a).await;
    let mut on_a = EventStream::post(&http, &a, &session, &slow_call(0.6)).await;
    let Next::Event(first) = on_a.next(Duration::from_secs(5)).await else {
        panic!("no progress")
    };
    drop(on_a);
    let mut resumed = EventStream::open(&http, &b, &session, first.id.as_deref()).await;
    let (events, ended) = until_end(&mut resumed, Duration::from_secs(10)).await;
    assert!(
        ended.is_some(),
        "the stream resumed while its instance lives ends with the result"
    );
    let last: Value = events.last().unwrap().json();
    assert_eq!(last["id"], 7, "it ends with the result: {last}");

    // A dies in the middle of a call.
    let mut on_a = EventStream::post(&http, &a, &session, &slow_call(30.0)).await;
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match on_a.next(Duration::from_secs(5)).await {
            Next::Event(e) => seen.push(e),
            other => panic!("progress expected: {other:?}"),
        }
    }
    let resume_from = seen[0].id.clone().unwrap();
    // Every event seen is recorded before the kill (the store numbers a stream's events 1, 2,
    // 3…: the last one seen at position p means p events).
    let last_seen = seen.last().and_then(|e| e.id.as_deref()).map_or(0, position);
    until_recorded(&redis, last_seen).await;
    cluster.instance(&a_id).kill();
    let killed = Instant::now();

    let mut resumed = EventStream::open(&http, &b, &session, Some(&resume_from)).await;
    let (replayed, ended) = until_end(&mut resumed, Duration::from_secs(10)).await;
    eprintln!(
        "resumed after the kill: from {resume_from}; replayed {} events; ended {ended:?} after the GET ({:?} after the kill)",
        replayed.len(),
        killed.elapsed()
    );
    let ids: Vec<String> = replayed.iter().map(|e| e.id.clone().unwrap()).collect();
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "each event once: {ids:?}");
    assert!(ids.iter().all(|id| position(id) > position(&resume_from)), "{ids:?}");
    assert!(
        replayed.len() >= 2,
        "what the stream recorded after {resume_from} before the kill is replayed: {ids:?}"
    );
    assert!(replayed
        .iter()
        .all(|e| e.method().as_deref() == Some("notifications/progress")));
    let ended = ended.expect("the resumed stream of a dead instance stays open for a result that cannot come");
    assert!(ended < Duration::from_secs(5), "it ends soon: {ended:?}");
}
