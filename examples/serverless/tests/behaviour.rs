//! The example's tests, one module per behaviour, in one test binary.
// Test code: a panic is a failing test, and test modules need no docs.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod the_function_answers_both_eras_through_the_runtime_api;
