//! What the code `mcpkit-macros` generates names (`mcpkit::__private`): serde for its derive,
//! and one check per parameter and return type, spanned on the user's code, so a type that does
//! not fit is reported where it is written, with a note saying what to write instead. Not an
//! API: hidden, and may change.
#![allow(missing_docs)]

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::server::{
    FromRequest, IntoPromptResult, IntoResourceResult, IntoToolResult, PromptRequest, ResourceHandler, ResourceRequest,
    ResourceTemplateDef, ToolCall,
};

/// serde, for the derive the macros put on a tool's argument struct.
pub use serde;
/// `json!`, for `meta = {…}` (the macro alone: re-exporting the crate would change how
/// compiler messages name its types).
pub use serde_json::json;

/// The object `meta = {…}` wrote (`json!` of braces is always an object).
pub fn meta(value: serde_json::Value) -> crate::types::schema::Meta {
    match value {
        serde_json::Value::Object(map) => map,
        _ => crate::types::schema::Meta::new(),
    }
}

/// A plain parameter of a `#[tool]`: a field of its input schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it has no JSON Schema or cannot be deserialized",
    label = "this parameter's type needs `Deserialize` and `JsonSchema`",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`; for a \
            type of another crate, take a type of your own or `serde_json::Value`"
)]
pub trait ToolArgument {}
impl<T: DeserializeOwned + JsonSchema> ToolArgument for T {}

/// What a container parameter of a `#[tool]` holds (`Tag` in `Vec<Tag>`, `Option<Tag>`,
/// `HashMap<String, Tag>`): checked on its own so the error names it, not the container.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be part of a tool argument: it has no JSON Schema or cannot be deserialized",
    label = "what this parameter holds needs `Deserialize` and `JsonSchema`",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`; for a \
            type of another crate, take a type of your own or `serde_json::Value`"
)]
pub trait ToolArgumentPart {}
impl<T: DeserializeOwned + JsonSchema> ToolArgumentPart for T {}

/// A plain parameter of a `#[prompt]`: an argument, which is a string on the wire.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt argument: prompt arguments are strings",
    label = "write `String` (required) or `Option<String>` (optional)",
    note = "parse the string in the function body if you need another type"
)]
pub trait PromptArgument {}
impl PromptArgument for String {}
impl PromptArgument for Option<String> {}

/// A plain parameter of a `#[resource]` template: a variable, matched as a string and parsed
/// as the parameter's type (a bad value is an invalid-params error naming the variable).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a template variable: a variable is a string, a number or a boolean",
    label = "write `String`, an integer or float type, or `bool` (or an `Option` of one)",
    note = "parse the string in the function body if you need another type"
)]
pub trait TemplateVariable {}
macro_rules! template_variables {
    ($($ty:ty),*) => {
        $(
            impl TemplateVariable for $ty {}
            impl TemplateVariable for Option<$ty> {}
        )*
    };
}
template_variables!(String, bool, i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, f32, f64);

pub fn tool_argument<T: ToolArgument>() {}
pub fn tool_argument_part<T: ToolArgumentPart>() {}
pub fn prompt_argument<T: PromptArgument>() {}
pub fn template_variable<T: TemplateVariable>() {}
pub fn tool_extractor<T: FromRequest<ToolCall>>() {}
pub fn prompt_extractor<T: FromRequest<PromptRequest>>() {}
pub fn resource_extractor<T: FromRequest<ResourceRequest>>() {}
pub fn tool_result<T: IntoToolResult>() {}
pub fn prompt_result<T: IntoPromptResult>() {}
pub fn resource_result<T: IntoResourceResult>() {}

/// A template the macro has already checked at compile time, with the same RFC 6570 parser,
/// so this cannot fail; if it ever did, it would be a bug in mcpkit, said as such.
pub fn template<H: ResourceHandler<T>, T>(uri: &str, name: &str, handler: H) -> ResourceTemplateDef {
    match ResourceTemplateDef::new(uri, name, handler) {
        Ok(def) => def,
        Err(e) => panic!("mcpkit bug: #[resource] accepted a template the server refuses: {e}"),
    }
}
