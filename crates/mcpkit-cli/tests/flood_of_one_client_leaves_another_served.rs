//! One hostile client at every per-client cap at once — sessions, tasks, subscriptions — on a
//! `mcpkit serve --http --redis` process behind a trusted balancer (the client named in
//! `X-Forwarded-For`): each of its extra requests is refused naming its limit, while a second
//! client's sessions, calls, tasks and subscriptions keep working. The server's resident memory
//! and Redis's `used_memory` before and after are printed (`--nocapture`) and stay bounded.

use crate::support;

use std::time::Duration;

use mcpkit_test_support::redis::{RedisProcess, RespValue};
use mcpkit_test_support::sse::reply_of;
use serde_json::{json, Value};
use support::serve_http;

const VERSION: &str = "2025-11-25";
const SESSIONS: usize = 30;
const TASKS: usize = 20;
const SUBSCRIPTIONS: usize = 20;

/// One client, as the balancer names it.
struct Caller {
    http: reqwest::Client,
    url: String,
    address: &'static str,
}

impl Caller {
    async fn post(&self, session: Option<&str>, body: &Value) -> reqwest::Response {
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("x-forwarded-for", self.address)
            .body(body.to_string());
        if let Some(s) = session {
            req = req.header("mcp-session-id", s).header("mcp-protocol-version", VERSION);
        }
        req.send().await.unwrap()
    }

    /// A session declaring the Tasks extension, or the status and body that refused it.
    async fn open_session(&self) -> Result<String, (u16, String)> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION,
            "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            "clientInfo": {"name": "flood", "version": "0"}}});
        let r = self.post(None, &init).await;
        let status = r.status().as_u16();
        let session = r
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = r.text().await.unwrap();
        let Some(session) = session.filter(|_| status == 200) else {
            return Err((status, body));
        };
        let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(&session), &ready).await.status(), 202);
        Ok(session)
    }

    /// A request's JSON-RPC reply.
    async fn request(&self, session: &str, id: u64, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let r = self.post(Some(session), &body).await;
        reply_of(&r.text().await.unwrap())
    }

    /// `slow_compute` as a task (a minute of work, a label of a few KiB kept with it).
    async fn make_task(&self, session: &str, id: u64) -> Value {
        let label = "x".repeat(4096);
        let args = json!({"name": "slow_compute", "arguments": {"seconds": 60, "label": label}});
        self.request(session, id, "tools/call", args).await
    }

    async fn subscribe(&self, session: &str, id: u64, n: usize) -> Value {
        let uri = format!("test://template/{n}/data");
        self.request(session, id, "resources/subscribe", json!({"uri": uri}))
            .await
    }
}

/// Resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn used_memory(redis: &RedisProcess) -> u64 {
    let Ok(RespValue::Bulk(Some(info))) = redis.command(&["INFO", "memory"]) else {
        panic!("INFO memory failed")
    };
    let line = info.lines().find(|l| l.starts_with("used_memory:")).unwrap();
    line["used_memory:".len()..].trim().parse().unwrap()
}

#[tokio::test]
async fn a_client_at_every_cap_leaves_another_client_served() {
    let redis = RedisProcess::start();
    let caps = [
        ("--max-sessions-per-client", SESSIONS),
        ("--max-tasks-per-client", TASKS),
        ("--max-subscriptions", SUBSCRIPTIONS),
    ]
    .map(|(flag, n)| (flag, n.to_string()));
    let redis_url = redis.url();
    let mut args = vec!["--redis", redis_url.as_str(), "--trusted-proxy", "127.0.0.1/32"];
    for (flag, n) in &caps {
        args.extend([*flag, n.as_str()]);
    }
    let (server, url, _stderr) = serve_http(&args).await;
    let pid = server.id().unwrap();
    let http = reqwest::Client::new();
    let hostile = Caller {
        http: http.clone(),
        url: url.clone(),
        address: "10.0.0.1",
    };
    let other = Caller {
        http,
        url,
        address: "10.0.0.2",
    };
    // Warm: the second client's first session and call, so both figures start from a server
    // that has served.
    let theirs = other.open_session().await.unwrap();
    other.request(&theirs, 1, "ping", json!({})).await;
    let (rss_before, redis_before) = (rss_kib(pid), used_memory(&redis));

    // Sessions: the client's share, then a refusal naming it.
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(hostile.open_session().await.unwrap());
    }
    let (status, body) = hostile.open_session().await.unwrap_err();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("Too many sessions for this client"), "{body}");

    // Tasks: the client's share across its sessions, then a refusal naming it.
    for (n, session) in sessions.iter().cycle().take(TASKS).enumerate() {
        let made = hostile.make_task(session, n as u64 + 10).await;
        assert!(made["result"]["taskId"].is_string(), "{made}");
    }
    let refused = hostile.make_task(&sessions[0], 99).await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("at most {TASKS} tasks")), "{refused}");

    // Subscriptions: a session's share, then a refusal naming it.
    for n in 0..SUBSCRIPTIONS {
        let ok = hostile.subscribe(&sessions[1], 100 + n as u64, n).await;
        assert!(ok.get("result").is_some(), "{ok}");
    }
    let refused = hostile.subscribe(&sessions[1], 199, SUBSCRIPTIONS).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["data"]["limit"], "max_subscriptions", "{refused}");

    // The other client: new sessions, calls, tasks and subscriptions all served.
    let fresh = other.open_session().await.expect("another client opens a session");
    let echoed = other
        .request(
            &fresh,
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "still here"}}),
        )
        .await;
    assert_eq!(echoed["result"]["content"][0]["text"], "still here", "{echoed}");
    let task = other.make_task(&theirs, 3).await;
    assert!(task["result"]["taskId"].is_string(), "{task}");
    let subscribed = other.subscribe(&fresh, 4, 0).await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");

    tokio::time::sleep(Duration::from_millis(200)).await;
    let (rss_after, redis_after) = (rss_kib(pid), used_memory(&redis));
    println!(
        "flood: server RSS {rss_before} KiB -> {rss_after} KiB; Redis used_memory {redis_before} B -> {redis_after} B"
    );
    // Bounded: what the caps allow (30 sessions, 20 tasks of ~4 KiB, 20 short subscriptions) is
    // well under a few MiB; a leak per refused request would show far beyond.
    assert!(
        rss_after.saturating_sub(rss_before) < 32 * 1024,
        "RSS grew by more than 32 MiB"
    );
    assert!(
        redis_after.saturating_sub(redis_before) < 8 << 20,
        "Redis grew by more than 8 MiB"
    );
}
