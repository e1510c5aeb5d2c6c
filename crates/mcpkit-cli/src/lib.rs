//! The `mcpkit` command-line tool's library part: the reference server, shared by the binary
//! and the tests.
#![forbid(unsafe_code)]

pub mod bench;
pub mod inspect;
pub mod reference;
pub mod target;
pub mod wire;
