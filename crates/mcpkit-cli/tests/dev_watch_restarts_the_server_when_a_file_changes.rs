//! `mcpkit dev --watch PATH`: a change under PATH restarts the server and reconnects (the
//! page's state moves to the next connection), and the page keeps working on the new one.

use std::time::{Duration, Instant};

use mcpkit_test_support::process::ScratchDir;
use serde_json::Value;

use crate::support::dev_host::DevHost;

/// Poll the state until `want` holds; panics after 20 s.
async fn until(dev: &DevHost, what: &str, want: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = dev.state().await;
        if want(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "not {what} within 20 s: {s}; stderr: {}",
            dev.stderr()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_file_restarts_the_server() {
    let dir = ScratchDir::new("dev-watch");
    let source = dir.path().join("server.rs");
    std::fs::write(&source, "// first\n").unwrap();
    let watched = dir.path().to_str().unwrap();
    let dev = DevHost::start(&["--watch", watched, "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let first = until(&dev, "connected", |s| s["connected"] == true).await;
    assert_eq!(first["generation"], 1);
    // Nothing changed: no restart.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(dev.state().await["generation"], 1, "{}", dev.stderr());

    std::fs::write(&source, "// second\n").unwrap();
    let second = until(&dev, "reconnected", |s| s["generation"] == 2 && s["connected"] == true).await;
    assert!(
        second["tools"]["items"].as_array().is_some_and(|t| !t.is_empty()),
        "{second}"
    );
    assert!(
        dev.stderr().contains("a watched file changed; restarting the server"),
        "{}",
        dev.stderr()
    );
}
