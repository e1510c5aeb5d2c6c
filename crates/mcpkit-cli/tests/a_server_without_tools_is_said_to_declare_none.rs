//! A server without the `tools` capability (it answers tools/list with -32601, as such servers
//! do): `mcpkit call` says the server declares no tools instead of passing on "Method not
//! found: tools/list (-32601)", and `mcpkit inspect` says so under Tools (and for the other
//! capabilities it lacks) instead of an empty table. On a pseudo-terminal.
#![cfg(unix)]

use crate::support::handshake_only::{config, text};
use crate::support::terminal::mcpkit_on_a_terminal;

#[test]
fn call_says_the_server_declares_no_tools() {
    let (_dir, config) = config();
    let (code, out) = mcpkit_on_a_terminal(&[
        "call",
        "tag",
        "values=a",
        "--server",
        "bare",
        "--config",
        config.to_str().unwrap(),
    ]);
    let out = text(&out);
    assert_eq!(code, Some(2), "{out}");
    insta::assert_snapshot!(out);
    assert!(!out.contains("-32601") && !out.contains("Method not found"), "{out}");
}

#[test]
fn inspect_says_which_capabilities_the_server_lacks() {
    let (_dir, config) = config();
    let (code, out) = mcpkit_on_a_terminal(&["inspect", "--server", "bare", "--config", config.to_str().unwrap()]);
    let out = text(&out);
    assert_eq!(code, Some(0), "{out}");
    insta::assert_snapshot!(out);
    assert!(
        out.contains("the server declares no tools (no `tools` capability)"),
        "{out}"
    );
}
