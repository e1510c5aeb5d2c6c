//! The reference server that `mcpkit serve` runs: exactly the fixtures the official MCP
//! conformance suite's server leg expects for 2025-11-25 (tools, resources, a resource
//! template, prompts and completions), plus two small extras for our own tests (`echo`, `add`).
//!
//! Every string a client may compare is taken verbatim from the conformance suite's reference
//! "everything" server.

use std::time::Duration;

use mcpkit::server::{
    from_list, Args, CacheHint, Json, PromptDef, RawArgs, RequestContext, ResourceDef, ResourceTemplateDef, ToolDef,
    Uri,
};
use mcpkit::types::method::ListRoots;
use mcpkit::types::schema::{
    CacheScope, CallToolResult, ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ElicitationSchema, GetPromptResult, InputRequest, InputResponse, JsonObject, ListRootsResult, LoggingLevel,
    ProgressToken, PromptMessage, ResourceContents, Role, SamplingMessage,
};
use mcpkit::types::ErrorObject;
use mcpkit::Server;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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
    server_with(mcpkit::telemetry::Telemetry::off())
}

/// [`server`], recording its metrics with `telemetry`.
pub fn server_with(telemetry: mcpkit::telemetry::Telemetry) -> Server {
    server_with_tasks(telemetry, None)
}

/// [`server_with`], keeping its tasks in `tasks` (the store instances share) instead of its
/// own memory.
pub fn server_with_tasks(
    telemetry: mcpkit::telemetry::Telemetry,
    tasks: Option<std::sync::Arc<dyn mcpkit::server::backend::TaskStore>>,
) -> Server {
    let builder = Server::builder()
        .telemetry(telemetry)
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
    let builder = match crate::reference_skills::skills() {
        Ok(skills) => builder.extension(skills),
        Err(e) => {
            // The skills are literals; this only happens if their checks regress.
            tracing::error!("reference server: a reference skill is refused: {e}");
            builder
        }
    };
    crate::reference_tasks::with_tasks(builder, tasks).build()
}

/// A `serde_json::Value` known to be an object, as a [`JsonObject`].
fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

// Arguments of `echo` (a struct doc comment would become the schema's `description`).
#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// The message to echo back.
    message: String,
}

/// `echo {message}` → one text block with the message.
fn echo() -> ToolDef {
    ToolDef::new("echo", |Args(a): Args<EchoArgs>| async move { a.message }).description("Echoes the message back")
}

// Arguments of `add`.
#[derive(Debug, Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

// Output of `add`.
#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    /// The sum of a and b.
    sum: f64,
}

/// `add {a, b}` → structured output `{"sum": a + b}` (with an `outputSchema`).
fn add() -> ToolDef {
    ToolDef::new(
        "add",
        |Args(a): Args<AddArgs>| async move { Json(Sum { sum: a.a + a.b }) },
    )
    .description("Adds two numbers and returns their sum as structured output")
}

/// `test_simple_text` → one text block.
fn test_simple_text() -> ToolDef {
    ToolDef::new("test_simple_text", || async { SIMPLE_TEXT }).description("Tests simple text content response")
}

/// `test_image_content` → one image block (the 1x1 PNG).
fn test_image_content() -> ToolDef {
    ToolDef::new("test_image_content", || async {
        ContentBlock::image(TEST_IMAGE_BASE64, "image/png")
    })
    .description("Tests image content response")
}

/// `test_audio_content` → one audio block (a tiny WAV, `audio/wav`).
fn test_audio_content() -> ToolDef {
    ToolDef::new("test_audio_content", || async {
        ContentBlock::audio(TEST_AUDIO_BASE64, "audio/wav")
    })
    .description("Tests audio content response")
}

/// `test_embedded_resource` → one embedded text resource `test://embedded-resource`.
fn test_embedded_resource() -> ToolDef {
    ToolDef::new("test_embedded_resource", || async {
        ContentBlock::resource(ResourceContents::text(
            "test://embedded-resource",
            Some("text/plain"),
            "This is an embedded resource content.",
        ))
    })
    .description("Tests embedded resource content response")
}

