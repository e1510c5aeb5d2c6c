//! `mcpkit codegen --check`: exit 0 while the server's tools match the file's fingerprint,
//! exit 1 naming the added, removed and changed tools once they drift (a Python SDK server that
//! drifts when `CODEGEN_SERVER_DRIFT=1`), exit 2 for a file it did not write.

use std::path::Path;

use crate::support::peers;
use std::process::Output;

fn codegen(file: &Path, check: bool, drift: bool) -> Output {
    let py = peers::python();
    let script = peers::repo().join("tests-interop/python/codegen_server.py");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcpkit"));
    cmd.args(["codegen", "--out", file.to_str().unwrap(), "--server-stderr", "quiet"]);
    if check {
        cmd.arg("--check");
    }
    cmd.args(["--", py.to_str().unwrap(), script.to_str().unwrap()]);
    cmd.env("CODEGEN_SERVER_DRIFT", if drift { "1" } else { "0" });
    cmd.output().unwrap()
}

#[test]
fn check_passes_until_the_tools_drift_then_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("client.rs");
    let wrote = codegen(&file, false, false);
    assert!(wrote.status.success(), "{}", String::from_utf8_lossy(&wrote.stderr));
    let before = std::fs::read_to_string(&file).unwrap();

    let same = codegen(&file, true, false);
    let stderr = String::from_utf8_lossy(&same.stderr);
    assert_eq!(same.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("matches the server's 4 tools"), "{stderr}");

    let drifted = codegen(&file, true, true);
    let stderr = String::from_utf8_lossy(&drifted.stderr);
    assert_eq!(drifted.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is out of date: the server's tools changed (added: multiply; changed: add)"),
        "{stderr}"
    );
    assert!(stderr.contains("regenerate it with `mcpkit codegen --out"), "{stderr}");
    // --check never writes.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

#[test]
fn check_refuses_a_file_without_a_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hand_written.rs");
    std::fs::write(&file, "pub fn add(a: i64, b: i64) -> i64 { a + b }\n").unwrap();
    let out = codegen(&file, true, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("has no fingerprint: it was not written by `mcpkit codegen`"),
        "{stderr}"
    );

    let missing = dir.path().join("missing.rs");
    let out = codegen(&missing, true, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
}
