//! [`ToolBox`]: a group of tools, prompts and resources registered in one call,
//! [`ServerBuilder::tools`]. `#[mcpkit::tools]` implements it for the type of an impl block.

use super::ServerBuilder;

/// A group of catalogue items registered together with [`ServerBuilder::tools`].
///
/// `#[mcpkit::tools]` implements it for the type of the impl block it is on, registering every
/// `#[tool]`, `#[prompt]` and `#[resource]` method. Implement it by hand to group definitions
/// written with the explicit API:
///
/// ```
/// use mcpkit::server::{ServerBuilder, ToolBox, ToolDef};
///
/// struct Clock;
///
/// impl ToolBox for Clock {
///     fn register(self, builder: ServerBuilder) -> ServerBuilder {
///         builder.tool(ToolDef::new("now", || async { "12:00".to_owned() }))
///     }
/// }
///
/// let server = mcpkit::Server::builder().tools(Clock).build();
/// # let _ = server;
/// ```
pub trait ToolBox {
    /// Add this group's items to `builder`.
    fn register(self, builder: ServerBuilder) -> ServerBuilder;
}

impl ServerBuilder {
    /// Register a group of tools, prompts and resources: a value of a `#[mcpkit::tools]` impl,
    /// or any [`ToolBox`].
    #[track_caller]
    pub fn tools(self, group: impl ToolBox) -> Self {
        group.register(self)
    }
}
