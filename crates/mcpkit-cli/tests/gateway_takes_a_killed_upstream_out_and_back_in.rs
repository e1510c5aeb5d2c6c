//! An upstream of `mcpkit gateway` that dies mid-session: a call of its tool fails at once with
//! an error naming it, its tools leave the list (the open downstream session is told
//! `notifications/tools/list_changed`), the other upstream keeps working, and `/readyz` names
//! it; once it runs again it is reconnected and its tools come back. For an HTTP upstream
//! (`mcpkit serve --http`, killed by pid and restarted on its port) and for a stdio child of
//! the gateway (killed by pid, restarted by the gateway).

use std::time::{Duration, Instant};

use mcpkit::client::ServerNotification;
use mcpkit::Client;
use serde_json::json;
use support::gateway::{child_pid, stdio_reference, stdio_typescript, url_upstream, Gateway, ServeUpstream};
use tokio::sync::broadcast;

use crate::support;

/// The downstream session's tool names.
async fn tools(client: &Client) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    names
}

/// Wait (`within` at most) for a `notifications/tools/list_changed`.
async fn list_changed(notes: &mut broadcast::Receiver<ServerNotification>, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, notes.recv()).await {
            Ok(Ok(ServerNotification::ToolListChanged)) => return true,
            Ok(Ok(_)) | Ok(Err(broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(broadcast::error::RecvError::Closed)) | Err(_) => return false,
        }
    }
}

/// Poll the tool list (every 50 ms, `within` at most) until `want` holds; the last list.
async fn tools_until(client: &Client, within: Duration, want: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + within;
    loop {
        let names = tools(client).await;
        if want(&names) || Instant::now() >= deadline {
            return names;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn has_ref(names: &[String]) -> bool {
    names.iter().any(|n| n == "ref_echo")
}

/// The checks once `kill` has killed `ref`, and again once it runs again: started by
/// `revive` (then the checks of its absence run before), or by the gateway itself.
async fn out_and_back_in(gateway: &Gateway, kill: impl FnOnce(), revive: Option<impl FnOnce()>) {
    let client = support::connect_http(&gateway.url).await;
    let mut notes = client.notifications();
    let before = tools(&client).await;
    assert!(has_ref(&before) && before.iter().any(|n| n == "ts_echo"), "{before:?}");
    let (status, body) = gateway.readyz().await;
    assert_eq!((status, body.trim()), (200, "ready: 2 of 2 upstreams connected"));

    kill();
    // A call of its tool fails at once, naming it.
    let began = Instant::now();
    let failed = client.call_tool("ref_echo", json!({"message": "anyone?"})).await;
    let took = began.elapsed();
    let error = match failed {
        Err(e) => e.to_string(),
        Ok(r) => panic!("ref_echo answered after its server died: {r:?}"),
    };
    assert!(took < Duration::from_secs(3), "the failed call took {took:?}");
    assert!(
        error.contains("\"ref\""),
        "the error does not name the upstream: {error}"
    );
    assert!(
        !error.contains("127.0.0.1"),
        "the error shows the upstream's address: {error}"
    );
    // Its tools leave the list, and the session is told.
    assert!(
        list_changed(&mut notes, Duration::from_secs(20)).await,
        "no tools/list_changed after the upstream died; gateway:\n{}",
        gateway.stderr.text()
    );
    // The other upstream keeps working.
    let r = client
        .call_tool("ts_echo", json!({"message": "still here"}))
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("still here"));
    let Some(revive) = revive else {
        // The gateway starts it again by itself (its first backoff is short): it is back.
        return back_in(gateway, &client, &mut notes, &before).await;
    };
    let after = tools_until(&client, Duration::from_secs(5), |n| !has_ref(n)).await;
    assert!(!has_ref(&after), "{after:?}");
    assert!(after.iter().all(|n| n.starts_with("ts_")), "{after:?}");
    // A call now fails at once too, naming it.
    let began = Instant::now();
    let error = client
        .call_tool("ref_echo", json!({"message": "x"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(began.elapsed() < Duration::from_secs(3));
    assert!(
        error.contains("\"ref\""),
        "the error does not name the upstream: {error}"
    );
    // /readyz names it.
    let (status, body) = gateway.readyz_until("1 of 2", Duration::from_secs(5)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("ready: 1 of 2 upstreams connected (ref: "), "{body}");

    revive();
    back_in(gateway, &client, &mut notes, &before).await;
}

/// `ref` is listed again (the session told), callable, and ready.
async fn back_in(
    gateway: &Gateway,
    client: &Client,
    notes: &mut broadcast::Receiver<ServerNotification>,
    before: &[String],
) {
    assert!(
        list_changed(notes, Duration::from_secs(30)).await,
        "no tools/list_changed after the upstream came back; gateway:\n{}",
        gateway.stderr.text()
    );
    let back = tools_until(client, Duration::from_secs(5), has_ref).await;
    assert_eq!(back, before, "the same tools are back");
    let r = client.call_tool("ref_echo", json!({"message": "back"})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("back"));
    let (status, body) = gateway.readyz_until("2 of 2", Duration::from_secs(5)).await;
    assert_eq!((status, body.trim()), (200, "ready: 2 of 2 upstreams connected"));
}

#[tokio::test]
async fn an_http_upstream_killed_and_restarted_on_its_port() {
    let mut upstream = ServeUpstream::start(&[]);
    let config = [url_upstream("ref", &upstream.url), stdio_typescript("ts")].join("\n");
    let gateway = Gateway::start(&config, &[]);
    let upstream = std::sync::Mutex::new(&mut upstream);
    out_and_back_in(
        &gateway,
        || upstream.lock().unwrap().kill(),
        Some(|| upstream.lock().unwrap().restart()),
    )
    .await;
}

#[tokio::test]
async fn a_stdio_upstream_killed_is_started_again() {
    let config = [stdio_reference("ref"), stdio_typescript("ts")].join("\n");
    let gateway = Gateway::start(&config, &[]);
    let first = child_pid(gateway.pid(), "mcpkit serve");
    out_and_back_in(
        &gateway,
        || {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(first).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
        },
        None::<fn()>,
    )
    .await;
    // A new process.
    assert_ne!(child_pid(gateway.pid(), "mcpkit serve"), first);
}
