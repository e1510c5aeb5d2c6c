//! Wire and schema types for the Model Context Protocol, for every revision from 2024-11-05 to
//! 2026-07-28. No I/O and no async runtime: usable from proxies, tools and any runtime.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope, two-stage parsing with id salvage.
//! - [`version`]: [`ProtocolVersion`], ordered, with its [`Era`].
//! - [`schema`]: every type of the schema (tools, resources, prompts, sampling, elicitation, …).
//! - [`method`]: one descriptor type per method, for typed requests and routing.
//! - [`ext`]: the official extensions (identifiers, negotiation, their wire types and methods).
#![forbid(unsafe_code)]

pub mod ext;
pub mod headers;
pub mod jsonrpc;
pub mod method;
pub mod schema;
pub mod version;

pub use jsonrpc::{ErrorCode, ErrorObject, Message, MessageRef, RequestId};
pub use version::{Era, ProtocolVersion};

// Method descriptor traits, for `use mcpkit_types::Method`.
pub use method::{Method, NotificationMethod};
