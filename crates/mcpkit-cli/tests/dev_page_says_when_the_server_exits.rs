//! When the server `mcpkit dev` runs exits on its own, the page is told at once (a
//! `disconnected` event, and the state says why), not at the next call.

use std::process::Command;

use crate::support::dev_host::DevHost;

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_exits_is_shown_as_gone() {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let mut events = dev.events().await;
    events.until("connected", |e| e["kind"] == "connected").await;
    let servers = dev.children();
    assert_eq!(servers.len(), 1, "one stdio server: {servers:?}");
    // The server this test's mcpkit dev started, by pid.
    let killed = Command::new("kill")
        .args(["-KILL", &servers[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let gone = events.until("disconnected", |e| e["kind"] == "disconnected").await;
    assert!(
        gone["reason"]
            .as_str()
            .unwrap()
            .contains("the server closed the connection"),
        "{gone}"
    );
    let state = dev.state().await;
    assert_eq!(state["connected"], false, "{state}");
    assert!(
        state["error"].as_str().unwrap().contains("closed the connection"),
        "{state}"
    );
}