/// `test_multiple_content_types` → text, image and embedded JSON resource blocks.
fn test_multiple_content_types() -> ToolDef {
    ToolDef::new("test_multiple_content_types", || async {
        vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(TEST_IMAGE_BASE64, "image/png"),
            ContentBlock::resource(ResourceContents::text(
                "test://mixed-content-resource",
                Some("application/json"),
                json!({"test": "data", "value": 123}).to_string(),
            )),
        ]
    })
    .description("Tests response with multiple content types (text, image, resource)")
}

/// `test_tool_with_logging` → three `info` log messages 50 ms apart, then a text result.
fn test_tool_with_logging() -> ToolDef {
    ToolDef::new("test_tool_with_logging", |cx: RequestContext| async move {
        for (i, message) in LOG_MESSAGES.into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(STEP).await;
            }
            // A log message the client cannot receive is not the tool's failure.
            let _ = cx.log(LoggingLevel::Info, Some(LOGGER), message);
        }
        LOGGING_RESULT_TEXT
    })
    .description("Tests tool that emits log messages during execution")
}

/// `test_tool_with_progress` → progress 0, 50, 100 of 100, 50 ms apart (when the caller gave a
/// progress token), then the token as text.
fn test_tool_with_progress() -> ToolDef {
    ToolDef::new("test_tool_with_progress", |cx: RequestContext| async move {
        for (i, step) in [0u32, 50, 100].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(STEP).await;
            }
            let message = format!("Completed step {step} of 100");
            cx.progress(f64::from(step), Some(100.0), Some(&message));
        }
        match cx.progress_token() {
            Some(ProgressToken::String(s)) => s.clone(),
            Some(ProgressToken::Number(n)) => n.to_string(),
            None => "Progress test completed (no progress token was given)".to_owned(),
        }
    })
    .description("Tests tool that reports progress notifications")
}

/// `test_error_handling` → a tool execution error (`isError: true`), not a JSON-RPC error.
fn test_error_handling() -> ToolDef {
    ToolDef::new("test_error_handling", || async {
        CallToolResult::error_text(ERROR_TEXT)
    })
    .description("Tests error response handling")
}

// Arguments of `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM
    prompt: String,
}

/// `test_sampling {prompt}` → asks the client's LLM (`sampling/createMessage`, one user text
/// message, `maxTokens` 100) and returns `LLM response: <text>`.
fn test_sampling() -> ToolDef {
    ToolDef::new(
        "test_sampling",
        |cx: RequestContext, Args(a): Args<SamplingArgs>| async move {
            let params = CreateMessageParams::new(vec![SamplingMessage::user_text(a.prompt)], 100);
            match cx.sample(params).await {
                Ok(result) => {
                    let text = result.content.iter().find_map(|c| c.as_text()).unwrap_or("No response");
                    format!("LLM response: {text}")
                }
                Err(e) => format!("Sampling not supported or error: {e}"),
            }
        },
    )
    .description("Tests server-initiated sampling (LLM completion request)")
}

/// `User response: …` / `Elicitation completed: …`: the action and the content as compact JSON.
fn elicitation_summary(prefix: &str, result: &ElicitResult) -> String {
    let action = match serde_json::to_value(result.action) {
        Ok(Value::String(s)) => s,
        _ => format!("{:?}", result.action).to_lowercase(),
    };
    let content = Value::Object(result.content.clone().unwrap_or_default());
    format!("{prefix}: action={action}, content={content}")
}

// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user
    message: String,
}

/// `test_elicitation {message}` → asks the user (form mode: `username`, `email`) and returns
/// `User response: action=<action>, content=<JSON>`.
fn test_elicitation() -> ToolDef {
    ToolDef::new(
        "test_elicitation",
        |cx: RequestContext, Args(a): Args<ElicitationArgs>| async move {
            let schema = object(json!({
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                },
                "required": ["username", "email"]
            }));
            match cx
                .elicit(ElicitParams::form(a.message, ElicitationSchema(schema)))
                .await
            {
                Ok(result) => elicitation_summary("User response", &result),
                Err(e) => format!("Elicitation not supported or error: {e}"),
            }
        },
    )
    .description("Tests server-initiated elicitation (user input request)")
}

