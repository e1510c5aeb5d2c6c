//! Every type of the MCP schema (spec: `schema`), current as of 2025-11-25, with optional fields
//! reaching forward to 2026-07-28 and [`compat`] adapters back to 2024-11-05.
//!
//! Wire conventions: camelCase members, `_meta` kept as an open map, every optional member
//! omitted when `None`, unknown members kept where the spec says an object is open. Unions are
//! tagged (`type`) or told apart by hand; never `#[serde(untagged)]`.

mod common;
mod compat;
mod completion;
mod content;
mod elicitation;
mod lifecycle;
mod logging;
mod notifications;
mod prompts;
mod resources;
mod roots;
mod sampling;
mod stateless;
mod tasks;
mod tools;

pub use common::*;
pub use compat::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use lifecycle::*;
pub use logging::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use roots::*;
pub use sampling::*;
pub use stateless::*;
pub use tasks::*;
pub use tools::*;
