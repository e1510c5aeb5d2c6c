//! `mcpkit call --task` runs a tool of `mcpkit serve` as a task (Tasks extension, SEP-2663) and
//! prints its result: over stdio and over HTTP, in the handshake era and on the stateless wire.
//! A task-only tool called without `--task` runs as a task by itself (the client's `call_tool`).

use support::{mcpkit as run, HttpServer};

use crate::support;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

fn check(what: &str, (code, out, err): (i32, String, String), want: &str) {
    assert_eq!(code, 0, "{what}: exit {code}\nstdout: {out}\nstderr: {err}");
    assert!(
        out.contains(want),
        "{what}: stdout {out:?} lacks {want:?} (stderr: {err})"
    );
}

#[test]
fn call_task_runs_over_stdio_in_both_eras() {
    for era in ["handshake", "2026-07-28"] {
        let r = run(&[
            "call",
            "--task",
            "slow_compute",
            "seconds=0.3",
            "label=stdio",
            "--protocol",
            era,
            "--",
            BIN,
            "serve",
        ]);
        assert!(
            r.2.contains("mcpkit call: task "),
            "{era}: the task id is shown: {}",
            r.2
        );
        check(&format!("stdio {era}"), r, "Computed stdio in 0.3s");
        let r = run(&["call", "test_tool_with_task", "--protocol", era, "--", BIN, "serve"]);
        // No terminal to ask the user on: the elicitation is declined, and the task still ends.
        assert_ne!(
            r.0, 2,
            "stdio {era}: a task-only tool runs as a task by itself: {}",
            r.2
        );
    }
}

#[test]
fn call_task_runs_over_http_in_both_eras() {
    let server = HttpServer::start();
    let url = format!("{}/mcp", server.base);
    for era in ["handshake", "2026-07-28"] {
        let r = run(&[
            "call",
            "--task",
            "slow_compute",
            "seconds=0.3",
            "label=http",
            "--protocol",
            era,
            "--server",
            &url,
        ]);
        check(&format!("http {era}"), r, "Computed http in 0.3s");
        let (code, out, err) = run(&["call", "failing_job", "--protocol", era, "--server", &url]);
        assert_eq!(
            code, 1,
            "http {era}: the task-only tool ran as a task and reported its tool error: {err}"
        );
        assert!(out.contains("the job failed"), "{out}");
    }
}
