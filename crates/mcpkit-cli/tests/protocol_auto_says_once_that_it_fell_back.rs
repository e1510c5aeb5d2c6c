//! `--protocol auto` against a handshake-era server that refuses the `server/discover` probe
//! (as the Python SDK v1 does, with a page of validation errors on its stderr): mcpkit says in
//! one line that it fell back to 2025-11-25, and what the server wrote meanwhile is not shown —
//! `-v` shows it, each line as `server: …`. On a pseudo-terminal, as a user sees it.
#![cfg(unix)]

use crate::support::handshake_only::{config, text};
use crate::support::terminal::mcpkit_on_a_terminal;

const FELL_BACK: &str = "fell back to 2025-11-25";

#[test]
fn the_fallback_is_said_once_and_the_servers_complaint_is_hidden() {
    let (_dir, config) = config();
    let config = config.to_str().unwrap();
    let (code, out) = mcpkit_on_a_terminal(&["inspect", "--protocol", "auto", "--server", "notes", "--config", config]);
    let out = text(&out);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out.matches(FELL_BACK).count(), 1, "{out}");
    assert!(!out.contains("validation error"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn with_v_the_servers_complaint_is_shown_prefixed_and_escaped() {
    let (_dir, config) = config();
    let config = config.to_str().unwrap();
    let (code, out) = mcpkit_on_a_terminal(&[
        "inspect",
        "-v",
        "--protocol",
        "auto",
        "--server",
        "notes",
        "--config",
        config,
    ]);
    let out = text(&out);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out.matches(FELL_BACK).count(), 1, "{out}");
    assert!(
        !out.contains("lines it wrote on its stderr meanwhile are hidden"),
        "{out}"
    );
    assert!(
        out.contains("server: Failed to validate request: 1 validation error for ClientRequest\n"),
        "{out}"
    );
    assert_eq!(
        out.matches("server:   line ").count(),
        20,
        "every line, each prefixed: {out}"
    );
    // The banner's window-title sequence is shown, not obeyed.
    assert!(
        out.contains(r"server: Starting MCP server \x1b]0;title\x07notes with transport stdio"),
        "{out}"
    );
    assert!(
        !out.contains('\u{1b}'),
        "no escape byte from the server reaches the terminal: {out:?}"
    );
}

#[test]
fn a_server_that_takes_the_probe_gets_no_note() {
    // The built-in server speaks 2026-07-28.
    let (code, out) = mcpkit_on_a_terminal(&["ping", "--protocol", "auto"]);
    let out = text(&out);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("fell back"), "{out}");
}
