//! The integration tests, one module per behaviour, all in one test binary: a binary per file
//! linked ~40 MB each, which cost minutes of linking and gigabytes of disk in all.
// Test code: a panic is a failing test, and test modules need no docs; said once here for
// every module of this binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

mod adapted_messages_validate_against_older_schemas;
mod every_type_validates_against_its_schema_definition;
mod mirrored_integers_outside_the_safe_range_are_refused;
mod serde_follows_the_schema;
mod spec_examples_round_trip_exactly;
