//! The macros' errors: each file in tests/ui/ is a wrong usage, and its .stderr is what the
//! compiler says about it (a span on the user's code and a sentence saying what to write).
//! Refresh the snapshots with `TRYBUILD=overwrite cargo test -p mcpkit-macros --test ui`, then
//! read every changed .stderr.
#![allow(missing_docs)]

#[test]
fn wrong_usages_are_explained() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
