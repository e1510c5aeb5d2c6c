//! `--server-stderr inherit|quiet|file:PATH` decides where a stdio server's stderr goes:
//! mixed into mcpkit's own stderr (the default, as before), discarded, or appended to a file.

use assert_cmd::Command;

const MARK: &str = "a line the server wrote on its stderr";

/// `mcpkit ping [flags] -- sh -c 'echo MARK >&2; exec mcpkit serve'`; returns mcpkit's stderr.
fn ping(flags: &[&str]) -> String {
    let server = format!("echo '{MARK}' >&2; exec '{}' serve", env!("CARGO_BIN_EXE_mcpkit"));
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .env_remove("RUST_LOG")
        .arg("ping")
        .args(flags)
        .args(["--", "sh", "-c", &server])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn server_stderr_is_inherited_by_default() {
    assert!(ping(&[]).contains(MARK));
    assert!(ping(&["--server-stderr", "inherit"]).contains(MARK));
}

#[test]
fn server_stderr_quiet_discards_it() {
    let err = ping(&["--server-stderr", "quiet"]);
    assert!(!err.contains(MARK), "{err}");
}

#[test]
fn server_stderr_file_appends_it_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let flag = format!("file:{}", log.display());
    let err = ping(&["--server-stderr", &flag]);
    assert!(!err.contains(MARK), "{err}");
    ping(&["--server-stderr", &flag]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches(MARK).count(), 2, "appended, not truncated: {text:?}");
}

#[test]
fn server_stderr_rejects_an_unknown_choice() {
    let out = Command::cargo_bin("mcpkit")
        .unwrap()
        .args(["ping", "--server-stderr", "loud"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inherit, quiet or file:PATH"));
}
