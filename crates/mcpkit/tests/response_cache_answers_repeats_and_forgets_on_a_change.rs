//! `ResponseCache`, over a real connection (the raw wire) in both eras: a repeated request is
//! answered from the cache (the handler runs once), other arguments are another entry, entries
//! expire, a catalogue change forgets them all, a result's own `ttlMs` shortens (or, at 0,
//! forbids) keeping it, and errors are never kept. Over HTTP each client has its own entries.
#![cfg(feature = "server")]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpkit::server::middleware::ResponseCache;
use mcpkit::server::{Args, CacheHint, ResourceDef, ToolDef};
use mcpkit::types::schema::CacheScope;
use mcpkit::Server;
use serde_json::{json, Value};

use crate::common::Wire;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Key {
    key: String,
}

/// `count` answers how often it ran (with its key); `fail` is always a tool error; the
/// resource `mem://n` reads how often it was read.
fn counting_server(cache: ResponseCache, reads: CacheHint) -> (Server, Arc<AtomicU64>) {
    let runs = Arc::new(AtomicU64::new(0));
    let (r1, r2, r3) = (runs.clone(), runs.clone(), runs.clone());
    let server = Server::builder()
        .tool(ToolDef::new("count", move |Args(k): Args<Key>| {
            let n = r1.fetch_add(1, Ordering::SeqCst) + 1;
            async move { format!("{} {n}", k.key) }
        }))
        .tool(ToolDef::new("fail", move || {
            r2.fetch_add(1, Ordering::SeqCst);
            async { Err::<String, _>("no") }
        }))
        .resource(ResourceDef::new("mem://n", "n", move || {
            let n = r3.fetch_add(1, Ordering::SeqCst) + 1;
            async move { n.to_string() }
        }))
        .read_cache_hint(reads)
        .middleware(cache.tool("count").tool("fail"))
        .build();
    (server, runs)
}

const STATELESS: &str = "2026-07-28";

/// A request of `method` in `era` (`None`: on the handshake-era session).
fn request(id: i64, method: &str, mut params: Value, stateless: bool) -> Value {
    if stateless {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "0" }
        });
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

async fn count(wire: &mut Wire, id: i64, key: &str, stateless: bool) -> String {
    let frame = request(
        id,
        "tools/call",
        json!({ "name": "count", "arguments": { "key": key } }),
        stateless,
    );
    let reply = wire.request(&frame).await;
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn connect(server: &Server, stateless: bool) -> Wire {
    let mut wire = Wire::serve(server);
    if !stateless {
        wire.initialize().await;
    }
    wire
}

#[tokio::test]
async fn a_repeat_is_answered_from_the_cache_until_it_expires_in_both_eras() {
    for stateless in [false, true] {
        let hint = CacheHint::new(Duration::from_secs(60), CacheScope::Private);
        let (server, runs) = counting_server(ResponseCache::new(Duration::from_millis(300)), hint);
        let mut wire = connect(&server, stateless).await;
        assert_eq!(count(&mut wire, 1, "a", stateless).await, "a 1");
        assert_eq!(
            count(&mut wire, 2, "a", stateless).await,
            "a 1",
            "stateless: {stateless}"
        );
        assert_eq!(count(&mut wire, 3, "b", stateless).await, "b 2");
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        tokio::time::sleep(Duration::from_millis(350)).await;
        assert_eq!(count(&mut wire, 4, "a", stateless).await, "a 3", "expired");
        // A tool error is never kept.
        for id in 5..7 {
            wire.request(&request(
                id,
                "tools/call",
                json!({ "name": "fail", "arguments": {} }),
                stateless,
            ))
            .await;
        }
        assert_eq!(runs.load(Ordering::SeqCst), 5);
    }
}

#[tokio::test]
async fn a_catalogue_change_forgets_every_entry() {
    for stateless in [false, true] {
        let hint = CacheHint::new(Duration::from_secs(60), CacheScope::Private);
        let (server, _) = counting_server(ResponseCache::new(Duration::from_secs(60)), hint);
        let mut wire = connect(&server, stateless).await;
        let names = |v: &Value| v["result"]["tools"].as_array().map(|t| t.len()).unwrap_or(0);
        let list = wire.request(&request(1, "tools/list", json!({}), stateless)).await;
        assert_eq!(names(&list), 2);
        assert_eq!(count(&mut wire, 2, "a", stateless).await, "a 1");
        server.add_tool(ToolDef::new("new", || async { "new" }));
        if !stateless {
            // The session hears the change first.
            assert_eq!(wire.recv().await["method"], "notifications/tools/list_changed");
        }
        let list = wire.request(&request(3, "tools/list", json!({}), stateless)).await;
        assert_eq!(names(&list), 3, "{list}");
        assert_eq!(count(&mut wire, 4, "a", stateless).await, "a 2", "forgotten");
    }
}

#[tokio::test]
async fn a_results_own_ttl_shortens_or_forbids_keeping_it() {
    // Reads say `ttlMs: 0` on the stateless wire: never kept there; kept in the handshake era,
    // whose results carry no hint.
    let (server, _) = counting_server(
        ResponseCache::new(Duration::from_secs(60)),
        CacheHint::new(Duration::ZERO, CacheScope::Private),
    );
    let read = |id, stateless| request(id, "resources/read", json!({ "uri": "mem://n" }), stateless);
    let text = |v: Value| {
        v["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let mut wire = connect(&server, true).await;
    assert_eq!(text(wire.request(&read(1, true)).await), "1");
    assert_eq!(text(wire.request(&read(2, true)).await), "2", "ttlMs 0: not kept");
    let mut wire = connect(&server, false).await;
    assert_eq!(text(wire.request(&read(3, false)).await), "3");
    assert_eq!(text(wire.request(&read(4, false)).await), "3", "kept");

    // `ttlMs: 100` keeps it 100 ms although the layer would keep it a minute.
    let (server, _) = counting_server(
        ResponseCache::new(Duration::from_secs(60)),
        CacheHint::new(Duration::from_millis(100), CacheScope::Private),
    );
    let mut wire = connect(&server, true).await;
    assert_eq!(text(wire.request(&read(1, true)).await), "1");
    assert_eq!(text(wire.request(&read(2, true)).await), "1");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(text(wire.request(&read(3, true)).await), "2");
}

#[cfg(all(feature = "http-server", feature = "http-client"))]
#[tokio::test]
async fn each_client_has_its_own_entries_over_http() {
    use crate::common::http::{config, in_process, json_body, request as http_request, send};
    let hint = CacheHint::new(Duration::from_secs(60), CacheScope::Private);
    let (server, _) = counting_server(ResponseCache::new(Duration::from_secs(60)), hint);
    let mcp = in_process(server, config());
    let session = mcp.open_session().await;
    let call = |peer: &'static str, id| {
        let body = http_request(
            id,
            "tools/call",
            json!({ "name": "count", "arguments": { "key": "k" } }),
        );
        send(mcp.post(Some(&session), body).sent_from(peer))
    };
    let text = |v: Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(text(json_body(call("10.0.0.1:1", 1).await).await), "k 1");
    assert_eq!(text(json_body(call("10.0.0.1:1", 2).await).await), "k 1");
    assert_eq!(
        text(json_body(call("10.0.0.2:1", 3).await).await),
        "k 2",
        "another client"
    );
}
