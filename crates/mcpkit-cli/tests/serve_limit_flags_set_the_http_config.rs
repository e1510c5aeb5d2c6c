//! Every session and stream limit of the HTTP endpoint is a `mcpkit serve` flag setting the
//! `HttpConfig` field of the same name: `--max-sessions`, `--max-sessions-per-client`,
//! `--session-idle-timeout`, `--max-body-bytes`, `--streams-per-session`, `--event-log-length`,
//! `--stream-buffer`. What one client may keep on its session is a flag per `ClientLimits`
//! field, set on the server, on stdio as over HTTP: `--max-subscriptions`,
//! `--max-subscription-uri-bytes`, `--max-client-declaration-bytes`. Without them the
//! library's defaults stand, and each flag's help states that default. The flags are parsed as
//! the command line does.

use std::time::Duration;

use clap::{CommandFactory, Parser};
use mcpkit::server::http::HttpConfig;
use mcpkit::server::ClientLimits;
use mcpkit_cli::cmd::serve;

#[derive(Parser)]
struct Serve {
    #[command(flatten)]
    args: serve::Args,
}

fn config(flags: &[&str]) -> HttpConfig {
    let cli = Serve::try_parse_from(["serve", "--http", "127.0.0.1:0"].iter().chain(flags)).unwrap();
    cli.args.http_config()
}

#[test]
fn each_flag_sets_its_field() {
    let c = config(&[
        "--max-sessions",
        "50",
        "--max-sessions-per-client",
        "5",
        "--session-idle-timeout",
        "90s",
        "--max-body-bytes",
        "1024",
        "--streams-per-session",
        "8",
        "--event-log-length",
        "16",
        "--stream-buffer",
        "32",
    ]);
    assert_eq!(c.max_sessions, 50);
    assert_eq!(c.max_sessions_per_client, 5);
    assert_eq!(c.session_idle_timeout, Duration::from_secs(90));
    assert_eq!(c.max_body_bytes, 1024);
    assert_eq!(c.streams_per_session, 8);
    assert_eq!(c.event_log_length, 16);
    assert_eq!(c.stream_buffer, 32);
}

#[test]
fn without_flags_the_defaults_stand_and_the_help_names_them() {
    let c = config(&[]);
    let d = HttpConfig::default();
    let limits = [
        ("--max-sessions", c.max_sessions, d.max_sessions),
        (
            "--max-sessions-per-client",
            c.max_sessions_per_client,
            d.max_sessions_per_client,
        ),
        ("--max-body-bytes", c.max_body_bytes, d.max_body_bytes),
        ("--streams-per-session", c.streams_per_session, d.streams_per_session),
        ("--event-log-length", c.event_log_length, d.event_log_length),
        ("--stream-buffer", c.stream_buffer, d.stream_buffer),
    ];
    let help = Serve::command().render_long_help().to_string();
    for (flag, got, default) in limits {
        assert_eq!(got, default, "{flag}");
        let text = help
            .split(&format!("{flag} <"))
            .nth(1)
            .unwrap_or_else(|| panic!("{flag} is not in the help:\n{help}"));
        let text = text.split("\n      --").next().unwrap();
        assert!(text.contains(&format!("[default: {default}]")), "{flag}: {text}");
    }
    assert_eq!(c.session_idle_timeout, d.session_idle_timeout);
    assert_eq!(d.session_idle_timeout, Duration::from_secs(30 * 60));
}

#[test]
fn client_limit_flags_set_the_servers_client_limits_on_stdio_and_http() {
    let flags = [
        "--max-subscriptions",
        "7",
        "--max-subscription-uri-bytes",
        "512",
        "--max-client-declaration-bytes",
        "2048",
    ];
    for transport in [&["serve"][..], &["serve", "--http", "127.0.0.1:0"][..]] {
        let cli = Serve::try_parse_from(transport.iter().chain(&flags)).unwrap();
        let l = cli.args.client_limits();
        assert_eq!(l.max_subscriptions, 7);
        assert_eq!(l.max_subscription_uri_bytes, 512);
        assert_eq!(l.max_client_declaration_bytes, 2048);
    }
    let cli = Serve::try_parse_from(["serve"]).unwrap();
    let (l, d) = (cli.args.client_limits(), ClientLimits::default());
    assert_eq!(l, d);
    let help = Serve::command().render_long_help().to_string();
    for (flag, default) in [
        ("--max-subscriptions", d.max_subscriptions),
        ("--max-subscription-uri-bytes", d.max_subscription_uri_bytes),
        ("--max-client-declaration-bytes", d.max_client_declaration_bytes),
    ] {
        let text = help
            .split(&format!("{flag} <"))
            .nth(1)
            .unwrap_or_else(|| panic!("{flag} is not in the help:\n{help}"));
        let text = text.split("\n      --").next().unwrap();
        assert!(text.contains(&format!("[default: {default}]")), "{flag}: {text}");
    }
}

#[test]
fn the_limits_need_http() {
    assert!(Serve::try_parse_from(["serve", "--max-sessions", "5"]).is_err());
}