/// `test_elicitation_sep1034_defaults` → a form whose fields all carry defaults (SEP-1034).
fn test_elicitation_sep1034_defaults() -> ToolDef {
    ToolDef::new("test_elicitation_sep1034_defaults", |cx: RequestContext| async move {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active"
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true}
            },
            "required": []
        }));
        let params = ElicitParams::form(
            "Please review and update the form fields with defaults",
            ElicitationSchema(schema),
        );
        match cx.elicit(params).await {
            Ok(result) => elicitation_summary("Elicitation completed", &result),
            Err(e) => format!("Elicitation not supported or error: {e}"),
        }
    })
    .description("Tests elicitation with default values per SEP-1034")
}

/// `test_elicitation_sep1330_enums` → a form with every enum shape of SEP-1330 (untitled,
/// titled, legacy `enumNames`, and multi-select variants).
fn test_elicitation_sep1330_enums() -> ToolDef {
    ToolDef::new("test_elicitation_sep1330_enums", |cx: RequestContext| async move {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"]
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}
                    ]
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}
                        ]
                    }
                }
            },
            "required": []
        }));
        let params = ElicitParams::form("Please select options from the enum fields", ElicitationSchema(schema));
        match cx.elicit(params).await {
            Ok(result) => elicitation_summary("Elicitation completed", &result),
            Err(e) => format!("Elicitation not supported or error: {e}"),
        }
    })
    .description("Tests elicitation with enum schema improvements per SEP-1330")
}

/// `test_reconnection` (SEP-1699) → ends its response stream at once (on HTTP the client
/// resumes with `Last-Event-ID`), then a text result ~100 ms later.
fn test_reconnection() -> ToolDef {
    ToolDef::new("test_reconnection", |cx: RequestContext| async move {
        cx.close_response_stream();
        tokio::time::sleep(Duration::from_millis(100)).await;
        RECONNECTION_TEXT
    })
    .description(
        "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the stream \
         mid-call and send the result after client reconnects.",
    )
}

/// The verbatim input schema of `json_schema_2020_12_tool` (SEP-1613 features: `$schema`,
/// `$defs`, `$anchor`, `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`, `additionalProperties`).
fn json_schema_2020_12() -> JsonObject {
    object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }))
}

/// `json_schema_2020_12_tool` → echoes its arguments; its input schema is kept verbatim.
fn json_schema_2020_12_tool() -> ToolDef {
    ToolDef::new("json_schema_2020_12_tool", |RawArgs(args): RawArgs| async move {
        format!("JSON Schema 2020-12 tool called with: {}", Value::Object(args))
    })
    .input_schema(json_schema_2020_12())
    .description("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)")
}

// ---------------------------------------------------------------------------------------------
// Multi round-trip fixtures (2026-07-28). On the stateless wire each input call is answered
// from the retry's `inputResponses` (the request ends with `input_required` until it is); on a
// handshake-era session the same call is a server→client request.
// ---------------------------------------------------------------------------------------------

/// A form asking for one field of `kind` (`string`, `boolean`) named `field`.
pub(crate) fn one_field_form(message: &str, field: &str, kind: &str) -> ElicitParams {
    ElicitParams::form(
        message,
        ElicitationSchema(object(json!({
            "type": "object",
            "properties": { field: { "type": kind } },
            "required": [field]
        }))),
    )
}

/// The accepted value of `field` in an elicitation answer, as text.
pub(crate) fn field_text(result: &ElicitResult, field: &str) -> String {
    match result.content.as_ref().and_then(|c| c.get(field)) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!("(no {field}; action {:?})", result.action).to_lowercase(),
    }
}

