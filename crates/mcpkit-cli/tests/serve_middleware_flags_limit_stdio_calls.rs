//! `mcpkit serve`'s middleware flags on stdio (a real child process), in both eras: over its
//! `--rate-limit` a call gets the JSON-RPC error -32029 alone (no HTTP to carry a status) and
//! the connection goes on serving; `--tool-timeout NAME=DURATION` ends that tool with -32001;
//! `--max-response-bytes` turns an oversized result into a tool error.

use mcpkit::client::ConnectMode;
use mcpkit::transport::child::ChildTransport;
use mcpkit::types::{ErrorCode, ProtocolVersion};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

async fn serve(mode: ConnectMode, flags: &[&str]) -> mcpkit::Client {
    let mut args = vec!["serve"];
    args.extend_from_slice(flags);
    let transport = ChildTransport::spawn(BIN, args).expect("spawn mcpkit serve");
    mcpkit_test_support::within(
        "a stdio connection",
        mcpkit::Client::builder().mode(mode).connect(transport),
    )
    .await
    .unwrap()
}

const MODES: [ConnectMode; 2] = [
    ConnectMode::Handshake,
    ConnectMode::Pinned(ProtocolVersion::V2026_07_28),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_over_the_rate_gets_the_json_rpc_error_and_the_connection_serves_on() {
    for mode in MODES {
        let client = serve(mode, &["--rate-limit", "tool:echo=2/m"]).await;
        for _ in 0..2 {
            client.call_tool("echo", json!({ "message": "hi" })).await.unwrap();
        }
        let e = client.call_tool("echo", json!({ "message": "hi" })).await.unwrap_err();
        let rpc = e.rpc().expect("a JSON-RPC error");
        assert_eq!(rpc.code, ErrorCode::RATE_LIMITED, "{mode:?}: {rpc:?}");
        assert_eq!(rpc.data.as_ref().unwrap()["limit"], json!("tool"));
        // Other tools, and pings, are served.
        client.call_tool("add", json!({ "a": 1, "b": 2 })).await.unwrap();
        client.ping().await.unwrap();
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_over_its_timeout_and_a_result_over_the_size_limit_are_refused() {
    for mode in MODES {
        let client = serve(
            mode,
            &[
                "--tool-timeout",
                "test_tool_with_progress=20ms",
                "--max-response-bytes",
                "400",
            ],
        )
        .await;
        let e = client
            .call_tool("test_tool_with_progress", json!({}))
            .await
            .unwrap_err();
        let rpc = e.rpc().expect("a JSON-RPC error");
        assert_eq!(rpc.code, ErrorCode::REQUEST_TIMEOUT, "{mode:?}: {rpc:?}");
        assert_eq!(
            rpc.message,
            "Tool test_tool_with_progress timed out after 20ms; it was cancelled"
        );
        let r = client
            .call_tool("echo", json!({ "message": "x".repeat(500) }))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true), "{mode:?}");
        let ok = client.call_tool("echo", json!({ "message": "short" })).await.unwrap();
        assert_ne!(ok.is_error, Some(true));
        client.close().await.unwrap();
    }
}
