//! Interop at protocol revision 2026-07-28 with the official Python SDK (PyPI `mcp`, pinned in
//! tests-interop/python): its high-level `Client`, pinned to 2026-07-28 and in `auto` mode
//! (discover, then adopt the newest mutual version), runs the full check list of
//! tests-interop/python/stateless_checks.py against `mcpkit serve` over stdio and over Streamable
//! HTTP — including sampling, elicitation and roots through `input_required` rounds and
//! `subscriptions/listen`.
//!
//! `scripts/test.sh` installs the SDK and sets `MCPKIT_INTEROP_PYTHON`; without it these tests
//! fail (they never skip silently).

use support::peers::{python, python_script};
use support::HttpServer;

use crate::support;

fn run_checks(args: &[&str]) {
    support::run_client_checks(
        "Python (2026-07-28)",
        &python(),
        std::path::Path::new(&python_script("stateless_checks.py")),
        args,
    );
}

fn over_stdio(mode: &str) {
    run_checks(&[mode, "stdio", "--", env!("CARGO_BIN_EXE_mcpkit"), "serve"]);
}

fn over_http(mode: &str) {
    let server = HttpServer::start();
    run_checks(&[mode, "http", &format!("{}/mcp", server.base)]);
}

#[test]
fn python_sdk_client_pinned_to_2026_07_28_over_stdio() {
    over_stdio("2026-07-28");
}

#[test]
fn python_sdk_client_in_auto_mode_over_stdio() {
    over_stdio("auto");
}

#[test]
fn python_sdk_client_pinned_to_2026_07_28_over_streamable_http() {
    over_http("2026-07-28");
}

#[test]
fn python_sdk_client_in_auto_mode_over_streamable_http() {
    over_http("auto");
}
