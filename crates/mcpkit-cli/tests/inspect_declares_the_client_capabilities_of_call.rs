//! `mcpkit inspect` declares the same client capabilities as `mcpkit call` (sampling and
//! elicitation), so a server that offers tools only to clients able to answer them shows
//! `inspect` the tools `call` can use.

use assert_cmd::Command;
use serde_json::Value;

/// The `capabilities` of the `initialize` request the command sent, read from `--trace-wire`.
fn declared_capabilities(args: &[&str]) -> Value {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .arg("--trace-wire")
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("-> server") && l.contains("\"method\":\"initialize\""))
        .unwrap_or_else(|| panic!("no initialize in the trace:\n{err}"));
    let json = &line[line.find('{').unwrap()..];
    let msg: Value = serde_json::from_str(json).unwrap();
    msg["params"]["capabilities"].clone()
}

#[test]
fn inspect_declares_sampling_and_elicitation_like_call() {
    let call = declared_capabilities(&["call", "echo", "message=x"]);
    let inspect = declared_capabilities(&["inspect"]);
    assert!(
        call.get("sampling").is_some() && call.get("elicitation").is_some(),
        "{call}"
    );
    assert_eq!(inspect, call);
}
