//! The 2025-11-25 tool fixtures of the conformance suite's server leg, and `echo` and `add`.

use std::time::Duration;

use mcpkit::server::{Args, Json, RawArgs, RequestContext, ToolDef};
use mcpkit::types::schema::{
    CallToolResult, ContentBlock, CreateMessageParams, ElicitParams, ElicitResult, ElicitationSchema, JsonObject,
    LoggingLevel, ProgressToken, ResourceContents, SamplingMessage,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::*;

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
pub(super) fn echo() -> ToolDef {
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
pub(super) fn add() -> ToolDef {
    ToolDef::new(
        "add",
        |Args(a): Args<AddArgs>| async move { Json(Sum { sum: a.a + a.b }) },
    )
    .description("Adds two numbers and returns their sum as structured output")
}

/// `test_simple_text` → one text block.
pub(super) fn test_simple_text() -> ToolDef {
    ToolDef::new("test_simple_text", || async { SIMPLE_TEXT }).description("Tests simple text content response")
}

/// `test_image_content` → one image block (the 1x1 PNG).
pub(super) fn test_image_content() -> ToolDef {
    ToolDef::new("test_image_content", || async {
        ContentBlock::image(TEST_IMAGE_BASE64, "image/png")
    })
    .description("Tests image content response")
}

/// `test_audio_content` → one audio block (a tiny WAV, `audio/wav`).
pub(super) fn test_audio_content() -> ToolDef {
    ToolDef::new("test_audio_content", || async {
        ContentBlock::audio(TEST_AUDIO_BASE64, "audio/wav")
    })
    .description("Tests audio content response")
}

/// `test_embedded_resource` → one embedded text resource `test://embedded-resource`.
pub(super) fn test_embedded_resource() -> ToolDef {
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
pub(super) fn test_multiple_content_types() -> ToolDef {
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
pub(super) fn test_tool_with_logging() -> ToolDef {
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
pub(super) fn test_tool_with_progress() -> ToolDef {
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
pub(super) fn test_error_handling() -> ToolDef {
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
pub(super) fn test_sampling() -> ToolDef {
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
pub(super) fn elicitation_summary(prefix: &str, result: &ElicitResult) -> String {
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
pub(super) fn test_elicitation() -> ToolDef {
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
pub(super) fn test_elicitation_sep1034_defaults() -> ToolDef {
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
pub(super) fn test_elicitation_sep1330_enums() -> ToolDef {
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
pub(super) fn test_reconnection() -> ToolDef {
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
pub(super) fn json_schema_2020_12() -> JsonObject {
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
pub(super) fn json_schema_2020_12_tool() -> ToolDef {
    ToolDef::new("json_schema_2020_12_tool", |RawArgs(args): RawArgs| async move {
        format!("JSON Schema 2020-12 tool called with: {}", Value::Object(args))
    })
    .input_schema(json_schema_2020_12())
    .description("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)")
}
