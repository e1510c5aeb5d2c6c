//! `mcpkit call` on a tool whose text content is only the serialization of its structured
//! content prints that JSON once (it used to print the text, then the same JSON again under
//! "structured content:"); `--json` still prints the raw result with both.

use assert_cmd::Command;

fn call(args: &[&str]) -> String {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .arg("call")
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn call_prints_structured_content_once_when_the_text_only_serializes_it() {
    let out = call(&["add", "a=2", "b=3.5"]);
    assert_eq!(out, "{\n  \"sum\": 5.5\n}\n");
}

#[test]
fn call_json_keeps_both_the_text_and_the_structured_content() {
    let raw: serde_json::Value = serde_json::from_str(&call(&["add", "a=2", "b=3.5", "--json"])).unwrap();
    assert_eq!(raw["structuredContent"]["sum"], 5.5);
    assert_eq!(raw["content"][0]["type"], "text");
}
