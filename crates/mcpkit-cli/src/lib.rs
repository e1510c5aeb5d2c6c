//! The `mcpkit` command-line tool's library part: the reference server, shared by the binary
//! and the tests.
#![forbid(unsafe_code)]

pub mod inspect;
pub mod reference;
