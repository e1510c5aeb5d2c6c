//! The reference server that `mcpkit serve` runs: exactly the fixtures the official MCP
//! conformance suite's server leg expects for 2025-11-25 (tools, resources, a resource
//! template, prompts and completions), plus two small extras for our own tests (`echo`, `add`).
//!
//! The fixtures: [`tools`] (2025-11-25), `input_rounds` (the 2026-07-28 input rounds, which
//! serve handshake-era sessions too), `catalog` (resources, the template and prompts), `skills`
//! and `tasks` (the extensions' fixtures), `apps` (an MCP App: a counter and its view).
//!
//! Every string a client may compare is taken verbatim from the conformance suite's reference
//! "everything" server.

pub mod apps;
mod catalog;
mod input_rounds;
pub mod skills;
mod tasks;
mod tools;

use catalog::*;
use input_rounds::*;
use tools::*;

use std::time::Duration;

use mcpkit::server::CacheHint;
use mcpkit::types::schema::{CacheScope, JsonObject};
use mcpkit::Server;
use serde_json::Value;

/// The reference server's name in `serverInfo`.
pub const SERVER_NAME: &str = "mcpkit-reference";

/// The instructions sent at initialization.
pub const INSTRUCTIONS: &str = "mcpkit reference server: the MCP conformance suite's fixtures \
(tools, resources, prompts, completions, logging, progress, sampling and elicitation) plus echo and add.";

/// A 1x1 red PNG (70 bytes), base64: the image of `test_image_content`, `test://static-binary`, …
pub const TEST_IMAGE_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A valid 52-byte WAV (PCM, mono, 8 kHz, 16-bit, 4 samples; consistent RIFF and data sizes),
/// base64: the audio of `test_audio_content`.
pub const TEST_AUDIO_BASE64: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAEAfAADA4A==";

/// The text of `test_simple_text`.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// The text of the `isError` result of `test_error_handling`.
pub const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

/// The text of `test_tool_with_logging`'s result.
pub const LOGGING_RESULT_TEXT: &str = "Tool with logging executed successfully";

/// The three `info` log messages `test_tool_with_logging` sends, in order.
pub const LOG_MESSAGES: [&str; 3] = [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
];

/// The text of `test_reconnection`'s result.
pub const RECONNECTION_TEXT: &str = "Reconnection test completed successfully. If you received this, \
the client properly reconnected after stream closure.";

/// The text of `test://static-text`.
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// The text of `test://watched-resource`.
pub const WATCHED_TEXT: &str = "Watched resource content";

/// The `logger` of the log messages the fixtures send.
const LOGGER: &str = SERVER_NAME;

/// Pause between the steps of the logging and progress fixtures.
const STEP: Duration = Duration::from_millis(50);

/// The reference server: every fixture of the conformance suite's server leg.
pub fn server() -> Server {
    server_for(
        mcpkit::telemetry::Telemetry::off(),
        None,
        mcpkit::server::ClientLimits::default(),
        &[],
    )
}

/// [`server`], recording its metrics with `telemetry`, keeping its tasks in `tasks` (the store
/// instances share, or one with the operator's limits) instead of a default one, with `limits`
/// on what each client may keep on its session, and `layers` of middleware around its methods.
pub fn server_for(
    telemetry: mcpkit::telemetry::Telemetry,
    tasks: Option<std::sync::Arc<dyn mcpkit::server::backend::TaskStore>>,
    limits: mcpkit::server::ClientLimits,
    layers: &[std::sync::Arc<dyn mcpkit::server::middleware::Middleware>],
) -> Server {
    let builder = layers
        .iter()
        .fold(Server::builder(), |b, layer| b.middleware(layer.clone()));
    let builder = builder
        .telemetry(telemetry)
        .client_limits(limits)
        .name(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        // Extras for our own tests and the CLI.
        .tool(echo())
        .tool(add())
        // Conformance fixtures.
        .tool(test_simple_text())
        .tool(test_image_content())
        .tool(test_audio_content())
        .tool(test_embedded_resource())
        .tool(test_multiple_content_types())
        .tool(test_tool_with_logging())
        .tool(test_tool_with_progress())
        .tool(test_error_handling())
        .tool(test_sampling())
        .tool(test_elicitation())
        .tool(test_elicitation_sep1034_defaults())
        .tool(test_elicitation_sep1330_enums())
        .tool(test_reconnection())
        .tool(json_schema_2020_12_tool())
        // Stateless-era (2026-07-28) fixtures; the same handlers serve handshake-era sessions.
        .tool(test_missing_capability())
        .tool(test_input_required_result_elicitation())
        .tool(test_input_required_result_sampling())
        .tool(test_input_required_result_list_roots())
        .tool(test_input_required_result_request_state())
        .tool(test_input_required_result_multiple_inputs())
        .tool(test_input_required_result_multi_round())
        .tool(test_input_required_result_tampered_state())
        .tool(test_input_required_result_capabilities())
        .tool(test_streaming_elicitation())
        .tool(test_logging_tool())
        .tool(test_trigger_tool_change())
        .tool(test_trigger_prompt_change())
        .tool(test_header_param())
        .tool(test_dynamic_tool())
        .list_cache_hint(CacheHint::new(Duration::from_secs(60), CacheScope::Public))
        .resource(static_text())
        .resource(static_binary())
        .resource(watched_resource())
        .prompt(test_simple_prompt())
        .prompt(test_prompt_with_arguments())
        .prompt(test_prompt_with_embedded_resource())
        .prompt(test_prompt_with_image())
        .prompt(test_input_required_result_prompt())
        .prompt(test_dynamic_prompt());
    let builder = match template() {
        Ok(t) => builder.resource_template(t),
        Err(e) => {
            // The template is a literal; this only happens if the URI template parser regresses.
            tracing::error!("reference server: resource template does not parse: {e}");
            builder
        }
    };
    // The Skills extension (SEP-2640), with the fixtures of its conformance scenarios.
    let builder = match skills::skills() {
        Ok(skills) => builder.extension(skills),
        Err(e) => {
            // The skills are literals; this only happens if their checks regress.
            tracing::error!("reference server: a reference skill is refused: {e}");
            builder
        }
    };
    apps::with_apps(tasks::with_tasks(builder, tasks)).build()
}

/// A `serde_json::Value` known to be an object, as a [`JsonObject`].
fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}