fn sampled_text(result: &CreateMessageResult) -> String {
    result
        .content
        .iter()
        .find_map(|c| c.as_text())
        .unwrap_or("(no text)")
        .to_owned()
}

fn roots_text(result: &ListRootsResult) -> String {
    let uris: Vec<&str> = result.roots.iter().map(|r| r.uri.as_str()).collect();
    format!("Client roots: {}", uris.join(", "))
}

/// `test_missing_capability` → needs sampling; a client that did not declare it gets
/// MissingRequiredClientCapability (-32021) on the stateless wire.
fn test_missing_capability() -> ToolDef {
    ToolDef::new("test_missing_capability", |cx: RequestContext| async move {
        let params = CreateMessageParams::new(vec![SamplingMessage::user_text("Say hello")], 20);
        let result = cx.sample(params).await?;
        Ok::<_, mcpkit::Error>(format!("Sampled: {}", sampled_text(&result)))
    })
    .description("Requires the client's sampling capability (tests MissingRequiredClientCapability)")
}

/// `test_input_required_result_elicitation` → asks `user_name` ("What is your name?"), then
/// `Hello, <name>!`.
fn test_input_required_result_elicitation() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_elicitation",
        |cx: RequestContext| async move {
            let answer = cx
                .input(
                    Some("user_name"),
                    one_field_form("What is your name?", "name", "string"),
                )
                .await?;
            Ok::<_, mcpkit::Error>(format!("Hello, {}!", field_text(&answer, "name")))
        },
    )
    .description("Asks for the user's name through an input request, then greets them")
}

/// `test_input_required_result_sampling` → asks the client's LLM `capital_question`.
fn test_input_required_result_sampling() -> ToolDef {
    ToolDef::new("test_input_required_result_sampling", |cx: RequestContext| async move {
        let params = CreateMessageParams::new(vec![SamplingMessage::user_text("What is the capital of France?")], 100);
        let answer = cx.input(Some("capital_question"), params).await?;
        Ok::<_, mcpkit::Error>(format!("LLM response: {}", sampled_text(&answer)))
    })
    .description("Asks the client's LLM a question through an input request")
}

/// `test_input_required_result_list_roots` → asks for the client's roots (`client_roots`).
fn test_input_required_result_list_roots() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_list_roots",
        |cx: RequestContext| async move {
            let roots = cx.input(Some("client_roots"), ListRoots).await?;
            Ok::<_, mcpkit::Error>(roots_text(&roots))
        },
    )
    .description("Asks for the client's roots through an input request")
}

/// `test_input_required_result_request_state` → keeps a note of its own in `requestState`
/// across the rounds and asks `confirm`; the result says `state-ok` when the note came back.
fn test_input_required_result_request_state() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_request_state",
        |cx: RequestContext| async move {
            let note = cx.request_state();
            if note.is_none() {
                cx.set_request_state(json!({ "step": "confirm" }));
            }
            let answer = cx
                .input(Some("confirm"), one_field_form("Please confirm", "ok", "boolean"))
                .await?;
            let state = match note {
                Some(n) if n["step"] == "confirm" => "state-ok",
                _ => "state-missing",
            };
            Ok::<_, mcpkit::Error>(format!("Confirmed ok={}: {state}", field_text(&answer, "ok")))
        },
    )
    .description("Carries its own state across input rounds in requestState")
}

/// `test_input_required_result_multiple_inputs` → asks for a name, an LLM greeting and the
/// roots at once.
fn test_input_required_result_multiple_inputs() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_multiple_inputs",
        |cx: RequestContext| async move {
            let greeting = CreateMessageParams::new(vec![SamplingMessage::user_text("Write a short greeting")], 50);
            let answers = cx
                .inputs(vec![
                    (
                        "user_name".to_owned(),
                        InputRequest::Elicit(one_field_form("What is your name?", "name", "string")),
                    ),
                    ("greeting".to_owned(), InputRequest::Sample(greeting)),
                    ("client_roots".to_owned(), InputRequest::ListRoots),
                ])
                .await?;
            let parts: Vec<String> = answers
                .iter()
                .map(|a| match a {
                    InputResponse::Elicit(r) => format!("name={}", field_text(r, "name")),
                    InputResponse::Sample(r) => format!("greeting={}", sampled_text(r)),
                    InputResponse::ListRoots(r) => roots_text(r),
                })
                .collect();
            Ok::<_, mcpkit::Error>(parts.join("; "))
        },
    )
    .description("Asks for several inputs in one round")
}

