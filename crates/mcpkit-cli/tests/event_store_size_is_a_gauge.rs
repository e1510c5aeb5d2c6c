//! `mcpkit.server.event_store.events`: how many SSE events the event store keeps for
//! `Last-Event-ID` resumption, sampled every few seconds by a running HTTP server with metrics
//! on. In memory: the server's own store; on Redis: the whole deployment's streams (another
//! prefix's are not counted), and a failed sample counts as an `event_store` backend error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mcpkit::server::backend::memory::MemoryEventStore;
use mcpkit::server::backend::EventStore;
use mcpkit::server::http::{HttpConfig, HttpServer};
use mcpkit::telemetry::{Prometheus, Telemetry};
use mcpkit::{Args, Server, ToolDef};
use mcpkit_redis::RedisBackends;
use mcpkit_test_support::redis::RedisProcess;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::Resource;
use serde_json::Value;

const GAUGE: &str = "mcpkit_server_event_store_events";

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

/// Wait (up to 15 s: the gauge is sampled every 5 s) until `series` reads `want`.
async fn until(prometheus: &Prometheus, series: &str, want: f64) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = prometheus.render();
        if value(&text, series) == Some(want) {
            return;
        }
        assert!(Instant::now() < deadline, "{series} never read {want}:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server recording into `prometheus`, and the provider (which must outlive it).
fn metered_server(prometheus: &Prometheus) -> (Server, SdkMeterProvider) {
    let provider = prometheus.meter_provider(Resource::builder_empty().build());
    let echo = ToolDef::new("echo", |Args(a): Args<Value>| async move { a.to_string() });
    let server = Server::builder()
        .tool(echo)
        .telemetry(Telemetry::new(&provider))
        .build();
    (server, provider)
}

async fn serve(http: HttpServer) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    tokio::spawn(http.serve(listener));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_size_follows_appends_and_removals() {
    let store = Arc::new(MemoryEventStore::new(4, 8));
    for (session, stream) in [("s1", "0"), ("s1", "0"), ("s1", "7"), ("s2", "0")] {
        store.append(session, stream, Bytes::from("event")).await.unwrap();
    }
    let prometheus = Prometheus::new();
    let config = HttpConfig {
        event_store: Some(store.clone()),
        ..HttpConfig::default()
    };
    let (server, _provider) = metered_server(&prometheus);
    serve(HttpServer::new(server).config(config)).await;
    until(&prometheus, GAUGE, 4.0).await;

    // Bounded per stream: six more appends to one stream keep four of its events.
    for _ in 0..6 {
        store.append("s2", "0", Bytes::from("event")).await.unwrap();
    }
    until(&prometheus, GAUGE, 7.0).await;
    store.remove_session("s1").await.unwrap();
    until(&prometheus, GAUGE, 4.0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_size_is_the_deployments_and_an_outage_is_an_error() {
    let mut redis = RedisProcess::start();
    let ours = RedisBackends::connect(&redis.url(), "gauge", "a").await.unwrap();
    let theirs = RedisBackends::connect(&redis.url(), "gauge-other", "a").await.unwrap();
    for (session, stream) in [("s1", "0"), ("s1", "0"), ("s1", "3"), ("s2", "0"), ("s3", "1")] {
        ours.events.append(session, stream, Bytes::from("event")).await.unwrap();
    }
    for _ in 0..3 {
        theirs.events.append("s1", "0", Bytes::from("other")).await.unwrap();
    }
    let events = ours.events.clone();
    let prometheus = Prometheus::new();
    let (server, _provider) = metered_server(&prometheus);
    serve(HttpServer::new(server).scale_out(ours)).await;
    until(&prometheus, GAUGE, 5.0).await;

    events.remove_stream("s1", "0").await.unwrap();
    until(&prometheus, GAUGE, 3.0).await;

    redis.stop();
    let errors = r#"mcpkit_server_backend_errors_total{backend="event_store"}"#;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = prometheus.render();
        if value(&text, errors).is_some_and(|n| n >= 1.0) {
            break;
        }
        assert!(Instant::now() < deadline, "no event_store error counted:\n{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
