//! The `mcpkit` command-line tool's library part, shared by the binary and the tests: the
//! subcommands ([`cmd`], one module each), how a command finds and connects to its server
//! ([`target`]), `key=value` arguments ([`args`]), result printing ([`render`]), answering the
//! server's sampling and elicitation requests ([`interact`], with the choices of enum fields in
//! [`choices`]), server text shown on a terminal with its control characters escaped
//! ([`terminal`]), `--trace-wire` ([`trace`]), the MCP hosts' configuration files that `install`
//! edits ([`hosts`]), and the reference server that `mcpkit serve` runs and the tests use
//! ([`reference`](mod@reference)), logs, spans and metrics ([`telemetry`]), and where `--oauth`
//! remembers its logins ([`auth_store`]).
#![forbid(unsafe_code)]

pub mod args;
pub mod auth_store;
pub mod choices;
pub mod cmd;
pub mod hosts;
pub mod interact;
pub mod reference;
pub mod render;
pub mod target;
pub mod telemetry;
pub mod terminal;
pub mod trace;