/// `test_input_required_result_multi_round` → `step1` (name), then `step2` (favourite colour).
fn test_input_required_result_multi_round() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_multi_round",
        |cx: RequestContext| async move {
            let name = cx
                .input(
                    Some("step1"),
                    one_field_form("Step 1: What is your name?", "name", "string"),
                )
                .await?;
            let color = cx
                .input(
                    Some("step2"),
                    one_field_form("Step 2: What is your favorite color?", "color", "string"),
                )
                .await?;
            Ok::<_, mcpkit::Error>(format!(
                "{} likes {}",
                field_text(&name, "name"),
                field_text(&color, "color")
            ))
        },
    )
    .description("Asks for input over two rounds")
}

/// `test_input_required_result_tampered_state` → one input round; its `requestState` is
/// sealed, so an altered one is refused.
fn test_input_required_result_tampered_state() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_tampered_state",
        |cx: RequestContext| async move {
            let answer = cx
                .input(Some("confirm"), one_field_form("Please confirm", "ok", "boolean"))
                .await?;
            Ok::<_, mcpkit::Error>(format!("Confirmed ok={}", field_text(&answer, "ok")))
        },
    )
    .description("One input round whose requestState is integrity-protected")
}

/// `test_input_required_result_capabilities` → asks only for what the client declared.
fn test_input_required_result_capabilities() -> ToolDef {
    ToolDef::new(
        "test_input_required_result_capabilities",
        |cx: RequestContext| async move {
            let caps = cx.client_capabilities();
            let mut wanted = Vec::new();
            if caps.sampling.is_some() {
                let p = CreateMessageParams::new(vec![SamplingMessage::user_text("Say hello")], 20);
                wanted.push(("sampling_request".to_owned(), InputRequest::Sample(p)));
            }
            if caps.elicitation.is_some() {
                let form = one_field_form("What is your name?", "name", "string");
                wanted.push(("elicitation_request".to_owned(), InputRequest::Elicit(form)));
            }
            if caps.roots.is_some() {
                wanted.push(("roots_request".to_owned(), InputRequest::ListRoots));
            }
            let count = cx.inputs(wanted).await?.len();
            Ok::<_, mcpkit::Error>(format!("Received {count} input(s) for the declared capabilities"))
        },
    )
    .description("Asks only for the inputs the client's declared capabilities allow")
}

/// `test_streaming_elicitation` → reports progress, then asks for input: on the stateless wire
/// the question travels in the result, never as a request on the response stream.
fn test_streaming_elicitation() -> ToolDef {
    ToolDef::new("test_streaming_elicitation", |cx: RequestContext| async move {
        cx.progress(0.0, Some(1.0), Some("Preparing the question"));
        let _ = cx.log(LoggingLevel::Info, Some(LOGGER), "Asking for input");
        let answer = cx
            .input(
                Some("stream_input"),
                one_field_form("Please provide a value", "value", "string"),
            )
            .await?;
        Ok::<_, mcpkit::Error>(format!("Received: {}", field_text(&answer, "value")))
    })
    .description("Streams progress, then asks for input")
}

/// `test_logging_tool` → logs three messages; only a request that set a log level gets them.
fn test_logging_tool() -> ToolDef {
    ToolDef::new("test_logging_tool", |cx: RequestContext| async move {
        for message in LOG_MESSAGES {
            let _ = cx.log(LoggingLevel::Info, Some(LOGGER), message);
            tokio::time::sleep(STEP).await;
        }
        LOGGING_RESULT_TEXT
    })
    .description("Logs messages (sent only when the request asked for a log level)")
}

