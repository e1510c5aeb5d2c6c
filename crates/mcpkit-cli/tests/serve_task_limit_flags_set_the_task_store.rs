//! The task store's bounds are `mcpkit serve` flags, on stdio and HTTP alike:
//! `--max-tasks`, `--max-tasks-per-client`, `--max-task-bytes-per-client` set the
//! `TaskLimits` field of the same meaning; without them the library's defaults stand, and each
//! flag's help states that default. The flags are parsed as the command line does.

use clap::{CommandFactory, Parser};
use mcpkit::server::backend::TaskLimits;
use mcpkit_cli::cmd::serve;

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: serve::Args,
}

fn limits(flags: &[&str]) -> TaskLimits {
    Serve::try_parse_from(["serve"].iter().chain(flags))
        .unwrap()
        .args
        .task_limits()
}

#[test]
fn each_flag_sets_its_limit() {
    let l = limits(&[
        "--max-tasks",
        "500",
        "--max-tasks-per-client",
        "7",
        "--max-task-bytes-per-client",
        "65536",
    ]);
    assert_eq!((l.capacity, l.per_client, l.per_client_bytes), (500, 7, 65536));
}

#[test]
fn without_flags_the_defaults_stand_and_the_help_names_them() {
    let d = TaskLimits::default();
    assert_eq!(limits(&[]), d);
    let help = Serve::command().render_help().to_string();
    for (flag, default) in [
        ("--max-tasks ", d.capacity),
        ("--max-tasks-per-client", d.per_client),
        ("--max-task-bytes-per-client", d.per_client_bytes),
    ] {
        let at = help.find(flag).unwrap_or_else(|| panic!("{flag} in the help"));
        let line = &help[at..];
        let text = &line[..line.find("\n  -").unwrap_or(line.len())];
        assert!(text.contains(&format!("[default: {default}]")), "{flag}: {text}");
    }
}
