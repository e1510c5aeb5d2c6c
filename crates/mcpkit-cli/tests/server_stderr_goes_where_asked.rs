//! `--server-stderr prefix|inherit|quiet|file:PATH` decides where a stdio server's stderr goes:
//! into mcpkit's own stderr with each line as `server: LINE` (the default, escaped on a
//! terminal, so a server's banners and logs cannot pass for mcpkit's words or act on the
//! terminal), passed through as written (`inherit`, or `show`), discarded (`quiet`, or `hide`),
//! or appended to a file.

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
fn server_stderr_is_prefixed_by_default() {
    let prefixed = format!("server: {MARK}\n");
    let err = ping(&[]);
    assert!(err.contains(&prefixed), "{err}");
    assert_eq!(err.matches(MARK).count(), 1, "{err}");
    assert!(ping(&["--server-stderr", "prefix"]).contains(&prefixed));
}

#[test]
fn server_stderr_inherit_passes_it_through_as_written() {
    for flag in ["inherit", "show"] {
        let err = ping(&["--server-stderr", flag]);
        assert!(err.contains(MARK), "{err}");
        assert!(!err.contains("server: "), "{flag}: {err}");
    }
}

#[test]
fn server_stderr_quiet_discards_it() {
    for flag in ["quiet", "hide"] {
        let err = ping(&["--server-stderr", flag]);
        assert!(!err.contains(MARK), "{flag}: {err}");
    }
}

/// On a terminal, a prefixed line's control characters are shown escaped, like any other
/// server text.
#[cfg(unix)]
#[test]
fn prefixed_lines_are_escaped_on_a_terminal() {
    let server = format!(
        "printf 'banner \\033]0;title\\007 end\\n' >&2; exec '{}' serve",
        env!("CARGO_BIN_EXE_mcpkit")
    );
    let (code, out) = crate::support::terminal::mcpkit_on_a_terminal(&["ping", "--", "sh", "-c", &server]);
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(r"server: banner \x1b]0;title\x07 end"), "{out:?}");
    assert!(!out.contains('\u{1b}'), "{out:?}");
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
    assert!(String::from_utf8_lossy(&out.stderr).contains("prefix, inherit, quiet or file:PATH"));
}