/// `test_trigger_tool_change` → switches `test_dynamic_tool` on, or off when it is on:
/// subscribers get `notifications/tools/list_changed`. The switch is shared by the instances of
/// a deployment (`--redis`), so the change holds wherever the client lists next.
fn test_trigger_tool_change() -> ToolDef {
    ToolDef::new("test_trigger_tool_change", |cx: RequestContext| async move {
        toggle(cx.server(), Dynamic::Tool).await
    })
    .description("Changes the tool list (adds or removes test_dynamic_tool)")
}

/// Declared on every instance, listed only while `test_trigger_tool_change` has it on.
fn test_dynamic_tool() -> ToolDef {
    ToolDef::new("test_dynamic_tool", || async { "Dynamic tool called" })
        .description("Added by test_trigger_tool_change")
        .switched_off()
}

/// `test_trigger_prompt_change` → switches `test_dynamic_prompt` on, or off when it is on.
fn test_trigger_prompt_change() -> ToolDef {
    ToolDef::new("test_trigger_prompt_change", |cx: RequestContext| async move {
        toggle(cx.server(), Dynamic::Prompt).await
    })
    .description("Changes the prompt list (adds or removes test_dynamic_prompt)")
}

/// Declared on every instance, listed only while `test_trigger_prompt_change` has it on.
fn test_dynamic_prompt() -> PromptDef {
    PromptDef::new("test_dynamic_prompt", || async { "Dynamic prompt" })
        .description("Added by test_trigger_prompt_change")
        .switched_off()
}

/// The switched items of the two trigger tools.
#[derive(Clone, Copy)]
enum Dynamic {
    Tool,
    Prompt,
}

/// Flip `item`'s switch as the deployment has it; the tool result says what happened (a
/// failing switch store is a tool error naming it).
async fn toggle(server: &Server, item: Dynamic) -> Result<String, mcpkit::server::SwitchError> {
    let name = match item {
        Dynamic::Tool => "test_dynamic_tool",
        Dynamic::Prompt => "test_dynamic_prompt",
    };
    let on = match item {
        Dynamic::Tool => !server.tool_enabled(name).await?,
        Dynamic::Prompt => !server.prompt_enabled(name).await?,
    };
    match item {
        Dynamic::Tool => server.set_tool_enabled(name, on).await?,
        Dynamic::Prompt => server.set_prompt_enabled(name, on).await?,
    };
    Ok(format!("{} {name}", if on { "Added" } else { "Removed" }))
}

/// `test_header_param {region, query}` → `region` is mirrored into the `Mcp-Param-Region`
/// header on the 2026-07-28 HTTP wire (`x-mcp-header`).
fn test_header_param() -> ToolDef {
    ToolDef::new("test_header_param", |RawArgs(args): RawArgs| async move {
        let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        format!("region={}, query={}", text("region"), text("query"))
    })
    .input_schema(object(json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
            "query": {"type": "string", "description": "What to run"}
        },
        "required": ["region", "query"]
    })))
    .description("Mirrors its region parameter into the Mcp-Param-Region header (x-mcp-header)")
}

/// `test_input_required_result_prompt` → asks `user_context`, then a prompt quoting it.
fn test_input_required_result_prompt() -> PromptDef {
    PromptDef::new("test_input_required_result_prompt", |cx: RequestContext| async move {
        let answer = cx
            .input(
                Some("user_context"),
                one_field_form("Please provide context", "context", "string"),
            )
            .await?;
        Ok::<_, ErrorObject>(GetPromptResult::new(vec![PromptMessage::user_text(format!(
            "Context: {}",
            field_text(&answer, "context")
        ))]))
    })
    .description("A prompt that asks for context through an input request")
}

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

/// `test://static-text`: fixed text.
fn static_text() -> ResourceDef {
    ResourceDef::text("test://static-text", "static-text", "text/plain", STATIC_TEXT)
        .title("Static Text Resource")
        .description("A static text resource for testing")
}

