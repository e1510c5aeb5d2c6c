//! The 2026-07-28 fixtures: input rounds (multi round-trip requests), list changes and the
//! header parameter. On the stateless wire each input call is answered from the retry's
//! `inputResponses`; on a handshake-era session the same call is a server→client request.

use mcpkit::server::{PromptDef, RawArgs, RequestContext, ToolDef};
use mcpkit::types::method::ListRoots;
use mcpkit::types::schema::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ElicitationSchema, GetPromptResult,
    InputRequest, InputResponse, ListRootsResult, LoggingLevel, PromptMessage, SamplingMessage,
};
use mcpkit::types::ErrorObject;
use mcpkit::Server;
use serde_json::{json, Value};

use super::*;

// ---------------------------------------------------------------------------------------------
// Multi round-trip fixtures (2026-07-28). On the stateless wire each input call is answered
// from the retry's `inputResponses` (the request ends with `input_required` until it is); on a
// handshake-era session the same call is a server→client request.
// ---------------------------------------------------------------------------------------------

/// A form asking for one field of `kind` (`string`, `boolean`) named `field`.
pub(super) fn one_field_form(message: &str, field: &str, kind: &str) -> ElicitParams {
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
pub(super) fn field_text(result: &ElicitResult, field: &str) -> String {
    match result.content.as_ref().and_then(|c| c.get(field)) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!("(no {field}; action {:?})", result.action).to_lowercase(),
    }
}

pub(super) fn sampled_text(result: &CreateMessageResult) -> String {
    result
        .content
        .iter()
        .find_map(|c| c.as_text())
        .unwrap_or("(no text)")
        .to_owned()
}

pub(super) fn roots_text(result: &ListRootsResult) -> String {
    let uris: Vec<&str> = result.roots.iter().map(|r| r.uri.as_str()).collect();
    format!("Client roots: {}", uris.join(", "))
}

/// `test_missing_capability` → needs sampling; a client that did not declare it gets
/// MissingRequiredClientCapability (-32021) on the stateless wire.
pub(super) fn test_missing_capability() -> ToolDef {
    ToolDef::new("test_missing_capability", |cx: RequestContext| async move {
        let params = CreateMessageParams::new(vec![SamplingMessage::user_text("Say hello")], 20);
        let result = cx.sample(params).await?;
        Ok::<_, mcpkit::Error>(format!("Sampled: {}", sampled_text(&result)))
    })
    .description("Requires the client's sampling capability (tests MissingRequiredClientCapability)")
}

/// `test_input_required_result_elicitation` → asks `user_name` ("What is your name?"), then
/// `Hello, <name>!`.
pub(super) fn test_input_required_result_elicitation() -> ToolDef {
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
pub(super) fn test_input_required_result_sampling() -> ToolDef {
    ToolDef::new("test_input_required_result_sampling", |cx: RequestContext| async move {
        let params = CreateMessageParams::new(vec![SamplingMessage::user_text("What is the capital of France?")], 100);
        let answer = cx.input(Some("capital_question"), params).await?;
        Ok::<_, mcpkit::Error>(format!("LLM response: {}", sampled_text(&answer)))
    })
    .description("Asks the client's LLM a question through an input request")
}

/// `test_input_required_result_list_roots` → asks for the client's roots (`client_roots`).
pub(super) fn test_input_required_result_list_roots() -> ToolDef {
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
pub(super) fn test_input_required_result_request_state() -> ToolDef {
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
pub(super) fn test_input_required_result_multiple_inputs() -> ToolDef {
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
pub(super) fn test_input_required_result_multi_round() -> ToolDef {
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
pub(super) fn test_input_required_result_tampered_state() -> ToolDef {
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
pub(super) fn test_input_required_result_capabilities() -> ToolDef {
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
pub(super) fn test_streaming_elicitation() -> ToolDef {
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
pub(super) fn test_logging_tool() -> ToolDef {
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
pub(super) fn test_trigger_tool_change() -> ToolDef {
    ToolDef::new("test_trigger_tool_change", |cx: RequestContext| async move {
        toggle(cx.server(), Dynamic::Tool).await
    })
    .description("Changes the tool list (adds or removes test_dynamic_tool)")
}

/// Declared on every instance, listed only while `test_trigger_tool_change` has it on.
pub(super) fn test_dynamic_tool() -> ToolDef {
    ToolDef::new("test_dynamic_tool", || async { "Dynamic tool called" })
        .description("Added by test_trigger_tool_change")
        .switched_off()
}

/// `test_trigger_prompt_change` → switches `test_dynamic_prompt` on, or off when it is on.
pub(super) fn test_trigger_prompt_change() -> ToolDef {
    ToolDef::new("test_trigger_prompt_change", |cx: RequestContext| async move {
        toggle(cx.server(), Dynamic::Prompt).await
    })
    .description("Changes the prompt list (adds or removes test_dynamic_prompt)")
}

/// Declared on every instance, listed only while `test_trigger_prompt_change` has it on.
pub(super) fn test_dynamic_prompt() -> PromptDef {
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
pub(super) fn test_header_param() -> ToolDef {
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
pub(super) fn test_input_required_result_prompt() -> PromptDef {
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
