//! `mcpkit inspect` with stdout piped (no terminal, no `$COLUMNS`) prints every description
//! whole (and every other cell): it used to fit the tables to 120 columns, which left about ten characters of each
//! description beside long tool names.

use assert_cmd::Command;

#[test]
fn inspect_keeps_descriptions_whole_when_stdout_is_not_a_terminal() {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .env_remove("COLUMNS")
        .arg("inspect")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for whole in [
        "Adds two numbers and returns their sum as structured output",
        "Tests server-initiated sampling (LLM completion request)",
        "A resource that can be subscribed to for update notifications",
    ] {
        assert!(text.contains(whole), "{whole:?} cut in:\n{text}");
    }
    assert!(!text.contains('…'), "nothing is cut when piped:\n{text}");
}

#[test]
fn inspect_still_fits_an_explicit_columns_width() {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .env("COLUMNS", "100")
        .arg("inspect")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains('…'), "COLUMNS=100 still cuts long rows:\n{text}");
}