/// `test://static-binary`: the 1x1 PNG as a blob.
fn static_binary() -> ResourceDef {
    ResourceDef::blob("test://static-binary", "static-binary", "image/png", TEST_IMAGE_BASE64)
        .title("Static Binary Resource")
        .description("A static binary resource (image) for testing")
}

/// `test://watched-resource`: a text resource clients subscribe to.
fn watched_resource() -> ResourceDef {
    ResourceDef::text(
        "test://watched-resource",
        "watched-resource",
        "text/plain",
        WATCHED_TEXT,
    )
    .title("Watched Resource")
    .description("A resource that can be subscribed to for update notifications")
}

/// The text of `test://template/{id}/data`: `{"id":"<id>","templateTest":true,"data":"Data for ID: <id>"}`
/// (keys in this order; `id` JSON-escaped).
fn template_text(id: &str) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// The variables of `test://template/{id}/data`.
#[derive(Deserialize)]
struct TemplateVars {
    id: String,
}

/// Template `test://template/{id}/data` → JSON naming the id; `id` completes from a few samples.
fn template() -> Result<ResourceTemplateDef, mcpkit::server::uri_template::TemplateError> {
    Ok(ResourceTemplateDef::new(
        "test://template/{id}/data",
        "template",
        |Uri(uri): Uri, Args(v): Args<TemplateVars>| async move {
            ResourceContents::text(uri, Some("application/json"), template_text(&v.id))
        },
    )?
    .title("Resource Template")
    .description("A resource template with parameter substitution")
    .mime_type("application/json")
    .complete("id", from_list(["123", "456", "789"])))
}

// ---------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------

/// `test_simple_prompt` → one user text message.
fn test_simple_prompt() -> PromptDef {
    PromptDef::new("test_simple_prompt", || async {
        "This is a simple prompt for testing."
    })
    .title("Simple Test Prompt")
    .description("A simple prompt without arguments")
}

/// The arguments of `test_prompt_with_arguments`: the prompt's argument list is derived from it.
#[derive(Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

/// `test_prompt_with_arguments {arg1, arg2}` → one user message quoting both; `arg1` completes.
fn test_prompt_with_arguments() -> PromptDef {
    PromptDef::new("test_prompt_with_arguments", |Args(a): Args<TwoArguments>| async move {
        format!("Prompt with arguments: arg1='{}', arg2='{}'", a.arg1, a.arg2)
    })
    .title("Prompt With Arguments")
    .description("A prompt with required arguments")
    .complete("arg1", from_list(["test1", "test2", "test3", "testValue1"]))
}

/// `test_prompt_with_embedded_resource {resourceUri}` → an embedded text resource at that URI,
/// then a user text message.
fn test_prompt_with_embedded_resource() -> PromptDef {
    PromptDef::new("test_prompt_with_embedded_resource", |RawArgs(a): RawArgs| async move {
        let uri = a
            .get("resourceUri")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        GetPromptResult::new(vec![
            PromptMessage::new(
                Role::User,
                ContentBlock::resource(ResourceContents::text(
                    uri,
                    Some("text/plain"),
                    "Embedded resource content for testing.",
                )),
            ),
            PromptMessage::user_text("Please process the embedded resource above."),
        ])
    })
    .title("Prompt With Embedded Resource")
    .description("A prompt that includes an embedded resource")
    .argument("resourceUri", "URI of the resource to embed", true)
}

/// `test_prompt_with_image` → an image message (the 1x1 PNG), then a user text message.
fn test_prompt_with_image() -> PromptDef {
    PromptDef::new("test_prompt_with_image", || async {
        vec![
            PromptMessage::new(Role::User, ContentBlock::image(TEST_IMAGE_BASE64, "image/png")),
            PromptMessage::user_text("Please analyze the image above."),
        ]
    })
    .title("Prompt With Image")
    .description("A prompt that includes image content")
}
