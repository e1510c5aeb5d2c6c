//! The `mcpkit` command-line tool's library part: the reference server, shared by the binary
//! and the tests.
#![forbid(unsafe_code)]

pub mod args;
pub mod bench;
pub mod call;
pub mod inspect;
pub mod interact;
pub mod proxy;
pub mod reference;
pub mod target;
pub mod wire;
