//! The page's protocol switch (`POST /api/reconnect`): `mcpkit dev` reconnects to the same
//! server in the era asked for, and tools and the server's questions work in it: against the
//! dual-era reference server, `2026-07-28` speaks the stateless era (its elicitation arrives as
//! an input round, still answered in the page), and `handshake` goes back.

use serde_json::json;

use crate::support::dev_host::DevHost;

#[tokio::test(flavor = "multi_thread")]
async fn the_era_switch_reconnects_in_the_era_asked_for() {
    let dev = DevHost::start(&["--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
    let mut events = dev.events().await;
    events.until("connected", |e| e["kind"] == "connected").await;
    let state = dev.state().await;
    assert_eq!(state["mode"], "handshake");
    assert_eq!(state["stateless"], false);
    assert!(
        state["protocolVersion"].as_str().unwrap().starts_with("2025-"),
        "{state}"
    );

    let reply = dev.post("/api/reconnect", &json!({"protocol": "2026-07-28"})).await;
    assert_eq!(reply["connected"], true, "{reply}; stderr: {}", dev.stderr());
    let state = dev.state().await;
    assert_eq!(
        (
            &state["mode"],
            &state["stateless"],
            &state["protocolVersion"],
            &state["generation"]
        ),
        (&json!("2026-07-28"), &json!(true), &json!("2026-07-28"), &json!(2)),
        "{state}"
    );
    let added = dev
        .post(
            "/api/call",
            &json!({"call": 1, "tool": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert_eq!(added["result"]["structuredContent"], json!({"sum": 5.0}), "{added}");

    // The server's question, in the stateless era, is still the page's dialog.
    let call = dev.spawn_call(json!({"call": 2, "tool": "test_elicitation", "arguments": {"message": "name?"}}));
    let ask = events
        .until("ask", |e| e["kind"] == "ask" && e["params"]["message"] == "name?")
        .await;
    let answer = json!({"action": "accept", "content": {"username": "bo", "email": "bo@example.com"}});
    let taken = dev
        .post("/api/answer", &json!({"id": ask["id"], "answer": answer}))
        .await;
    assert_eq!(taken, json!({"taken": true}));
    let result = call.await.unwrap();
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.starts_with("User response: action=accept"), "{result}");
    assert!(text.contains("bo@example.com"), "{result}");

    let reply = dev.post("/api/reconnect", &json!({"protocol": "handshake"})).await;
    assert_eq!(reply["connected"], true, "{reply}");
    let state = dev.state().await;
    assert_eq!((&state["stateless"], &state["generation"]), (&json!(false), &json!(3)));

    let bad = dev.post("/api/reconnect", &json!({"protocol": "2025-06-18"})).await;
    assert!(
        bad["error"].as_str().unwrap().contains("handshake-era revision"),
        "{bad}"
    );
}
