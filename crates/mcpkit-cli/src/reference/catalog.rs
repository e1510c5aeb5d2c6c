//! The resources, the resource template and the prompts of the reference server.

use mcpkit::server::{from_list, Args, PromptDef, RawArgs, ResourceDef, ResourceTemplateDef, Uri};
use mcpkit::types::schema::{ContentBlock, GetPromptResult, PromptMessage, ResourceContents, Role};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::*;

// ---------------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------------

/// `test://static-text`: fixed text.
pub(super) fn static_text() -> ResourceDef {
    ResourceDef::text("test://static-text", "static-text", "text/plain", STATIC_TEXT)
        .title("Static Text Resource")
        .description("A static text resource for testing")
}

/// `test://static-binary`: the 1x1 PNG as a blob.
pub(super) fn static_binary() -> ResourceDef {
    ResourceDef::blob("test://static-binary", "static-binary", "image/png", TEST_IMAGE_BASE64)
        .title("Static Binary Resource")
        .description("A static binary resource (image) for testing")
}

/// `test://watched-resource`: a text resource clients subscribe to.
pub(super) fn watched_resource() -> ResourceDef {
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
pub(super) fn template_text(id: &str) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// The variables of `test://template/{id}/data`.
#[derive(Deserialize)]
struct TemplateVars {
    id: String,
}

/// Template `test://template/{id}/data` → JSON naming the id; `id` completes from a few samples.
pub(super) fn template() -> Result<ResourceTemplateDef, mcpkit::server::uri_template::TemplateError> {
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
pub(super) fn test_simple_prompt() -> PromptDef {
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
pub(super) fn test_prompt_with_arguments() -> PromptDef {
    PromptDef::new("test_prompt_with_arguments", |Args(a): Args<TwoArguments>| async move {
        format!("Prompt with arguments: arg1='{}', arg2='{}'", a.arg1, a.arg2)
    })
    .title("Prompt With Arguments")
    .description("A prompt with required arguments")
    .complete("arg1", from_list(["test1", "test2", "test3", "testValue1"]))
}

/// `test_prompt_with_embedded_resource {resourceUri}` → an embedded text resource at that URI,
/// then a user text message.
pub(super) fn test_prompt_with_embedded_resource() -> PromptDef {
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
pub(super) fn test_prompt_with_image() -> PromptDef {
    PromptDef::new("test_prompt_with_image", || async {
        vec![
            PromptMessage::new(Role::User, ContentBlock::image(TEST_IMAGE_BASE64, "image/png")),
            PromptMessage::user_text("Please analyze the image above."),
        ]
    })
    .title("Prompt With Image")
    .description("A prompt that includes image content")
}
