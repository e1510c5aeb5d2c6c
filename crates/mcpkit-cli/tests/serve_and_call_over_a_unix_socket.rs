//! `mcpkit serve --http unix:PATH` serves Streamable HTTP on a Unix domain socket (mode 0600)
//! that `mcpkit call --server unix:PATH` (or `http+unix://%2F…/mcp`) reaches in both eras;
//! SIGTERM removes the socket file, and a socket file left by a killed server is replaced.
#![cfg(unix)]

use std::os::unix::fs::{FileTypeExt, PermissionsExt};

use crate::support::{mcpkit as run, UnixServer};

fn fresh_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpkit-cli-uds-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn serve_and_call_over_a_unix_socket() {
    let dir = fresh_dir();
    let path = dir.join("mcp.sock");
    let server = UnixServer::start(&path);
    let meta = std::fs::metadata(&path).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);

    let short = format!("unix:{}", path.display());
    let long = format!("http+unix://{}/mcp", path.display().to_string().replace('/', "%2F"));
    for (url, era) in [(&short, "handshake"), (&short, "2026-07-28"), (&long, "handshake")] {
        let (code, out, err) = run(&[
            "call",
            "echo",
            "message=over a socket",
            "--protocol",
            era,
            "--server",
            url,
        ]);
        assert_eq!(code, 0, "{url} {era}: {err}");
        assert!(out.contains("over a socket"), "{url} {era}: {out}");
    }

    // Killed: the socket file stays behind, and the next server replaces it.
    drop(server);
    assert!(std::fs::symlink_metadata(&path).unwrap().file_type().is_socket());
    let (code, _, err) = run(&["call", "echo", "message=x", "--server", &short, "--timeout", "5s"]);
    assert_ne!(code, 0, "a stale socket answered: {err}");
    let server = UnixServer::start(&path);
    let (code, out, err) = run(&["call", "echo", "message=again", "--server", &short]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("again"), "{out}");

    // SIGTERM: a clean exit, and no socket file left.
    assert_eq!(server.terminate(), Some(0));
    assert!(!path.exists(), "the socket file outlived the server");
    std::fs::remove_dir_all(&dir).unwrap();
}
