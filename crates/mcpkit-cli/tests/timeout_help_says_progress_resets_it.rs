//! `--help` says that `--timeout` restarts when the server reports progress on a call.

use assert_cmd::Command;

#[test]
fn timeout_help_says_progress_restarts_the_timer() {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .args(["call", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let one_line = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        one_line.contains("restarts whenever the server reports progress"),
        "{help}"
    );
}
