//! The integration tests, one module per behaviour, all in one test binary: a binary per file
//! linked ~40 MB each, which cost minutes of linking and gigabytes of disk in all.
// Test code: a panic is a failing test, and test modules need no docs; said once here for
// every module of this binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

mod a_session_of_another_deployment_is_unknown;
mod handshake_requests_cost_at_most_two_redis_commands;
mod http_a_stream_resumed_on_another_instance_replays_from_redis;
mod http_a_switched_tool_is_listed_by_every_instance;
mod http_backend_unavailable_503_keeps_the_request_id;
mod http_instances_on_one_redis_act_as_one_server;
mod http_per_client_session_cap_holds_across_instances;
mod key_ring_rotation_reaches_running_instances;
mod redis_backends_pass_the_backend_suite;
mod redis_outage_is_an_error_then_the_backends_recover;
mod redis_task_store_passes_the_behaviour_suite;
