//! `mcpkit gateway` reloads its upstreams while a downstream session stays open on the same
//! session id: an upstream added to the file appears (the session's GET stream is told
//! `notifications/tools/list_changed`), one removed goes, a file that does not read is reported
//! and ignored, and SIGHUP reloads a change the file watcher cannot see (the config path is a
//! symbolic link, re-pointed in a folder that is not watched).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::gateway::{stdio_reference, stdio_typescript, Gateway};

use crate::cluster_wire::{open_session, post, EventStream, Next};
use crate::support;

/// One request on `session`: its JSON-RPC reply.
async fn rpc(http: &reqwest::Client, url: &str, session: &str, id: u64, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let reply = post(http, url, Some(session), &body).await;
    assert_eq!(reply.status(), 200, "{method} on session {session}");
    mcpkit_test_support::sse::reply_of(&reply.text().await.unwrap())
}

/// The session's tool names, sorted.
async fn tools(http: &reqwest::Client, url: &str, session: &str) -> Vec<String> {
    let reply = rpc(http, url, session, 100, "tools/list", json!({})).await;
    let mut names: Vec<String> = reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{reply}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// Poll the list (every 50 ms, 20 s at most) until `want` holds; the last list.
async fn tools_until(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    want: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let names = tools(http, url, session).await;
        if want(&names) || Instant::now() >= deadline {
            return names;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether the GET stream gets `notifications/tools/list_changed` within 20 s.
async fn told(stream: &mut EventStream) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match stream.next(left).await {
            Next::Event(e) if e.method().as_deref() == Some("notifications/tools/list_changed") => return true,
            Next::Event(_) => {}
            Next::Ended | Next::Quiet => return false,
        }
    }
}

async fn echo(http: &reqwest::Client, url: &str, session: &str, tool: &str) -> Value {
    let reply = rpc(
        http,
        url,
        session,
        7,
        "tools/call",
        json!({"name": tool, "arguments": {"message": "same session"}}),
    )
    .await;
    reply["result"]["content"][0]["text"].clone()
}

fn only(names: &[String], prefix: &str) -> bool {
    !names.is_empty() && names.iter().all(|n| n.starts_with(prefix))
}

/// Re-point the symbolic link `link` at `target` in one step (a new link renamed over it).
fn repoint(link: &Path, target: &Path) {
    let fresh = link.with_extension("new");
    std::os::unix::fs::symlink(target, &fresh).unwrap();
    std::fs::rename(&fresh, link).unwrap();
}

#[tokio::test]
async fn upstreams_come_and_go_while_the_session_stays() {
    let dir = tempfile::tempdir().unwrap();
    let (watched, unwatched) = (dir.path().join("watched"), dir.path().join("unwatched"));
    std::fs::create_dir(&watched).unwrap();
    std::fs::create_dir(&unwatched).unwrap();
    let link = dir.path().join("gateway.toml");
    std::fs::write(watched.join("gateway.toml"), stdio_reference("ref")).unwrap();
    std::os::unix::fs::symlink(watched.join("gateway.toml"), &link).unwrap();
    let gateway = Gateway::start_at(dir, link.clone(), &[]);
    let url = gateway.url.clone();
    let http = reqwest::Client::new();
    let session = open_session(&http, &url).await;
    let mut stream = EventStream::open(&http, &url, &session, None).await;
    let first = tools(&http, &url, &session).await;
    assert!(
        only(&first, "ref_") && first.contains(&"ref_echo".to_owned()),
        "{first:?}"
    );

    // Added: `ts` appears, the session is told, and both answer on the same session.
    std::fs::write(&link, [stdio_reference("ref"), stdio_typescript("ts")].join("\n")).unwrap();
    assert!(
        told(&mut stream).await,
        "no list_changed after adding; {}",
        gateway.stderr.text()
    );
    let both = tools_until(&http, &url, &session, |n| n.contains(&"ts_echo".to_owned())).await;
    assert!(
        both.contains(&"ts_echo".to_owned()) && both.contains(&"ref_echo".to_owned()),
        "{both:?}"
    );
    assert_eq!(
        both.len(),
        first.len() + 3,
        "ref's tools and ts's echo, add, fail: {both:?}"
    );
    assert_eq!(echo(&http, &url, &session, "ts_echo").await, "same session");
    assert_eq!(echo(&http, &url, &session, "ref_echo").await, "same session");
    assert!(gateway.stderr.wait_for(
        "mcpkit gateway: reloaded: 1 started, 0 stopped, 0 restarted",
        1,
        Duration::from_secs(5)
    ));

    // Removed: `ref` goes.
    std::fs::write(&link, stdio_typescript("ts")).unwrap();
    assert!(told(&mut stream).await, "no list_changed after removing");
    let left = tools_until(&http, &url, &session, |n| only(n, "ts_")).await;
    assert_eq!(left, ["ts_add", "ts_echo", "ts_fail"]);
    assert_eq!(echo(&http, &url, &session, "ts_echo").await, "same session");
    assert!(gateway.stderr.wait_for(
        "mcpkit gateway: reloaded: 0 started, 1 stopped, 0 restarted",
        1,
        Duration::from_secs(5)
    ));

    // A file that does not read: reported, and nothing changes.
    std::fs::write(&link, "[upstreams.ts\ncommand = ").unwrap();
    assert!(
        gateway.stderr.wait_for(
            "mcpkit gateway: not reloaded, the upstreams are left as they were",
            1,
            Duration::from_secs(5)
        ),
        "{}",
        gateway.stderr.text()
    );
    assert_eq!(tools(&http, &url, &session).await, left);
    assert_eq!(echo(&http, &url, &session, "ts_echo").await, "same session");

    // A change the watcher cannot see (the link re-pointed to a file in a folder it does not
    // watch) waits for SIGHUP.
    let hidden = unwatched.join("next.toml");
    std::fs::write(&hidden, [stdio_reference("ref"), stdio_typescript("ts")].join("\n")).unwrap();
    repoint(&link, &hidden);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(tools(&http, &url, &session).await, left, "reloaded without SIGHUP");
    assert_eq!(gateway.stderr.count("mcpkit gateway: reloaded:"), 2);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(gateway.pid()).unwrap()),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    assert!(told(&mut stream).await, "no list_changed after SIGHUP");
    let again = tools_until(&http, &url, &session, |n| n.contains(&"ref_echo".to_owned())).await;
    assert_eq!(again, both);
    assert_eq!(echo(&http, &url, &session, "ref_echo").await, "same session");
    assert!(gateway.stderr.wait_for(
        "mcpkit gateway: reloaded: 1 started, 0 stopped, 0 restarted",
        2,
        Duration::from_secs(5)
    ));
    // The session opened first is still the one in use.
    let reply = post(
        &http,
        &url,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    )
    .await;
    assert_eq!(reply.status(), 200);
}
