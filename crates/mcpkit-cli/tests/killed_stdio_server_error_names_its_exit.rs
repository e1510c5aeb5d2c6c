//! When a stdio server dies (`kill -9`, a crash, a failing exit), mcpkit's error says the
//! server exited and with which status, not only that "the connection is closed".

use assert_cmd::Command;

/// `mcpkit ping -- sh -c SCRIPT`: exit code and stderr.
fn ping_with(script: &str) -> (Option<i32>, String) {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .args(["ping", "--timeout", "20s", "--", "sh", "-c", script])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_stdio_server_killed_with_sigkill_is_reported_as_exited_by_that_signal() {
    // The server reads the client's first message, then is killed.
    let (code, err) = ping_with("read -r line; kill -9 $$");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the server process exited"), "{err}");
    assert!(err.contains("signal: 9"), "{err}");
}

#[test]
fn a_stdio_server_that_exits_with_a_failure_code_is_reported_with_it() {
    let (code, err) = ping_with("read -r line; exit 3");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the server process exited (exit status: 3)"), "{err}");
}
