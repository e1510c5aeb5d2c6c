//! The integration tests, one module per behaviour, all in one test binary: a binary per file
//! linked ~40 MB each, which cost minutes of linking and gigabytes of disk in all.
// Test code: a panic is a failing test, and test modules need no docs; said once here for
// every module of this binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod deploy_guide_shows_the_tested_haproxy_config;
mod folders_import_no_folder_that_imports_them_back;
mod memory_backends_pass_the_backend_suite;
mod memory_task_store_passes_the_behaviour_suite;
mod public_api_is_the_snapshot_and_each_item_has_one_path;
mod schema_validator_rejects_invalid_frames;
